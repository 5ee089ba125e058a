"""The background of ``pagelens browser``: one daemon process per user (and install) serving
every shell session, each a :class:`~pagelens.browser.session.BrowserSession` in a browser
context of shared browsers (:class:`~pagelens.browser.pool.BrowserPool`), held between the
commands of agents that run one shell command per step.

Each session listens on a Unix socket of its own that only its user can reach (a directory of
mode 0700 in ``$XDG_RUNTIME_DIR``, else the temporary directory; the socket 0600), serves one
command at a time, and ends after ``close`` or its idle timeout, closing its context and
removing its files; the daemon ends with its last session. After every command a session keeps
its cookies, storage, address and options in a state file beside its socket (0600): a browser
that died is restarted from it, and so is a session whose daemon was killed (its next command
notices the dead socket).

A command that finds no session asks the daemon's own socket (``.KEY.sock``, KEY a hash of the
interpreter, the package and the environment the sessions read — ``PAGELENS_CHROMIUM`` —, so
two installs never serve each other's sessions, nor one daemon two Chromiums) to start it,
or starts the daemon; ``.KEY.lock`` (``flock``) makes that one step: no two daemons
start, and a daemon ends only when no command is starting a session in it.

The protocol is one JSON line each way: ``{"op": NAME, "args": {...}}`` where NAME is one of
:data:`~pagelens.browser.operations.OPERATIONS` or ``status``, ``close``, ``state_save``,
``state_load``; the answer ``{"ok": true, "text": ..., "picture": base64 | null, "note": ...}``
or ``{"ok": false, "error": ..., "kind": ...}``. The daemon's socket takes
``{"op": "start", "name": NAME, "options": {...}, "restore": bool}`` and answers once the
session's socket listens.

    python -m pagelens.browser.daemon NAME OPTIONS_JSON [--restore]   # by `pagelens browser open`
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pagelens._core import count_tokens
from pagelens._io import write_atomically
from pagelens.browser._util import quietly
from pagelens.browser.config import BrowserConfig
from pagelens.browser.launch import LaunchOptions
from pagelens.browser.operations import OPERATIONS, Picture
from pagelens.browser.pool import BrowserPool
from pagelens.browser.session import BrowserSession, SessionError, SessionOptions, Words
from pagelens.browser.tools import TOOL_NAMES
from pagelens.errors import PagelensError, one_line
from pagelens.serving import SessionFilesError, daemon_files, session_files, session_folder

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


def options_from(data: dict[str, Any], name: str) -> SessionOptions:
    """The options the shell sent; no output directory: the session's private folder."""
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


def _kept(name: str) -> dict[str, Any] | None:
    """What a session kept (address, cookies and storage, options), if anything readable."""
    try:
        data = json.loads(state_path(name).read_text())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


class ShellSession:
    """One shell session, served on its socket: its browser session (a context of the daemon's
    browsers), its idle time, its kept state."""

    def __init__(self, name: str, sent: dict[str, Any], pool_for: Callable[[bool], BrowserPool], restore: bool) -> None:
        self.name = name
        kept = _kept(name) if restore else None
        options = None
        if kept is not None and isinstance(kept.get("options"), dict):
            # A session restarted after its daemon was killed keeps the options it was opened
            # with (its allow-list, its folders), not those of the command that noticed.
            with contextlib.suppress(KeyError, TypeError, ValueError):
                options, sent = options_from(kept["options"], name), kept["options"]
        self.sent = sent
        self.options = options if options is not None else options_from(sent, name)
        # Files to upload come from the folder the session was opened in (as a daemon of its
        # own had it for its working directory).
        self.cwd = Path(sent["cwd"]) if isinstance(sent.get("cwd"), str) else None
        self.pool = pool_for(self.options.headed)
        self.session = self._new_session()
        self.lock = asyncio.Lock()
        self.active = asyncio.Event()  # set by every command: the idle timer starts again
        self.stopping = asyncio.Event()
        self.ended = asyncio.Event()  # its socket and files gone: the name can be opened again
        self.ending = False
        self.restore = restore
        self.restarted = False  # ids of the browser before a restart must not be used
        self.server: asyncio.Server | None = None

    def _new_session(self) -> BrowserSession:
        session = BrowserSession(self.options, self.pool)
        if self.cwd is not None:
            session.file_roots = (self.cwd,)
        return session

    # -- state -------------------------------------------------------------------------------

    async def _keep_state(self) -> None:
        env = self.session.env
        if env is None or self.session.last is None or not env.alive:
            return
        with contextlib.suppress(Exception):  # a page mid-navigation: the last state stays
            state = await env.context.storage_state()
            data = {"url": env.page.url, "state": state, "options": self.sent}
            write_atomically(state_path(self.name), json.dumps(data), private=True)

    async def _restart(self, why: str) -> str:
        """A new browser context from the kept state at the kept address; says so."""
        data = _kept(self.name)
        await self.session.close()
        self.session = self._new_session()
        self.restarted = True
        if not data or not isinstance(data.get("url"), str) or not data["url"]:
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
            # The whole of it (a browser's own logs, a trace) in the daemon's log, which the
            # line names.
            answer = {"ok": False, "error": f"{one_line(e)} (in full in {daemon_files()[2]})", "kind": "browser"}
            print(f"pagelens browser daemon, session {self.name}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        await _reply(writer, answer)

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

    async def listen(self) -> None:
        """Its socket made (0600), taking commands from now on."""
        self.server = await _listen(self.handle, socket_path(self.name))

    async def run(self) -> None:
        """Serves until ``close``, the idle timeout or the daemon's end; then the session is
        over and nothing of it is kept (only a daemon killed outright leaves a state, for the
        next command)."""
        assert self.server is not None  # listen() came first
        try:
            async with self.server:
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
            self.ending = True
            with contextlib.suppress(FileNotFoundError):
                socket_path(self.name).unlink()
            await quietly(self.session.close())
            with contextlib.suppress(FileNotFoundError):
                state_path(self.name).unlink()
            # The session's private files (a logged-in page's snapshots, its downloads) go with it;
            # a folder the user named stays theirs.
            if self.options.output_dir == session_folder(self.name):
                shutil.rmtree(self.options.output_dir, ignore_errors=True)
            self.ended.set()


async def _reply(writer: asyncio.StreamWriter, answer: dict[str, Any]) -> None:
    """One JSON line, then the connection closed (a client gone meanwhile hears nothing)."""
    with contextlib.suppress(ConnectionError):
        writer.write(json.dumps(answer).encode() + b"\n")
        await writer.drain()
        writer.close()


async def _listen(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]], path: Path
) -> asyncio.Server:
    """A Unix socket at ``path`` (0600; one left there is replaced) served by ``handle``."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    old = os.umask(0o177)  # the socket is created 0600
    try:
        return await asyncio.start_unix_server(handle, path=str(path), limit=_MAX_REQUEST)
    finally:
        os.umask(old)


class Daemon:
    """Every shell session of this user (and install), each a context of shared browsers: one
    pool for headless sessions, one for headed ones. It ends with its last session."""

    def __init__(self) -> None:
        self.sessions: dict[str, ShellSession] = {}
        self.pools: dict[bool, BrowserPool] = {}
        self.emptied = asyncio.Event()  # set when the last session ends
        self._serving: set[asyncio.Task[None]] = set()

    def pool_for(self, headed: bool) -> BrowserPool:
        pool = self.pools.get(headed)
        if pool is None:
            # A spare browser only once a browser's contexts are all leased: a shell user opens
            # sessions one by one, and the first waits for its launch anyway.
            pool = self.pools[headed] = BrowserPool(LaunchOptions(headless=not headed), ready=1)
        return pool

    async def start(self, name: str, sent: dict[str, Any], restore: bool) -> None:
        """Session ``name`` served (started unless it already is): returns once its socket
        listens. One still ending (closed, idle) is let end first."""
        existing = self.sessions.get(name)
        if existing is not None and not existing.ending:
            return
        if existing is not None:
            await existing.ended.wait()
            return await self.start(name, sent, restore)
        session = ShellSession(name, sent, self.pool_for, restore)
        await session.listen()
        self.sessions[name] = session
        self.emptied.clear()
        task = asyncio.ensure_future(self._serve(session))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    async def _serve(self, session: ShellSession) -> None:
        try:
            await session.run()
        finally:
            if self.sessions.get(session.name) is session:
                del self.sessions[session.name]
            if not self.sessions:
                self.emptied.set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The daemon's own socket: ``start`` a session."""
        try:
            line = await reader.readline()
            request = json.loads(line) if line else None
            if (
                not isinstance(request, dict)
                or request.get("op") != "start"
                or not isinstance(request.get("options"), dict)
            ):
                raise SessionError('the daemon takes {"op": "start", "name": ..., "options": {...}}', "usage")
            name = str(request.get("name"))
            session_files(name)  # a name that cannot be one is refused
            await self.start(name, request["options"], bool(request.get("restore")))
            answer: dict[str, Any] = {"ok": True}
        except (SessionError, SessionFilesError) as e:
            answer = {"ok": False, "error": str(e), "kind": e.kind}
        except Exception as e:  # options of no shape, a socket that cannot be made: said, the daemon stays
            answer = {"ok": False, "error": one_line(e), "kind": "browser"}
        await _reply(writer, answer)

    def stop(self) -> None:
        for session in list(self.sessions.values()):
            session.stopping.set()

    async def serve(self, first: tuple[str, dict[str, Any], bool], ready: int | None) -> None:
        # The tokenizer every answer counts with loads its tables on first use (~20 ms): in a
        # thread while the first command waits on the browser's start, not after it.
        warm = asyncio.ensure_future(asyncio.to_thread(count_tokens, "warm", BrowserConfig().tokenizer))
        path, lock, _ = daemon_files()
        try:
            await self.start(*first)
            control = await _listen(self.handle, path)
            ours = path.stat().st_ino
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.add_signal_handler(sig, self.stop)
            # Where relative paths would be read: none are (the shell sends them whole); a
            # daemon keeps no user's folder busy.
            os.chdir(path.parent)
            if ready is not None:
                os.write(ready, b"ready\n")
                os.close(ready)
            while True:
                await self.emptied.wait()
                self.emptied.clear()
                if await self._may_end(control, path, ours, lock):
                    break
        finally:
            self.stop()
            if self._serving:
                await asyncio.wait(set(self._serving))
            for pool in self.pools.values():
                await quietly(pool.close())
            with contextlib.suppress(Exception):  # only a warm-up: an answer counts again itself
                await warm

    async def _may_end(self, control: asyncio.Server, path: Path, ours: int, lock: Path) -> bool:
        """Whether no session is left once no command is starting one (the lock taken: a
        command starting a session holds it until that session listens); if so the daemon's
        socket is gone, and the next command starts a new daemon."""
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
            if self.sessions:
                return False
            control.close()
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_ino == ours:
                    path.unlink()
            return True
        finally:
            os.close(fd)  # the lock with it


def main(argv: list[str] | None = None) -> int:
    """Starts the daemon with its first session (the one a command asked for)."""
    args = sys.argv[1:] if argv is None else argv
    name, options_json = args[0], args[1]
    restore = "--restore" in args
    ready = int(os.environ.pop("PAGELENS_READY_FD", "-1"))
    try:  # a name that cannot be one, a folder not the user's alone: said, nothing started
        session_files(name)
        sent = json.loads(options_json)
        options_from(sent, name)
    except (SessionFilesError, ValueError, KeyError, TypeError) as e:
        print(f"pagelens browser daemon {name}: {one_line(e)}", file=sys.stderr)
        return 1
    started = time.monotonic()
    try:
        asyncio.run(Daemon().serve((name, sent, restore), ready if ready >= 0 else None))
    except Exception as e:  # noqa: BLE001 (the last word of a daemon: its log line)
        print(
            f"pagelens browser daemon {name}: {type(e).__name__}: {e} after {time.monotonic() - started:.0f} s",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
