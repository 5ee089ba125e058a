"""The background of ``pagelens browser``: one daemon process per shell session, holding a
:class:`~pagelens.browser.session.BrowserSession` between the commands of an agent that runs
one shell command per step.

The daemon listens on a Unix socket only its user can reach (a directory of mode 0700 in
``$XDG_RUNTIME_DIR``, else the temporary directory; the socket 0600), serves one command at a
time, and ends after ``close`` or its idle timeout, closing its browser and removing its files.
After every command it keeps the session's cookies, storage and address in a state file beside
the socket (0600): a browser that died is restarted from it, and so is a daemon that was killed
(the next command notices the dead socket).

The protocol is one JSON line each way: ``{"op": NAME, "args": {...}}`` where NAME is one of
:data:`~pagelens.browser.operations.OPERATIONS` or ``status``, ``close``, ``state_save``,
``state_load``; the answer ``{"ok": true, "text": ..., "picture": base64 | null, "note": ...}``
or ``{"ok": false, "error": ..., "kind": ...}``.

    python -m pagelens.browser.daemon NAME OPTIONS_JSON   # started by `pagelens browser open`
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pagelens._core import count_tokens
from pagelens._io import write_atomically
from pagelens.browser.config import BrowserConfig
from pagelens.browser.operations import OPERATIONS, Picture
from pagelens.browser.session import BrowserSession, SessionError, SessionOptions, Words
from pagelens.browser.tools import TOOL_NAMES
from pagelens.errors import PagelensError, one_line
from pagelens.serving import SessionFilesError, session_files, session_folder

# How answers name the shell's commands.
SHELL_WORDS = Words(
    open="pagelens browser open",
    snapshot="pagelens browser snapshot",
    dialog="pagelens browser dialog accept|dismiss",
    upload="pagelens browser upload FILE...",
    allow_file="--allow-file DIR",
    view="pagelens browser press End (or PageDown, or scroll down)",
    part="pagelens browser snapshot --part N",
    find="pagelens browser snapshot --find TEXT",
)
IDLE_TIMEOUT_S = 30 * 60.0
_OPS = {fn.__name__: fn for fn in OPERATIONS}
# Operations that name an element: refused after a restart (the new browser's ids are new).
_TAKES_REF = ("ref", "target", "startRef", "endRef", "fields")
_MAX_REQUEST = 64 << 20


def socket_path(name: str) -> Path:
    return session_files(name)[0]


def state_path(name: str) -> Path:
    return session_files(name)[1]


def options_from_json(text: str, name: str) -> SessionOptions:
    """The options the shell sent; no output directory: the session's private folder."""
    data = json.loads(text)
    return SessionOptions(
        allowed=tuple(data["allowed"]),
        allow_file=tuple(Path(p) for p in data["allow_file"]),
        output_dir=Path(data["output_dir"]) if data.get("output_dir") else session_folder(name),
        max_tokens=int(data["max_tokens"]),
        snapshot_mode=data["snapshot_mode"],
        caps=frozenset(data["caps"]),
        headed=bool(data["headed"]),
        idle_timeout_s=float(data["idle_timeout_s"]),
        settle_ms=float(data["settle_ms"]),
        words=SHELL_WORDS,
    )


class Daemon:
    """One shell session's browser, served on its socket."""

    def __init__(self, name: str, options: SessionOptions, restore: bool = False) -> None:
        self.name = name
        self.options = replace(options, words=SHELL_WORDS)
        self.session = BrowserSession(self.options)
        self.lock = asyncio.Lock()
        self.active = asyncio.Event()  # set by every command: the idle timer starts again
        self.stopping = asyncio.Event()
        self.restore = restore
        self.restarted = False  # ids of the browser before a restart must not be used

    # -- state -------------------------------------------------------------------------------

    async def _keep_state(self) -> None:
        env = self.session.env
        if env is None or self.session.last is None or not env.alive:
            return
        with contextlib.suppress(Exception):  # a page mid-navigation: the last state stays
            state = await env.context.storage_state()
            data = {"url": env.page.url, "state": state}
            write_atomically(state_path(self.name), json.dumps(data), private=True)

    async def _restart(self, why: str) -> str:
        """A new browser from the kept state at the kept address; says so."""
        kept = state_path(self.name)
        try:
            data = json.loads(kept.read_text())
        except (OSError, ValueError):
            data = None
        await self.session.close()
        self.session = BrowserSession(self.options)
        self.restarted = True
        if not data or not data.get("url"):
            return f"{why}; nothing was kept to restart it from: open a page"
        await self.session.load_state(data.get("state"), data["url"])
        return (
            f"{why}; it was restarted with this session's cookies and storage at {data['url']}. "
            "Its ids are new: take a snapshot before acting on an element"
        )

    # -- serving -----------------------------------------------------------------------------

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            request = json.loads(line) if line else None
            if not isinstance(request, dict):
                raise SessionError("a request is one JSON object on a line", "usage")
            async with self.lock:
                self.active.set()
                answer = await self.dispatch(str(request.get("op")), request.get("args") or {})
        except SessionError as e:
            answer = {"ok": False, "error": str(e), "kind": e.kind}
        except (PagelensError, ValueError) as e:
            kind = getattr(e, "kind", "action")
            answer = {"ok": False, "error": str(e), "kind": kind if isinstance(kind, str) else "action"}
        except Exception as e:  # the browser went away, or a bug: one line, the daemon stays
            answer = {"ok": False, "error": one_line(e), "kind": "browser"}
        with contextlib.suppress(ConnectionError):
            writer.write(json.dumps(answer).encode() + b"\n")
            await writer.drain()
            writer.close()

    async def dispatch(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        note = None
        if self.restore:
            self.restore = False
            note = await self._restart("the session's daemon had stopped (killed?)")
        elif self.session.env is not None and self.session.last is not None and not self.session.env.alive:
            note = await self._restart("the session's browser had stopped")
        if op == "close":
            await self.session.close()
            self.stopping.set()
            return {"ok": True, "text": f"closed the session {self.name!r}"}
        if op == "status":
            last = self.session.last
            return {"ok": True, "text": "", "url": last.url if last else None, "title": last.title if last else None}
        if op == "state_save":
            state = await self.session.save_state()
            return {"ok": True, "text": "", "state": state}
        if op == "state_load":
            text = await self.session.load_state(args.get("state"), args.get("url"))
            self.restarted = False
            await self._keep_state()
            return {"ok": True, "text": text, "note": note}
        fn = _OPS.get(op)
        capability = TOOL_NAMES[op].capability if fn is not None else None
        if fn is None or (capability is not None and capability not in self.options.caps):
            raise SessionError(f"no operation {op!r}", "usage")
        if self.restarted and any(args.get(k) is not None for k in _TAKES_REF):
            raise SessionError(
                (note + ". " if note else "")
                + "the browser was restarted since the last snapshot, so its ids are new: take a snapshot first",
                "unknown_id",
            )
        if op in ("browser_navigate", "browser_snapshot", "browser_observe"):
            self.restarted = False
        result = await fn(self.session, **args)
        await self._keep_state()
        if isinstance(result, Picture):
            return {"ok": True, "text": "", "picture": base64.b64encode(result.data).decode(), "note": note}
        return {"ok": True, "text": result, "note": note}

    async def serve(self, ready: int | None) -> None:
        # The tokenizer every answer counts with loads its tables on first use (~20 ms): in a
        # thread while the first command waits on the browser's start, not after it.
        warm = asyncio.ensure_future(asyncio.to_thread(count_tokens, "warm", BrowserConfig().tokenizer))
        path = socket_path(self.name)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        old = os.umask(0o177)  # the socket is created 0600
        try:
            server = await asyncio.start_unix_server(self.handle, path=str(path), limit=_MAX_REQUEST)
        finally:
            os.umask(old)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.stopping.set)
        if ready is not None:
            os.write(ready, b"ready\n")
            os.close(ready)
        try:
            async with server:
                while not self.stopping.is_set():
                    self.active.clear()
                    stop = asyncio.ensure_future(self.stopping.wait())
                    busy = asyncio.ensure_future(self.active.wait())
                    done, _ = await asyncio.wait(
                        {stop, busy}, timeout=self.options.idle_timeout_s, return_when=asyncio.FIRST_COMPLETED
                    )
                    stop.cancel()
                    busy.cancel()
                    if not done and not self.lock.locked():
                        break  # idle past the timeout
                    if not done:
                        await self.lock.acquire()  # a command runs: wait for it, then time again
                        self.lock.release()
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            with contextlib.suppress(Exception):  # only a warm-up: an answer counts again itself
                await warm
            await self.session.close()
            # Closed, idle past its time, or stopped by a signal: the session is over, nothing is
            # kept (only a daemon killed outright leaves its state, for the next command).
            with contextlib.suppress(FileNotFoundError):
                state_path(self.name).unlink()
            # The session's private files (a logged-in page's snapshots, its downloads) go with it;
            # a folder the user named stays theirs.
            if self.options.output_dir == session_folder(self.name):
                shutil.rmtree(self.options.output_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    name, options_json = args[0], args[1]
    restore = "--restore" in args
    ready = int(os.environ.pop("PAGELENS_READY_FD", "-1"))
    session_files(name)  # a name that cannot be one is refused before anything starts
    try:
        daemon = Daemon(name, options_from_json(options_json, name), restore=restore)
    except SessionFilesError as e:  # its folder is not the user's alone: said, nothing started
        print(f"pagelens browser daemon {name}: {e}", file=sys.stderr)
        return 1
    started = time.monotonic()
    try:
        asyncio.run(daemon.serve(ready if ready >= 0 else None))
    except Exception as e:  # noqa: BLE001 (the last word of a daemon: its log line)
        print(
            f"pagelens browser daemon {name}: {type(e).__name__}: {e} after {time.monotonic() - started:.0f} s",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
