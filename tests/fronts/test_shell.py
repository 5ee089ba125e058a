"""`pagelens browser`: every command a separate process, as a shell agent runs them, against
local pages; the sessions' browser contexts live in the user's daemon between them (issues 42
and 64)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import processes


@pytest.fixture
def shell(tmp_path):
    """Runs `pagelens browser ARGS` with a runtime directory of the test's own; closes every
    session after."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("PAGELENS_SESSION", None)

    def run(
        *args: str, timeout: float = 180, cwd: Path = tmp_path, **extra_env: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pagelens", "browser", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**env, **extra_env},
            cwd=cwd,
        )

    run.runtime = runtime / "pagelens"  # type: ignore[attr-defined]
    yield run
    run("close", "--all")
    # The daemons' logs (a browser's own words when it failed to start), which pytest shows with
    # a failing test's output: a failure in CI is otherwise one line.
    for log in sorted(run.runtime.glob(".*.log")):  # type: ignore[attr-defined]
        print(f"--- {log.name}:\n{log.read_text(errors='replace')}")


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert proc.stderr == "", proc.stderr
    return proc.stdout


def fails(proc: subprocess.CompletedProcess[str], code: int, words: str) -> str:
    """A failure: the exit code, one line on stderr with ``words``, no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc.stderr


def ref(text: str, role: str, name: str) -> str:
    found = re.search(rf"{role} \*?\[(\d+)\] '[^'\n]*{re.escape(name)}", text)
    assert found, f"no {role} {name!r} in:\n{text}"
    return found.group(1)


def daemon_pids(runtime: Path) -> list[int]:
    """Running daemons of this test's runtime directory."""
    return processes.daemon_pids(runtime.parent)


def gone(pid: int) -> bool:
    """Process ``pid`` has ended, with all its threads: a killed process's first thread is a zombie
    while the others still end, and they hold its files (the daemon's socket still takes
    connections then, and drops them)."""
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
        threads = os.listdir(f"/proc/{pid}/task")
    except (ProcessLookupError, FileNotFoundError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z" and threads == [str(pid)]


def wait_until(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_new_tab_whose_page_cannot_be_opened_leaves_the_tabs_as_they_were(site, shell):
    page = ok(shell("open", site.url("site/form.html"), "--allow-host", "127.0.0.1"))
    notes = ref(page, "textbox", "Notes")
    # Refused by the allow-list: no tab is made. Nothing listens on port 9: no page, the tab
    # made for it closed again.
    fails(shell("tabs", "new", "http://offsite.example/"), 5, "offsite.example")
    fails(shell("tabs", "new", "http://127.0.0.1:9/"), 6, "127.0.0.1:9")
    tabs = ok(shell("tabs"))
    assert tabs.count("\n- ") == 1 and "(current) Action test page" in tabs, tabs
    # The ids of the page before still stand.
    assert "notes: still here" in ok(shell("type", notes, "still here"))
    assert "Waited for 'Nothing like this' to go" in ok(shell("wait", "--gone", "Nothing like this"))


def test_an_address_without_a_scheme_is_opened_as_http_and_a_scheme_of_another_kind_refused(site, shell):
    """`open example.com/a` as a browser's address bar reads it (the action space's goto too);
    a script, data or browser-page address stays refused."""
    bare = site.url("site/form.html").split("://", 1)[1]
    assert "Page Title: Action test page" in ok(shell("open", bare))
    assert "Page Title: Action test page" in ok(shell("tabs", "new", bare))
    for address in ("javascript:alert(1)", "data:text/html,hi", "about:blank"):
        fails(shell("open", address), 2, "not a web address")


def test_a_session_lasts_between_commands(site, shell):
    page = ok(shell("open", site.url("site/form.html")))
    assert "### Snapshot\n" in page and "Page Title: Action test page" in page
    notes = ref(page, "textbox", "Notes")
    typed = ok(shell("type", notes, "kept between commands"))
    assert "### Snapshot changes" in typed and "notes: kept between commands" in typed
    # Another process, the same page: what was typed is there, the ids are the same.
    again = ok(shell("snapshot"))
    assert "notes: kept between commands" in again and ref(again, "textbox", "Notes") == notes
    chosen = ok(shell("select", ref(page, "combobox", "Colour"), "Green"))
    assert "colour is green" in chosen
    assert "Colour" in ok(shell("snapshot", "--find", "colour"))
    fails(shell("snapshot", "--find", " "), 2, "empty pattern")
    part = ok(shell("snapshot", "--subtree", ref(page, "combobox", "Colour")))
    assert "Red" in part and "Search" not in part and re.search(r"\[\d+\] 'Green'", part)
    interactive = ok(shell("snapshot", "--interactive"))
    assert "textbox [" in interactive and "colour is green" not in interactive
    assert "- Page URL: " in interactive  # the sections around the snapshot stay whole
    assert "over the 20 budget" in ok(shell("snapshot", "--max-tokens", "20"))
    ok(shell("type", ref(page, "textbox", "Key catcher"), "x"))
    assert "key Control+a" in ok(shell("press", "Control+a"))
    assert "Hovered over" in ok(shell("hover", ref(page, "button", "Vanish")))
    assert "Scrolled down" in ok(shell("scroll", "down"))
    ok(shell("click", ref(page, "button", "Make late button")))
    assert "Late button" in ok(shell("wait", "Late button"))
    searched = ok(shell("type", ref(page, "textbox", "Search"), "shoes", "--submit"))
    assert "You searched for: shoes" in searched
    assert "Action test page" in ok(shell("back"))
    assert "You searched for" in ok(shell("forward"))
    opened = ok(shell("tabs", "new", site.url("site/second.html")))
    assert "### Open tabs" in opened
    assert "- 1: (current)" in ok(shell("tabs"))
    assert "result.html" in ok(shell("tabs", "select", "0"))
    ok(shell("tabs", "close", "1"))
    shot = Path(shell.runtime).parent.parent / "page.png"  # type: ignore[attr-defined]
    ok(shell("screenshot", str(shot), "--ids"))
    assert shot.read_bytes().startswith(b"\x89PNG")
    # A file that cannot be written (a folder of that name): one line, and nothing left beside it.
    folder = shot.with_name("a-folder")
    folder.mkdir()
    before = sorted(p.name for p in folder.parent.iterdir())
    fails(shell("screenshot", str(folder)), 2, f"screenshot: cannot write {folder} (Is a directory)")
    fails(shell("state", "save", str(folder)), 2, f"state save: cannot write {folder} (Is a directory)")
    assert sorted(p.name for p in folder.parent.iterdir()) == before
    # --json: one object with the answer's sections.
    answer = json.loads(ok(shell("snapshot", "--json")))
    assert answer["ok"] and "RootWebArea" in answer["snapshot"] and "page" in answer


def test_dialogs_uploads_and_waits(site, shell, tmp_path):
    upload = tmp_path / "notes.txt"
    upload.write_text("twelve bytes")
    page = ok(shell("open", site.url("site/tools.html")))
    asked = ok(shell("click", ref(page, "button", "Ask a name")))
    assert "prompt dialog with message 'Your name?'" in asked and "pagelens browser dialog" in asked
    fails(shell("snapshot"), 9, "a prompt dialog is open")
    assert "name: Ada" in ok(shell("dialog", "accept", "Ada"))
    ok(shell("click", ref(page, "button", "Alert then write")))
    fails(shell("snapshot"), 9, "an alert dialog is open ('first')")
    assert "after the alert" in ok(shell("dialog", "accept"))
    assert "[File chooser]" in ok(shell("click", ref(page, "button", "Attachment")))
    assert "files: notes.txt 12" in ok(shell("upload", str(upload)))
    ok(shell("click", ref(page, "button", "Remove later")))
    ok(shell("wait", "--gone", "Soon gone"))
    assert "Soon gone" not in ok(shell("snapshot"))
    assert "Waited for 0.1 s" in ok(shell("wait", "--seconds", "0.1"))


def test_two_sessions_are_apart_and_state_carries_a_login(site, shell, tmp_path):
    login = site.url("site/login.html")
    page = ok(shell("open", login))
    ok(shell("type", ref(page, "textbox", "Name"), "Ada"))
    assert "Signed in as Ada" in ok(shell("click", ref(page, "button", "Sign in")))
    # Another session: a context of its own in the same daemon's browser, not signed in.
    other = ok(shell("open", login, "--session", "other"))
    assert "Signed in" not in other and "Sign in" in other
    [daemon] = daemon_pids(shell.runtime)  # type: ignore[attr-defined]
    assert len(processes.browsers_below(daemon)) == 1
    other_state = tmp_path / "other.json"
    ok(shell("state", "save", str(other_state), "--session", "other"))
    assert json.loads(other_state.read_text()) == {"cookies": [], "origins": []}  # no cookie, no storage of Ada's
    assert "Sign in" in ok(shell("snapshot", PAGELENS_SESSION="other"))  # the variable names it too
    sessions = ok(shell("sessions"))
    assert re.search(r"^default\t", sessions, re.M) and re.search(r"^other\t", sessions, re.M)
    # The login saved, then loaded into the other session.
    saved = tmp_path / "login.json"
    ok(shell("state", "save", str(saved)))
    assert saved.stat().st_mode & 0o777 == 0o600
    assert any(c["name"] == "member" for c in json.loads(saved.read_text())["cookies"])
    loaded = ok(shell("state", "load", str(saved), "--session", "other"))
    assert "Signed in as Ada" in loaded
    ok(shell("close", "--session", "other"))
    # A new session that loads the state before any page.
    ok(shell("state", "load", str(saved), login, "--session", "third"))
    assert "Signed in as Ada" in ok(shell("snapshot", "--session", "third"))
    fails(shell("state", "load", str(tmp_path / "missing.json")), 2, "state load: cannot read")


def test_close_leaves_nothing_and_a_killed_daemon_is_restarted(site, shell):
    runtime = shell.runtime  # type: ignore[attr-defined]
    page = ok(shell("open", site.url("site/form.html")))
    [pid] = daemon_pids(runtime)
    assert (runtime / "default.sock").stat().st_mode & 0o777 == 0o600
    assert runtime.stat().st_mode & 0o777 == 0o700
    ok(shell("type", ref(page, "textbox", "Notes"), "before the kill"))
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: gone(pid), "the daemon did not die")
    # The next command notices, restarts the session from its kept state, and says so; an id of
    # the old browser is refused (its ids are new), a snapshot shows the page again.
    restarted = shell("click", ref(page, "button", "Vanish"))
    fails(restarted, 4, "restarted")
    snap = ok(shell("snapshot"))
    assert "Action test page" in snap
    [new_pid] = daemon_pids(runtime)
    assert new_pid != pid
    # close: the daemon, its browser and its files are gone.
    children = subprocess.run(["pgrep", "-P", str(new_pid)], capture_output=True, text=True).stdout.split()
    ok(shell("close"))
    wait_until(lambda: gone(new_pid), "the daemon outlived close")
    wait_until(lambda: all(gone(int(c)) for c in children), "a process of the session outlived close")
    assert not list(runtime.glob("*.sock")) and not list(runtime.glob("*.state.json"))
    fails(shell("snapshot"), 3, "no open session 'default'")


def test_sessions_opened_at_once_share_one_daemon_and_browser_and_each_comes_back_from_a_kill(site, shell):
    """Shell sessions are contexts of one browser in one daemon of the user's (issue 64), however
    many commands start them at once; a killed daemon brings each session back with its own
    cookies; the daemon and its browser end with the last session, and the next command starts
    them again."""
    import concurrent.futures

    runtime = shell.runtime  # type: ignore[attr-defined]
    login = site.url("site/login.html")
    names = ("ada", "grace", "edsger")
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
        pages = dict(zip(names, pool.map(lambda n: ok(shell("open", login, "--session", n)), names), strict=True))
    [daemon] = daemon_pids(runtime)
    assert len(processes.browsers_below(daemon)) == 1
    for name in names[:2]:
        ok(shell("type", ref(pages[name], "textbox", "Name"), name.title(), "--session", name))
        assert f"Signed in as {name.title()}" in ok(
            shell("click", ref(pages[name], "button", "Sign in"), "--session", name)
        )
    assert "Signed in" not in ok(shell("snapshot", "--session", "edsger"))

    os.kill(daemon, signal.SIGKILL)
    wait_until(lambda: gone(daemon), "the daemon did not die")
    for name in names[:2]:
        again = ok(shell("snapshot", "--session", name))
        assert "the session's daemon had stopped (killed?)" in again and f"Signed in as {name.title()}" in again
    [restarted] = daemon_pids(runtime)
    assert restarted != daemon and len(processes.browsers_below(restarted)) == 1

    ok(shell("close", "--session", "ada"))
    assert "Signed in as Grace" in ok(shell("snapshot", "--session", "grace"))  # the others go on
    below = [restarted, *processes.browsers_below(restarted)]
    ok(shell("close", "--all"))
    wait_until(lambda: all(gone(p) for p in below), "the daemon or its browser outlived its last session")
    assert not list(runtime.glob("*.sock")) and not list(runtime.glob("*.state.json"))
    # Closed, then at once opened again: a new daemon serves it.
    assert "Sign in" in ok(shell("open", login))
    assert len(daemon_pids(runtime)) == 1


def test_a_session_restarted_after_a_kill_keeps_the_options_it_was_opened_with(site, shell):
    """Its allow-list above all: the command that notices the kill names no --allow-host, and the
    session it brings back still refuses what the list did not allow."""
    runtime = shell.runtime  # type: ignore[attr-defined]
    ok(shell("open", site.url("site/form.html"), "--allow-host", "127.0.0.1"))
    fails(shell("open", site.url("site/form.html", host="localhost")), 5, "localhost")
    [daemon] = daemon_pids(runtime)
    os.kill(daemon, signal.SIGKILL)
    wait_until(lambda: gone(daemon), "the daemon did not die")
    assert "Action test page" in ok(shell("snapshot"))
    fails(shell("open", site.url("site/form.html", host="localhost")), 5, "localhost")


def test_files_are_uploaded_from_the_folder_a_session_was_opened_in(site, shell, tmp_path):
    """Two sessions of one daemon opened in two folders: each uploads from its own, not the
    other's (the daemon's working directory is neither)."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
        (folder / "notes.txt").write_text(folder.name)
    ok(shell("open", site.url("site/form.html"), "--session", "one", cwd=first))
    page = ok(shell("open", site.url("site/tools.html"), "--session", "two", cwd=second))
    assert len(daemon_pids(shell.runtime)) == 1  # type: ignore[attr-defined]
    attach = ref(page, "button", "Attachment")
    assert "[File chooser]" in ok(shell("click", attach, "--session", "two", cwd=second))
    fails(shell("upload", str(first / "notes.txt"), "--session", "two", cwd=second), 7, "outside the directories")
    assert "files: notes.txt 6" in ok(shell("upload", str(second / "notes.txt"), "--session", "two", cwd=second))


def test_a_sessions_files_are_its_users_alone_and_go_with_it(site, shell, tmp_path):
    """A long page's snapshot is written in the session's own folder (0700, the file 0600),
    never the shared temporary folder; close removes the folder. A runtime folder that is a link
    (another user's, planted where $XDG_RUNTIME_DIR is unset) is refused, never followed."""
    import tempfile

    runtime = shell.runtime  # type: ignore[attr-defined]
    shared_before = set(Path(tempfile.gettempdir()).glob("snapshot-*"))
    ok(shell("open", site.url("site/form.html")))
    long = ok(shell("snapshot", "--max-tokens", "20"))
    written = Path(re.search(r"file://(\S+)", long).group(1))
    folder = runtime / "default.files"
    assert written.parent == folder and written.is_file(), long
    assert folder.stat().st_mode & 0o777 == 0o700 and written.stat().st_mode & 0o777 == 0o600
    assert set(Path(tempfile.gettempdir()).glob("snapshot-*")) == shared_before
    ok(shell("close"))
    wait_until(lambda: not folder.exists(), "the session's files outlived close")

    # A link where the runtime folder would be: refused in one line, nothing written through it.
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir(mode=0o700)
    planted = tmp_path / "run2"
    planted.mkdir(mode=0o700)
    (planted / "pagelens").symlink_to(elsewhere)
    refused = shell("open", site.url("site/form.html"), XDG_RUNTIME_DIR=str(planted))
    fails(refused, 8, "is a link")
    assert not list(elsewhere.iterdir())


def test_a_state_file_of_any_shape_is_one_line(site, shell, tmp_path):
    """state load of something that is no saved state — deeply nested JSON, not JSON, the wrong
    shape at any depth — exits 2 with one line saying what is wrong; nothing starts."""
    cases = {
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "text.json": "cookies: none",
        "list.json": "[1, 2]",
        "cookie.json": json.dumps({"cookies": [{"name": "a", "value": 1}]}),
        "origin.json": json.dumps({"cookies": [], "origins": [{"origin": "x", "localStorage": [[1]]}]}),
        "samesite.json": json.dumps(
            {"cookies": [{"name": "a", "value": "b", "domain": "x", "path": "/", "sameSite": "Sometimes"}]}
        ),
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        fails(shell("state", "load", str(path), site.url("site/form.html")), 2, "state load:")
    assert not daemon_pids(shell.runtime)  # type: ignore[attr-defined]


def test_a_long_page_is_within_reach_through_the_shell(site, shell):
    """The shell's answers of a long page say how to reach the rest in its own commands; End
    shows the bottom (its button with an id), --part N the Nth part, and the click works."""
    opened = ok(shell("open", site.url("site/long.html")))
    assert "pagelens browser press End" in opened and "pagelens browser snapshot --part N" in opened, opened[:1500]
    assert "browser_" not in opened.split("### The rest of the page")[0]  # the shell's words, not MCP's
    end = ok(shell("press", "End"))
    button = ref(end.split("### The rest of the page")[0], "button", "Place the order")
    part = ok(shell("snapshot", "--part", "3"))
    assert re.search(r"part 3 of \d+\)", part), part[:800]
    fails(shell("snapshot", "--part", "0"), 2, "--part")
    assert "Order placed" in ok(shell("click", button))


def test_a_daemon_that_dies_before_answering_is_one_line_and_not_sent_again(shell):
    """A daemon that took the command and died (killed, out of memory) drops the connection: the
    command says it is unknown whether it was done, and does not send it again."""
    import socket
    import threading

    sock_path = shell.runtime / "default.sock"  # type: ignore[attr-defined]
    shell.runtime.mkdir(mode=0o700, exist_ok=True)  # type: ignore[attr-defined]
    received = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(sock_path))
        listener.listen(4)

        def die_on_the_request() -> None:
            conn, _ = listener.accept()
            received.append(conn.recv(16))
            # Unread request bytes at close: the kernel resets the connection, as when the
            # daemon's process ends mid-command.
            conn.close()

        server = threading.Thread(target=die_on_the_request, daemon=True)
        server.start()
        proc = shell("press", "Enter", timeout=60)
        server.join(timeout=10)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):  # nothing was sent again
            listener.accept()
    fails(proc, 8, "ended without answering, so whether this was done is unknown")
    assert len(received) == 1


def test_a_crashed_browser_is_restarted_with_the_sessions_state(site, shell):
    """The browser the sessions share dies: each session is told once, at its next command, and
    comes back with its own cookies in a new browser of the same daemon."""
    runtime = shell.runtime  # type: ignore[attr-defined]
    page = ok(shell("open", site.url("site/login.html")))
    ok(shell("type", ref(page, "textbox", "Name"), "Grace"))
    assert "Signed in as Grace" in ok(shell("click", ref(page, "button", "Sign in")))
    ok(shell("open", site.url("site/form.html"), "--session", "other"))
    [pid] = daemon_pids(runtime)
    [browser] = processes.browsers_below(pid)
    os.kill(browser, signal.SIGKILL)
    wait_until(lambda: gone(browser), "the browser did not die")
    again = ok(shell("snapshot"))
    assert "Note: the session's browser had stopped; it was restarted" in again
    assert "Signed in as Grace" in again  # its cookies came back with it
    other = ok(shell("snapshot", "--session", "other"))
    assert "Note: the session's browser had stopped" in other and "Action test page" in other
    assert "Signed in" not in other
    assert "Note:" not in ok(shell("snapshot")) + ok(shell("snapshot", "--session", "other"))  # told once
    assert daemon_pids(runtime) == [pid] and len(processes.browsers_below(pid)) == 1  # the same daemon, one browser


def test_an_idle_session_ends_by_itself(site, shell):
    runtime = shell.runtime  # type: ignore[attr-defined]
    ok(shell("open", site.url("site/form.html"), "--idle-timeout", "1"))
    [pid] = daemon_pids(runtime)
    wait_until(lambda: gone(pid), "the idle daemon did not end")
    assert not list(runtime.glob("*.sock"))
    fails(shell("snapshot"), 3, "no open session")


def test_errors_have_one_line_and_their_own_exit_code(site, shell):
    from pagelens.browser.devtools import free_port

    fails(shell("snapshot"), 3, "no open session 'default': start one with `pagelens browser open URL`")
    fails(shell("open", f"http://127.0.0.1:{free_port()}/"), 6, "the connection was refused")
    page = ok(shell("open", site.url("site/offsite.html")))
    fails(shell("click", "99999"), 4, "there is no element [99999]")
    fails(shell("click", ref(page, "link", "another host name")), 5, "was refused")
    fails(shell("open", "file:///etc/hostname"), 5, "file: URLs are refused")
    page = ok(shell("open", site.url("site/form.html")))
    fails(shell("select", ref(page, "combobox", "Colour"), "Purple"), 7, "no option 'Purple'")
    fails(shell("click", "the button"), 2, "not an element id")
    fails(shell("click"), 2, "pagelens browser click: the following arguments are required: id")
    fails(shell("snapshot", "--max-tokens", "0"), 2, "--max-tokens: 0 is not at least 1")
    fails(shell("frobnicate"), 2, "invalid choice: 'frobnicate'")
    fails(shell("wait", "--seconds", "-1"), 2, "--seconds: ")
    fails(shell("wait"), 2, "wait for TEXT")
    fails(shell("tabs", "select", "x"), 2, "tab's number")
    fails(shell("open", "x", "--session", "../etc"), 2, "session name")
    fails(shell("snapshot", "--session", ""), 2, "session name ''")  # not the default session
    for flag, value, words in (
        ("--idle-timeout", "0", "0 is not above 0"),
        ("--settle-ms", "-1", "-1 is not a finite"),
    ):
        nonsense = shell("open", site.url("site/form.html"), flag, value)
        assert nonsense.returncode == 2 and f"argument {flag}: {words}" in nonsense.stderr, nonsense.stderr
    usage = shell("click")
    assert usage.returncode == 2 and "Traceback" not in usage.stderr
    # --json failures: the same exit code, and an object on stdout.
    failure = shell("click", "99999", "--json")
    assert failure.returncode == 4 and json.loads(failure.stdout)["kind"] == "unknown_id"


def test_the_guide_and_help():
    guide = subprocess.run(
        [sys.executable, "-m", "pagelens", "browser", "guide"], capture_output=True, text=True, timeout=60
    )
    assert guide.returncode == 0 and "pagelens browser open URL" in guide.stdout and "*[id]" in guide.stdout
    # Every exit code a command can end with is in the guide.
    from pagelens.cli.shell import EXIT_CODES

    said = set(re.findall(r"(?:exit codes?:|code) (\d)\b|, (\d) ", guide.stdout))
    assert {str(code) for code in EXIT_CODES.values()} <= {n for pair in said for n in pair if n}
    helped = subprocess.run([sys.executable, "-m", "pagelens", "--help"], capture_output=True, text=True, timeout=60)
    assert "browser" in helped.stdout


def test_the_commands_their_help_and_the_guide_come_from_the_tools_table():
    """One table (`pagelens.browser.tools`) makes the MCP tools and the shell's commands: each
    command's parser, its help and its line in the guide are the table's, and every argument
    it passes is a parameter of the operation it calls."""
    import inspect

    from pagelens.browser.operations import OPERATIONS
    from pagelens.browser.tools import TOOLS, commands
    from pagelens.cli.shell import build_parser, guide

    operation = {fn.__name__: fn for fn in OPERATIONS}
    assert list(operation) == [t.name for t in TOOLS]
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "browser_command")
    assert list(sub.choices) == [c.name for c in commands()]
    text = guide()
    for command in commands():
        assert f"- `pagelens browser {command.usage()}`: {command.help}" in text
        helped = " ".join(sub.choices[command.name].format_help().split())
        assert command.help in helped
        for arg in command.args:
            shown = (
                "{" + ",".join(arg.options["choices"]) + "}"
                if "choices" in arg.options
                else arg.options.get("metavar", arg.names[0])
            )
            assert shown in helped or arg.dest in helped, (command.name, arg.names)
            if arg.help:
                assert arg.help in helped, (command.name, arg.help)
        for arg in command.args:
            for tool in {arg.tool or next(t.name for t in TOOLS if t.command is command)} if arg.param else ():
                assert arg.param in inspect.signature(operation[tool]).parameters, (command.name, arg.param, tool)
    # The guide's prose names only commands there are.
    named = set(re.findall(r"pagelens browser ([a-z]+)", text))
    assert named <= {c.name for c in commands()}, named - {c.name for c in commands()}


@st.composite
def _command_lines(draw):
    """A command line of a tool's command: its positionals and any of its flags, drawn from the
    table as a user would write them."""
    from pagelens.browser.tools import TOOLS

    command = draw(st.sampled_from([t.command for t in TOOLS if t.command is not None and t.command.name != "tabs"]))
    words = [command.name]
    for arg in command.args:
        choices = arg.options.get("choices")

        def value(choices: tuple[str, ...] | None = choices) -> str:
            return draw(st.sampled_from(choices)) if choices else str(draw(st.integers(1, 99)))

        if not arg.flag:
            nargs = arg.options.get("nargs")
            count = {"?": draw(st.integers(0, 1)), "*": draw(st.integers(0, 2)), "+": draw(st.integers(1, 2))}.get(
                nargs, 1
            )
            words += [value() for _ in range(count)]
        elif draw(st.booleans()):
            words += [arg.names[0]] if arg.is_switch else [arg.names[0], value()]
    return command, words


@settings(deadline=None)  # the first example imports the operations (Playwright): a fixed cost
@given(_command_lines())
def test_every_command_line_calls_one_operation_with_its_own_parameters(drawn):
    """Whatever flags are given together, a command line becomes one tool's call whose
    arguments its operation takes, or one line saying which options cannot go together."""
    import inspect

    from pagelens.browser.operations import OPERATIONS
    from pagelens.cli.shell import ShellError, build_parser, tool_call

    command, words = drawn
    args = build_parser().parse_args(words)
    try:
        tool, arguments = tool_call(command, args)
    except ShellError as e:
        assert e.kind == "usage" and "cannot be given together" in str(e)
        return
    operation = next(fn for fn in OPERATIONS if fn.__name__ == tool)
    inspect.signature(operation).bind(None, **arguments)
    for arg in command.args:
        if arg.param is not None and arg.is_switch and getattr(args, arg.dest) and arg.tool in (None, tool):
            assert arguments[arg.param] == arg.value


@st.composite
def _answers(draw):
    """An answer whose snapshot is a tree (each line at most one tab deeper than the one
    above), some lines with ids, between the sections that come around it."""
    lines = ["### Page", "- Page URL: http://127.0.0.1/", "### Snapshot", "RootWebArea 'P'"]
    depth = 0
    for n in range(draw(st.integers(0, 40))):
        depth = draw(st.integers(1, depth + 1))
        marked = draw(st.sampled_from(["", " [7]", " *[8]", " \\[9]"]))
        lines.append("\t" * depth + f"node{n}{marked} 'x'")
    lines += ["### Open tabs", "- 0: (current) P <http://127.0.0.1/>"]
    return lines


@given(_answers())
def test_interactive_keeps_every_id_line_under_its_ancestors_and_the_sections_whole(lines):
    from pagelens.cli.shell import _interactive

    kept = _interactive("\n".join(lines)).split("\n")
    with_id = re.compile(r"(?<!\\)\*?\[\d+\]")
    assert [ln for ln in kept if with_id.search(ln)] == [ln for ln in lines if with_id.search(ln)]
    assert kept[:4] == lines[:4] and kept[-2:] == lines[-2:]
    tree = kept[4:-2]
    assert all(ln in lines for ln in tree) and sorted(tree, key=lines.index) == tree  # in order, none invented
    for i, ln in enumerate(tree):
        depth = len(ln) - len(ln.lstrip("\t"))
        if not with_id.search(ln):  # an ancestor: an id line is below it, one tab deeper
            below = tree[i + 1] if i + 1 < len(tree) else ""
            assert len(below) - len(below.lstrip("\t")) == depth + 1
        else:  # its parent line is kept right above it or above a sibling's part
            assert depth == 1 or any(len(a) - len(a.lstrip("\t")) == depth - 1 for a in tree[:i])


def test_a_session_that_names_another_chromium_gets_a_daemon_of_its_own(site, shell):
    """The daemon's sessions run the Chromium of the command that started it: a command that
    names another (PAGELENS_CHROMIUM) is served by a daemon, and a browser, of its own."""
    import shutil

    runtime = shell.runtime  # type: ignore[attr-defined]
    ok(shell("open", site.url("site/form.html")))
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    assert "Action test page" in ok(
        shell("open", site.url("site/form.html"), "--session", "named", PAGELENS_CHROMIUM=chromium)
    )
    daemons = daemon_pids(runtime)
    assert len(daemons) == 2 and all(len(processes.browsers_below(pid)) == 1 for pid in daemons)
    # Each command finds its session whatever it names (the session's socket answers).
    assert "Action test page" in ok(shell("snapshot", "--session", "named"))


def test_a_browser_that_cannot_start_is_one_line_naming_the_log_that_holds_its_own_words(site, shell, tmp_path):
    """A Chromium that ends as it starts, every time: the command fails as the browser's (exit 8)
    in one line that names the daemon's log, and the log holds what the browser itself said,
    from each launch tried."""
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\necho 'chromium: this machine has no display today' >&2\nexit 1\n")
    broken.chmod(0o755)
    said = fails(shell("open", site.url("site/form.html"), PAGELENS_CHROMIUM=str(broken)), 8, "Failed to launch")
    logs = list(shell.runtime.glob(".*.log"))  # type: ignore[attr-defined]
    assert len(logs) == 1 and f"(in full in {logs[0]})" in said, (said, logs)
    log = logs[0].read_text(errors="replace")
    assert log.count("starting it again") == 2, log
    assert log.count("this machine has no display today") >= 3, log
