"""``browser``: a browser a shell agent drives one command at a time.

``pagelens browser open URL`` starts the session in the user's background daemon (started
with it when none runs; each session a browser context of its own, see
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

from pagelens.browser.tools import TOOLS, Command, commands
from pagelens.errors import PagelensError, one_line
from pagelens.serving import (
    SessionFilesError,
    daemon_files,
    is_session_name,
    runtime_dir,
    session_files,
    storage_state_problem,
)
from pagelens.settle import AFTER_ACTION_MS

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


_GUIDE_LOOP = """\
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

`--session NAME` works on a second browser, `--json` prints machine-readable output. A file
the page downloads (and a snapshot over the budget) is saved in the session's own folder — its
user's alone, removed by `close` — or in `open --output-dir DIR`, which stays; the answer says
where (`### Events`). `### Notes` says what pagelens did that you did not ask (a page script that
never returned, stopped).

Every command (`pagelens browser COMMAND --help` says more):
"""


def guide() -> str:
    """The guide: the loop, then every command of the table as it is written and what it does."""
    return _GUIDE_LOOP + "".join(f"- `pagelens browser {c.usage()}`: {c.help}\n" for c in commands())


def _paths(name: str) -> tuple[Path, Path]:
    try:
        return session_files(name)
    except SessionFilesError as e:
        raise ShellError(str(e), e.kind) from None


def _daemon_files() -> tuple[Path, Path, Path]:
    try:
        return daemon_files()
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


def _start_session(name: str, options: dict[str, Any], restore: bool = False) -> None:
    """Session ``name`` started in this user's daemon (see :mod:`pagelens.browser.daemon`), the
    daemon started first when none runs; returns once the session's socket listens. The
    daemon's lock is held throughout: no two commands start a daemon, and none ends while a
    session is being started in it."""
    import fcntl

    sock, lock, log = _daemon_files()
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ShellError(
                        f"another command held the session daemon's lock ({lock}) for {START_TIMEOUT_S:g} s", "browser"
                    ) from None
                time.sleep(0.01)
        request = {"op": "start", "name": name, "options": options, "restore": restore}
        try:
            answer = _ask(sock, request, timeout=START_TIMEOUT_S)
        except (FileNotFoundError, ConnectionRefusedError):
            with contextlib.suppress(FileNotFoundError):
                sock.unlink()  # a daemon that was killed left it
            _start_daemon(name, options, restore, log)
            return
        except TimeoutError:
            raise ShellError(f"the session daemon did not answer within {START_TIMEOUT_S:g} s", "browser") from None
        if not answer.get("ok"):
            raise ShellError(f"the session could not start: {answer.get('error')}", str(answer.get("kind", "browser")))
    finally:
        os.close(fd)  # the lock with it


def _start_daemon(name: str, options: dict[str, Any], restore: bool, log: Path) -> None:
    """Starts this user's daemon with session ``name``, in a session of its own (it outlives
    this command), and returns once the session listens (it says so on a pipe)."""
    import subprocess

    read, write = os.pipe()
    env = {**os.environ, "PAGELENS_READY_FD": str(write)}
    args = [sys.executable, "-m", "pagelens.browser.daemon", name, json.dumps(options)]
    if restore:
        args.append("--restore")
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
        "cwd": os.getcwd(),  # where files to upload may come from
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
    _start_session(args.session, _options(args), restore=killed and not starts)
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


def tool_call(command: Command, args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The tool a command line calls and its arguments, as the table maps each argument (a
    flag that names another tool calls that one: ``snapshot --find`` finds)."""
    tool = TOOL_OF_COMMAND[command.name]
    given = [a for a in command.args if a.param is not None and getattr(args, a.dest, None) not in (None, False)]
    redirects = [a for a in given if a.tool is not None]
    if redirects:
        tool = redirects[0].tool or tool
        apart = [a for a in given if a.tool != tool]
        if apart:
            first, other = redirects[0].names[0], apart[0].names[0]
            raise ShellError(f"{command.name}: {first} and {other} cannot be given together", "usage")
    arguments: dict[str, Any] = {}
    said_by: dict[str, str] = {}
    for a in given:
        value = getattr(args, a.dest)
        if a.value is not None:
            value = a.value
        elif a.values is not None:
            value = a.values[value]
        elif a.path:
            value = [str(Path(p).resolve()) for p in value] if isinstance(value, list) else str(Path(value).resolve())
        param = str(a.param)
        if param in said_by:
            raise ShellError(f"{command.name}: {said_by[param]} and {a.names[0]} cannot be given together", "usage")
        arguments[param], said_by[param] = value, a.names[0]
    return tool, arguments


def _run(args: argparse.Namespace) -> int:
    name = args.browser_command
    own = _SESSION_OWN.get(name)
    if own is not None:
        return own(args)
    command = COMMANDS[name]
    if name == "tabs":
        answer = _tabs(args)
    else:
        tool, arguments = tool_call(command, args)
        if name == "wait" and not {"time", "text", "textGone"} & arguments.keys():
            raise ShellError("wait for TEXT, --gone TEXT or --seconds S", "usage")
        answer = _call(args, tool, arguments, starts=command.starts)
    if name == "snapshot" and args.interactive:
        answer["text"] = _interactive(answer.get("text", ""))
    if name == "screenshot":
        import base64

        path = Path(args.file)
        _write("screenshot", path, base64.b64decode(answer.get("picture") or ""))
        answer["path"] = str(path)
        _print(args, answer, f"### Result\nScreenshot written to {path}")
        return 0
    _print(args, answer)
    return 0


def _guide(args: argparse.Namespace) -> int:
    print(guide(), end="")
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
    names = (p.name[: -len(".sock")] for p in _runtime_dir().glob("*.sock"))
    return sorted(n for n in names if is_session_name(n))  # not the daemon's own socket


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


_SESSION_OWN = {"guide": _guide, "sessions": _sessions, "close": _close, "state": _state}
COMMANDS = {c.name: c for c in commands()}
TOOL_OF_COMMAND = {t.command.name: t.name for t in TOOLS if t.command is not None}


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

    from pagelens.cli import types

    for command in commands():
        p = sub.add_parser(command.name, help=command.help, description=command.help, parents=[common])
        for a in command.args:
            options = dict(a.options)
            if "type" in options:
                options["type"] = getattr(types, options["type"])
            if a.is_switch:
                options["action"] = "store_true"
            p.add_argument(*a.names, help=a.help, **options)


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
