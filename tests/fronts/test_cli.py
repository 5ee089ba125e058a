"""The command line, run as a user would (a subprocess)."""

from __future__ import annotations

import subprocess
import sys

from support.corpus import CORPUS


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pagelens", *args], capture_output=True, text=True, timeout=120)


def test_observe_builtin_page_with_stats():
    r = run("observe", "--stats")
    assert r.returncode == 0, r.stderr
    assert "wikipedia-3" in r.stdout and "occam tokens" in r.stdout and "fewer tokens" in r.stdout


def test_observe_saved_tree_both_modes():
    path = str(CORPUS / "001" / "axtree.json.gz")
    occam = run("observe", path)
    webarena = run("observe", path, "--mode", "webarena")
    assert occam.stdout.startswith("RootWebArea 'Get your Frontend")
    assert webarena.stdout.startswith("RootWebArea [2] 'Get your Frontend")
    cut = run("observe", path, "--max-tokens", "200")
    assert "more lines not shown" in cut.stdout


def test_observe_a_live_page_from_either_reader(site):
    """`pagelens observe URL` reads the page with pagelens' capture (the default), `--source ax`
    with Chromium's tree: the page is the positional argument either way (one name for both
    once made the URL the reader and `--source ax` the page)."""
    url = site.url("site/form.html")
    own = run("observe", url, "--stats")
    assert own.returncode == 0, own.stderr
    assert "time capture" in own.stdout and "main_ax_tree" not in own.stdout
    ax = run("observe", url, "--stats", "--source", "ax")
    assert ax.returncode == 0, ax.stderr
    assert "time main_ax_tree" in ax.stdout and "time capture" not in ax.stdout
    for reader in ("dom", "ax"):
        text = run("observe", url, "--source", reader)
        assert text.returncode == 0 and "combobox [" in text.stdout and "'Colour'" in text.stdout, text.stderr


def test_observe_says_when_a_page_was_read_another_way(tmp_path):
    """A page the capture cannot read whole (a closed shadow root) is read from Chromium's tree,
    and `pagelens observe` says so on stderr (the page still on stdout)."""
    page = tmp_path / "closed.html"
    page.write_text(
        "<title>Closed</title><div id=h></div><script>"
        "document.getElementById('h').attachShadow({mode: 'closed'}).innerHTML = '<button>Sealed</button>'"
        "</script>"
    )
    r = run("observe", str(page))
    assert r.returncode == 0, r.stderr
    assert "button [" in r.stdout and "'Sealed'" in r.stdout
    assert "pagelens: note: read from Chromium's accessibility tree: 1 closed shadow roots" in r.stderr, r.stderr


def test_clean_and_chunks():
    path = str(CORPUS / "001" / "source.html.gz")
    r = run("clean", path)
    assert r.returncode == 0 and r.stdout.startswith("<html") and "tokens" in r.stderr
    r = run("clean", path, "--max-tokens", "800")
    assert r.stdout.count("<!-- chunk ") >= 3


def test_errors_are_messages_not_tracebacks(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [')
    r = run("observe", str(bad))
    assert r.returncode == 2 and "pagelens: error: malformed" in r.stderr and "Traceback" not in r.stderr
    r = run("observe", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and "no such file" in r.stderr
    # A run that could take no step is refused before anything starts (it wrote a trajectory).
    r = run("run", "--url", "http://127.0.0.1:1/", "--task", "x", "--max-steps", "0", "--out", str(tmp_path / "r"))
    assert r.returncode == 2 and "--max-steps: 0 is not at least 1" in r.stderr
    assert not (tmp_path / "r").exists()


def test_version_names_pagelens_its_core_playwright_and_chromium():
    import pagelens

    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert lines["pagelens"] == pagelens.__version__ and lines["pagelens-core"] == pagelens.CORE_VERSION
    assert lines["playwright"][0].isdigit() and lines["chromium"].startswith("Chromium ")


def test_every_allow_host_option_refuses_what_is_no_host():
    """A URL or an empty word given as a host exits 2 naming it, before anything starts (the
    allow-list once dropped an empty one and took a URL that matches nothing)."""
    for command in (
        ["observe", "page.html"],
        ["mcp"],
        ["run", "--task", "t.json"],
        ["browser", "open", "http://127.0.0.1:1/"],
    ):
        for bad, said in (("http://shop.test", "not a host"), ("", "an empty host")):
            r = run(*command, "--allow-host", bad)
            assert r.returncode == 2, (command, bad, r.stderr)
            assert said in r.stderr and "Traceback" not in r.stderr, (command, r.stderr)
