"""``browser``: a browser a shell agent drives one command at a time.

``pagelens browser open URL`` starts a background daemon for the session (see
:mod:`pagelens.browser.daemon`); every later command of the session is a short client that
sends its request over the session's socket and prints the answer: what the command did and
what changed on the page. This module imports nothing heavy at load: a command's latency is
the daemon's work plus a Python start-up.

Exit codes: 0 done; 2 a bad command line; 3 no open session (or no page yet); 4 an unknown or
stale id; 5 a host or file off the allow-list; 6 a page that could not be opened; 7 an action
that could not be carried out; 8 the browser or its daemon failed; 9 a dialog waits for an
answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from pagelens.cli.types import host_entry, non_negative_float, positive_float, positive_int
from pagelens.errors import PagelensError, one_line
from pagelens.serving import SessionFilesError, runtime_dir, session_files, storage_state_problem
from pagelens.settle import AFTER_ACTION_MS, SETTLE_MS_HELP

ENV_SESSION = "PAGELENS_SESSION"
EXIT_CODES = {
    "usage": 2,
    "no_session": 3,
    "no_page": 3,
    "unknown_id": 4,
    "refused": 5,
    "navigation": 6,
    "action": 7,
    "browser": 8,
    "modal": 9,
}
# How long a command waits for its daemon's answer (a page may take its navigation timeout).
ANSWER_TIMEOUT_S = 300.0
# A saved state is cookies and storage: past this size a file is something else.
_STATE_MOST_BYTES = 32 << 20
START_TIMEOUT_S = 60.0


class ShellError(PagelensError):
    """A shell command that could not be done; ``kind`` picks its exit code (EXIT_CODES)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


GUIDE = """\
# Driving a browser with `pagelens browser`

A real Chromium stays open between your commands (one per session). The loop:

1. `pagelens browser open URL` opens the page and prints it as text.
2. Read the page. Every element you can act on has an id in brackets: `button [12] 'Save'`,
   `textbox [7] 'Search'`, `link [31] 'Pricing'`. Tables and lists are printed as Markdown.
3. Act by id: `pagelens browser click 12`, `pagelens browser type 7 "blue shoes" --submit`,
   `pagelens browser select 9 "Express"`, `pagelens browser press Enter`, `pagelens browser hover 4`,
   `pagelens browser scroll down`, `pagelens browser back`. A date or time field takes its value
   as `2025-03-04`, `17:30` (its line says `Date`, `InputTime`). A rich-text editor reads
   `clickable [9] value: '...'`: `type 9 "text"` replaces its text.
4. Each action prints what it did and **only what changed** on the page: the changed lines
   (`+ `) under the lines that place them, and a line of what went away. An element that was
   not there before is marked `*[id]` (a menu or a dialog the action opened). A new page is
   printed whole.
5. Repeat until the task is done. `pagelens browser close` ends the session.

Reading a long page: `pagelens browser snapshot --find "price"` prints the lines that match, each
with the path of its ancestors; `snapshot --subtree 31` prints one element's part;
`snapshot --interactive` only the lines you can act on; `snapshot --max-tokens 2000` a budget.

Ids stay with their element while it is on the page. An id that names nothing (the page
changed) exits with code 4: take a new `snapshot`. Other exit codes: 2 a command written
wrong (`--help` shows how), 3 no open session (run `open`), 5 a host that is not allowed, 6 a
page that could not be opened, 7 an action that failed (the message says why), 8 the browser
failed (the next command restarts it), 9 a dialog is open (`pagelens browser dialog accept` or
`dismiss`).

More: `wait TEXT` (or `--gone TEXT`, `--seconds S`), `tabs`, `tabs new URL`, `tabs select N`,
`screenshot FILE --ids`, `upload FILE...` (after clicking a file input), `state save FILE` /
`state load FILE` (cookies and storage), `--session NAME` for a second browser, `--json` for
machine-readable output. A file the page downloads (and a snapshot over the budget) is saved in
the session's own folder — its user's alone, removed by `close` — or in `open --output-dir DIR`,
which stays; the answer says where (`### Events`). `### Notes` says what
pagelens did that you did not ask (a page script that never returned, stopped).
"""


def _paths(name: str) -> tuple[Path, Path]:
    try:
        return session_files(name)
    except SessionFilesError as e:
        raise ShellError(str(e), e.kind) from None


def _runtime_dir() -> Path:
    try:
        return runtime_dir()
    except SessionFilesError as e:
        raise ShellError(str(e), e.kind) from None


# -- talking to the daemon ------------------------------------------------------------------


def _ask(sock: Path, request: dict[str, Any], timeout: float = ANSWER_TIMEOUT_S) -> dict[str, Any]:
    """One request, one answer; OSError when nothing listens."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(sock))
        chunks = []
        try:
            conn.sendall(json.dumps(request).encode() + b"\n")
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        except (ConnectionResetError, BrokenPipeError):
            # It took the connection and died (killed, or out of memory) before answering: whether
            # the command was carried out is unknown, so it is not sent again.
            chunks = []
    data = b"".join(chunks)
    if not data:
        raise ShellError(
            "the session's daemon ended without answering, so whether this was done is unknown; "
            "the next command restarts it (see `pagelens browser sessions`)",
            "browser",
        )
    answer = json.loads(data)
    if not isinstance(answer, dict):
        raise ShellError("the session's daemon answered something that is not an answer", "browser")
    return answer


def _start_daemon(name: str, options: dict[str, Any], restore: bool = False) -> None:
    """Starts the session's daemon, in a session of its own (it outlives this command), and
    returns once it listens (it says so on a pipe)."""
    import subprocess

    read, write = os.pipe()
    env = {**os.environ, "PAGELENS_READY_FD": str(write)}
    args = [sys.executable, "-m", "pagelens.browser.daemon", name, json.dumps(options)]
    if restore:
        args.append("--restore")
    sock, _ = _paths(name)
    log = sock.with_suffix(".log")
    with open(log, "ab") as err:
        os.chmod(log, 0o600)
        proc = subprocess.Popen(  # noqa: S603 (our own interpreter and module)
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            pass_fds=(write,),
            env=env,
            start_new_session=True,
        )
    os.close(write)
    with os.fdopen(read, "rb") as ready:
        import select

        readable, _, _ = select.select([ready], [], [], START_TIMEOUT_S)
        said = ready.readline() if readable else b""
    if said.strip() != b"ready":
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
        raise ShellError(f"the session's daemon did not start{': ' + tail[0] if tail else ''}", "browser")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """The daemon's session options (pagelens.browser.session.SessionOptions, as JSON); no
    output directory named: the session's own private folder (see ``session_folder``)."""
    out = str(Path(args.output_dir).resolve()) if getattr(args, "output_dir", None) else None
    return {
        "allowed": list(getattr(args, "allow_host", []) or []),
        "allow_file": [str(Path(d).resolve()) for d in getattr(args, "allow_file", []) or []],
        "output_dir": out,
        "max_tokens": 6000,
        "snapshot_mode": "incremental",
        "caps": [],
        "headed": bool(getattr(args, "headed", False)),
        "idle_timeout_s": float(getattr(args, "idle_timeout", 1800)),
        "settle_ms": float(getattr(args, "settle_ms", AFTER_ACTION_MS)),
    }


def _call(args: argparse.Namespace, op: str, arguments: dict[str, Any], *, starts: bool = False) -> dict[str, Any]:
    """Sends one operation to the session's daemon (starting it for ``starts`` commands, and
    restarting a killed one from its kept state)."""
    sock, state = _paths(args.session)
    try:
        return answered(_ask(sock, {"op": op, "args": arguments}))
    except (FileNotFoundError, ConnectionRefusedError):
        pass
    # No daemon answers. One that was killed left its socket and state: restart it from them.
    killed = sock.exists() and state.exists()
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    if not (starts or killed):
        raise ShellError(
            f"no open session {args.session!r}: start one with `pagelens browser open URL"
            + (f" --session {args.session}`" if args.session != "default" else "`"),
            "no_session",
        )
    _start_daemon(args.session, _options(args), restore=killed and not starts)
    return answered(_ask(sock, {"op": op, "args": arguments}))


# -- output ---------------------------------------------------------------------------------


def _sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    title, lines = "result", list[str]()
    for line in text.split("\n"):
        if line.startswith("### "):
            if lines:
                out[title] = "\n".join(lines)
            title, lines = line[4:].split(" (")[0].strip().lower(), []
        else:
            lines.append(line)
    if lines:
        out[title] = "\n".join(lines)
    return out


def _print(args: argparse.Namespace, answer: dict[str, Any], text: str | None = None) -> None:
    text = answer.get("text", "") if text is None else text
    note = answer.get("note")
    if args.json:
        payload = {"ok": True, "command": args.browser_command, **({"note": note} if note else {})}
        payload.update(_sections(text) if text else {})
        for key in ("url", "title", "path", "sessions"):
            if key in answer:
                payload[key] = answer[key]
        print(json.dumps(payload, ensure_ascii=False))
        return
    if note:
        print(f"Note: {note}.")
    if text:
        print(text)


def _interactive(text: str) -> str:
    """The answer with its snapshot cut to the lines that carry an id and the lines above
    that place them (their ancestors in the tree, and its root); the sections around the
    snapshot (the page's address and title, the tabs) as they are."""
    import re

    has_id = re.compile(r"(?<!\\)\*?\[\d+\]")
    out: list[str] = []
    in_snapshot = False
    path: list[tuple[int, str, bool]] = []  # the open ancestors: (depth, line, printed)
    for line in text.split("\n"):
        if line.startswith("### "):
            in_snapshot = line == "### Snapshot"
            path = []
            out.append(line)
            continue
        depth = len(line) - len(line.lstrip("\t"))
        if not in_snapshot or depth == 0:
            out.append(line)
            path = [(0, line, True)] if in_snapshot else []
            continue
        while path and path[-1][0] >= depth:
            path.pop()
        shown = bool(has_id.search(line))
        if shown:
            for i, (d, above, printed) in enumerate(path):
                if not printed:
                    out.append(above)
                    path[i] = (d, above, True)
            out.append(line)
        path.append((depth, line, shown))
    return "\n".join(out)


# -- the commands ---------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    cmd = args.browser_command
    if cmd == "guide":
        print(GUIDE, end="")
        return 0
    if cmd == "sessions":
        return _sessions(args)
    if cmd == "close":
        return _close(args)
    if cmd == "open":
        answer = _call(args, "browser_navigate", {"url": args.url}, starts=True)
    elif cmd == "snapshot":
        if args.find is not None:
            answer = _call(args, "browser_find", {"pattern": args.find})
        elif args.subtree is not None:
            answer = _call(args, "browser_snapshot", {"ref": args.subtree})
        elif args.max_tokens is not None or args.full:
            whole = args.max_tokens is None  # --full
            answer = _call(args, "browser_observe", {"max_tokens": 10**9 if whole else args.max_tokens})
        else:
            answer = _call(args, "browser_snapshot", {"part": args.part} if args.part is not None else {})
        if args.interactive:
            answer["text"] = _interactive(answer.get("text", ""))
    elif cmd == "click":
        extra: dict[str, Any] = {"doubleClick": True} if args.double else {}
        if args.right:
            extra["button"] = "right"
        answer = _call(args, "browser_click", {"ref": args.id, **extra})
    elif cmd == "type":
        answer = _call(
            args, "browser_type", {"ref": args.id, "text": args.text, "submit": args.submit, "slowly": args.slowly}
        )
    elif cmd == "select":
        answer = _call(args, "browser_select_option", {"ref": args.id, "values": args.option})
    elif cmd == "press":
        answer = _call(args, "browser_press_key", {"key": args.keys})
    elif cmd == "hover":
        answer = _call(args, "browser_hover", {"ref": args.id})
    elif cmd == "scroll":
        answer = _call(args, "browser_scroll", {"direction": args.direction, **({"ref": args.id} if args.id else {})})
    elif cmd == "back":
        answer = _call(args, "browser_navigate_back", {})
    elif cmd == "forward":
        answer = _call(args, "browser_navigate_forward", {})
    elif cmd == "tabs":
        answer = _tabs(args)
    elif cmd == "wait":
        if args.seconds is None and args.text is None and args.gone is None:
            raise ShellError("wait for TEXT, --gone TEXT or --seconds S", "usage")
        wait = {"time": args.seconds, "text": args.text, "textGone": args.gone, "timeout": args.timeout}
        answer = _call(args, "browser_wait_for", {k: v for k, v in wait.items() if v is not None})
    elif cmd == "dialog":
        answer = _call(args, "browser_handle_dialog", {"accept": args.answer == "accept", "promptText": args.text})
    elif cmd == "upload":
        answer = _call(args, "browser_file_upload", {"paths": [str(Path(p).resolve()) for p in args.files]})
    elif cmd == "screenshot":
        answer = _call(args, "browser_take_screenshot", {"with_ids": args.ids, "fullPage": args.full_page})
        path = Path(args.file)
        import base64

        _write("screenshot", path, base64.b64decode(answer.get("picture") or ""))
        answer["path"] = str(path)
        _print(args, answer, f"### Result\nScreenshot written to {path}")
        return 0
    elif cmd == "state":
        return _state(args)
    else:  # argparse allows no other
        raise ShellError(f"unknown command {cmd!r}", "usage")
    _print(args, answer)
    return 0


def _tabs(args: argparse.Namespace) -> dict[str, Any]:
    action, rest = (args.action or "list"), args.rest
    if action == "list":
        return _call(args, "browser_tabs", {"action": "list"})
    if action == "new":
        return _call(args, "browser_tabs", {"action": "new", **({"url": rest[0]} if rest else {})})
    if action in ("select", "close"):
        index = None
        if rest:
            try:
                index = int(rest[0])
            except ValueError:
                raise ShellError(f"tabs {action} takes a tab's number, not {rest[0]!r}", "usage") from None
        if action == "select" and index is None:
            raise ShellError("tabs select N: which tab (`pagelens browser tabs` lists them)", "usage")
        return _call(args, "browser_tabs", {"action": action, **({"index": index} if index is not None else {})})
    raise ShellError(f"tabs takes list, new [URL], select N or close [N], not {action!r}", "usage")


def _write(command: str, path: Path, data: str | bytes, private: bool = False) -> None:
    """The file a command was given, written whole, or one line saying why it cannot be."""
    from pagelens._io import write_atomically

    try:
        write_atomically(path, data, private=private)
    except OSError as e:
        raise ShellError(f"{command}: cannot write {path} ({e.strerror or e})", "usage") from None


def _state(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if args.action == "save":
        answer = _call(args, "state_save", {})
        _write("state save", path, json.dumps(answer.get("state"), indent=1), private=True)  # cookies
        answer["path"] = str(path)
        _print(args, answer, f"### Result\nSaved cookies and storage to {path}")
        return 0
    try:
        if path.stat().st_size > _STATE_MOST_BYTES:
            raise ShellError(f"state load: {path} is over {_STATE_MOST_BYTES >> 20} MiB: not a saved state", "usage")
        state = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as e:
        raise ShellError(f"state load: cannot read {path} ({e.strerror or e})", "usage") from None
    except (ValueError, RecursionError) as e:  # nested past the parser's depth: RecursionError
        why = "nested too deeply" if isinstance(e, RecursionError) else one_line(e)
        raise ShellError(f"state load: {path} is not JSON ({why})", "usage") from None
    problem = storage_state_problem(state)
    if problem is not None:
        raise ShellError(f"state load: {path} is not a saved state: {problem}", "usage")
    answer = _call(args, "state_load", {"state": state, "url": args.url}, starts=True)
    _print(args, answer, answer.get("text") or f"### Result\nLoaded cookies and storage from {path}")
    return 0


def _names() -> list[str]:
    return sorted(p.name[: -len(".sock")] for p in _runtime_dir().glob("*.sock"))


def _sessions(args: argparse.Namespace) -> int:
    rows = []
    for name in _names():
        sock, _ = _paths(name)
        try:
            status = _ask(sock, {"op": "status"}, timeout=10)
            rows.append({"name": name, "url": status.get("url"), "title": status.get("title"), "running": True})
        except (OSError, ShellError, ValueError):
            rows.append({"name": name, "url": None, "title": None, "running": False})
    if args.json:
        print(json.dumps({"ok": True, "command": "sessions", "sessions": rows}))
        return 0
    if not rows:
        print("no open sessions")
    for r in rows:
        where = f"{r['title'] or ''} <{r['url']}>" if r["url"] else "(no page)"
        print(f"{r['name']}\t{where if r['running'] else '(not answering: its daemon died; a command restarts it)'}")
    return 0


def _close(args: argparse.Namespace) -> int:
    names = _names() if args.all else [args.session]
    closed = []
    for name in names:
        sock, state = _paths(name)
        try:
            _ask(sock, {"op": "close"}, timeout=60)
            # The daemon answers, then ends: wait until its socket is gone.
            deadline = time.monotonic() + 30
            while sock.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            closed.append(name)
        except (FileNotFoundError, ConnectionRefusedError):
            for leftover in (sock, state):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
            if not args.all:
                raise ShellError(f"no open session {name!r}", "no_session") from None
    if args.json:
        print(json.dumps({"ok": True, "command": "close", "closed": closed}))
    else:
        print(f"closed {', '.join(closed)}" if closed else "no open sessions")
    return 0


class _OneLineParser(argparse.ArgumentParser):
    """A command line that cannot be parsed is one line on stderr and exit 2, as every other
    error of a shell command is (argparse's own prints the usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_CODES["usage"], f"{self.prog}: {message} (`{self.prog} --help` shows how)\n")


def build_parser(prog: str = "pagelens browser") -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog=prog,
        description="A browser a shell agent drives one command at a time: `open URL`, then act on the ids the "
        "page shows; each command prints what changed. `pagelens browser guide` explains the loop.",
    )
    register_commands(parser)
    return parser


def register_commands(parser: argparse.ArgumentParser) -> None:
    common = _OneLineParser(add_help=False)
    common.add_argument(
        "--session",
        default=argparse.SUPPRESS,
        help=f"the session (its own browser) the command goes to (default: ${ENV_SESSION}, else 'default')",
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print a JSON object")
    parser.add_argument("--session", default=os.environ.get(ENV_SESSION) or "default", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="browser_command", required=True, metavar="COMMAND", parser_class=_OneLineParser)

    def command(name: str, help: str) -> argparse.ArgumentParser:  # noqa: A002
        return sub.add_parser(name, help=help, description=help, parents=[common])

    p = command("open", "open a URL (starting the session's browser)")
    p.add_argument("url")
    p.add_argument(
        "--allow-host", action="append", type=host_entry, default=[], help="a host pages may go to (repeatable)"
    )
    p.add_argument("--allow-file", action="append", default=[], metavar="DIR", help="a directory file: URLs may open")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument(
        "--idle-timeout",
        type=positive_float,
        default=1800,
        metavar="SECONDS",
        help="end the session after this long without a command (default 1800)",
    )
    p.add_argument("--output-dir", help="where snapshots over the budget and downloaded files are written")
    p.add_argument(
        "--settle-ms",
        type=non_negative_float,
        default=AFTER_ACTION_MS,
        metavar="MS",
        help=SETTLE_MS_HELP,
    )
    p = command("snapshot", "print the page (ids in brackets)")
    p.add_argument("--interactive", "-i", action="store_true", help="only the lines with ids")
    p.add_argument("--find", metavar="TEXT", help="the lines that contain TEXT, with their ancestors")
    p.add_argument("--subtree", metavar="ID", help="only this element's part of the page")
    p.add_argument("--max-tokens", type=positive_int, metavar="N", help="cut to N tokens")
    p.add_argument("--full", action="store_true", help="the whole page, however long")
    p.add_argument("--part", type=positive_int, metavar="N", help="a long page's Nth part (its answer says how many)")
    p = command("click", "click an element")
    p.add_argument("id")
    p.add_argument("--double", action="store_true", help="a double click")
    p.add_argument("--right", action="store_true", help="with the right button")
    p = command("type", "replace a field's text")
    p.add_argument("id")
    p.add_argument("text")
    p.add_argument("--submit", action="store_true", help="press Enter after")
    p.add_argument("--slowly", action="store_true", help="one key at a time")
    p = command("select", "choose options of a drop-down (by label or value)")
    p.add_argument("id")
    p.add_argument("option", nargs="+")
    p = command("press", "press keys on the focused element (Enter, ArrowDown, Control+a)")
    p.add_argument("keys")
    p = command("hover", "move the mouse over an element")
    p.add_argument("id")
    p = command("scroll", "scroll the page (or a scrollable element) a screen")
    p.add_argument("direction", choices=("up", "down"))
    p.add_argument("id", nargs="?")
    command("back", "go back in the tab's history")
    command("forward", "go forward in the tab's history")
    p = command("tabs", "list tabs; tabs new [URL]; tabs select N; tabs close [N]")
    p.add_argument("action", nargs="?", choices=("list", "new", "select", "close"))
    p.add_argument("rest", nargs="*")
    p = command("wait", "wait for text to appear (or --gone, or --seconds)")
    p.add_argument("text", nargs="?")
    p.add_argument("--gone", metavar="TEXT", help="wait for this text to go")
    p.add_argument("--seconds", type=non_negative_float, metavar="S", help="wait this long (at most 30)")
    p.add_argument("--timeout", type=positive_float, metavar="S", help="wait for the text at most this long (30)")
    p = command("dialog", "answer the dialog the page opened")
    p.add_argument("answer", choices=("accept", "dismiss"))
    p.add_argument("text", nargs="?", help="a prompt's answer")
    p = command("upload", "give files to the file chooser a click opened")
    p.add_argument("files", nargs="*")
    p = command("screenshot", "save a picture of the page")
    p.add_argument("file")
    p.add_argument("--ids", action="store_true", help="outline the elements with ids and write the ids on them")
    p.add_argument("--full-page", action="store_true", help="the whole page, not the viewport")
    p = command("state", "state save FILE / state load FILE [URL]: cookies and storage")
    p.add_argument("action", choices=("save", "load"))
    p.add_argument("file")
    p.add_argument("url", nargs="?", help="(load) the page to open with the state")
    p = command("close", "close the session's browser")
    p.add_argument("--all", action="store_true", help="every session")
    command("sessions", "list the open sessions")
    command("guide", "print a guide for an agent's system prompt")


def main(argv: list[str]) -> int:
    """``pagelens browser ...`` (reached before the rest of the CLI is imported)."""
    args = build_parser().parse_args(argv)
    return run(args)


def run(args: argparse.Namespace) -> int:
    given = getattr(args, "session", None)  # an empty name given is refused as any other that cannot be one
    args.session = given if given is not None else os.environ.get(ENV_SESSION) or "default"
    args.json = bool(getattr(args, "json", False))
    try:
        return _run(args)
    except ShellError as e:
        return _fail(args, str(e), e.kind)
    except TimeoutError:
        return _fail(args, f"the session's daemon did not answer within {ANSWER_TIMEOUT_S:g} s", "browser")
    except BrokenPipeError:
        sys.stdout = None
        return 0
    except OSError as e:
        return _fail(args, f"{type(e).__name__}: {e}", "browser")


def answered(answer: dict[str, Any]) -> dict[str, Any]:
    if not answer.get("ok"):
        raise ShellError(str(answer.get("error") or "failed"), str(answer.get("kind") or "action"))
    return answer


def _fail(args: argparse.Namespace, message: str, kind: str) -> int:
    code = EXIT_CODES.get(kind, 7)
    if args.json:
        print(json.dumps({"ok": False, "error": message, "kind": kind, "exit": code}))
    print(f"pagelens browser: {message}", file=sys.stderr)
    return code


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "browser",
        help="a browser a shell agent drives one command at a time (open, snapshot, click ID, ...)",
        description="A browser kept open between commands, one per session: `pagelens browser open URL`, then "
        "act on the ids the page shows; each command prints what changed. `pagelens browser guide` explains it.",
    )
    register_commands(parser)
    parser.set_defaults(func=run)
