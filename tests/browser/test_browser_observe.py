"""Live observations on real Chromium agree with the saved corpus trees; the CLI and the
async API on live pages."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys

import pytest

from pagelens import AXTree, AXTreeError
from pagelens.browser import AsyncBrowserEnv, BrowserEnv, LaunchOptions
from support.corpus import ax_bytes

# Corpus pages whose rendering does not depend on the clock (cache-busting numbers in the
# text of some pages change per load), from 5 to 25,371 nodes.
STABLE_PAGES = [
    "001",
    "mozilla-2",
    "ars-1",
    "archive-of-our-own",
    "links-in-tables",
    "nytimes-1",
    "bbc-1",
    "medium-1",
    "lemonde-1",
    "wikipedia-2",
]


def without_ids(text: str) -> str:
    # backendDOMNodeIds count up in a browser session; everything else must be identical.
    return re.sub(r"\[\d+\]", "[]", text)


@pytest.fixture(scope="module")
def main_frame_env(site):
    # The corpus trees were captured from the main frame only, at http://corpus.local/PAGE.html
    # with every other host blocked, viewport 1280x1800: the same here.
    # The saved trees carry no clickable elements either.
    launch = LaunchOptions(extra_args=(site.corpus_host_rule(),), viewport=(1280, 1800))
    env = BrowserEnv(launch=launch, include_frames=False, block_other_hosts=True, settle_ms=300, clickables=False)
    yield env
    env.close()


@pytest.mark.parametrize("page", STABLE_PAGES)
@pytest.mark.parametrize("mode", ["occam", "webarena"])
def test_live_observation_agrees_with_the_saved_tree(main_frame_env, page, mode):
    """Chromium's tree read live (``source="ax"``) renders exactly as the saved one."""
    main_frame_env.config.mode, main_frame_env.config.source = mode, "ax"
    try:
        live = main_frame_env.reset(f"http://corpus.local/{page}.html")
    finally:
        main_frame_env.config.source = "dom"
    saved = AXTree.from_cdp(ax_bytes(page)).render(mode)
    assert without_ids(live.text) == without_ids(saved.text)
    assert len(live.ids) == len(saved.ids)


@pytest.mark.parametrize("page", STABLE_PAGES)
def test_the_capture_keeps_the_saved_trees_texts_and_actionables(main_frame_env, page):
    """pagelens' own capture (the default source) holds the saved tree's texts (at least 99.5%
    of its distinct texts, whitespace normalised) and gives an id to as many of its named
    actionable elements (at least 99%), and its text equals Chromium's on most lines."""
    main_frame_env.config.mode = "occam"
    live = main_frame_env.reset(f"http://corpus.local/{page}.html")
    saved = AXTree.from_cdp(ax_bytes(page))
    texts, names = set(), []
    for i in saved.ids():
        node = saved.node(i)
        name = " ".join(node.name.split())
        if node.role == "StaticText" and len(name) >= 2 and node.rendered:
            texts.add(name)
    for i in saved.render("occam").ids:
        node = saved.node(i)
        if node.name.strip():
            names.append(" ".join(node.name.split()))
    whole = " ".join(live.text.replace("\\'", "'").replace("\\[", "[").split())
    assert sum(t in whole for t in texts) >= 0.995 * len(texts)
    ours = {" ".join(live.tree.node(i).name.split()) for i in live.ids}
    assert sum(n in ours for n in names) >= 0.99 * len(names)
    same = set(without_ids(live.text).splitlines()) & set(without_ids(saved.render("occam").text).splitlines())
    assert len(same) >= 0.95 * len(set(without_ids(saved.render("occam").text).splitlines()))


def test_every_shown_id_resolves_to_a_dom_node(browser, site):
    obs = browser.reset(site.url("corpus/ars-1/"))
    assert obs.ids
    for i in obs.ids:
        assert obs.tree.node(i).backend_dom_node_id is not None


def test_async_api_and_webarena_mode(site):
    async def run():
        async with AsyncBrowserEnv(mode="webarena", settle_ms=0) as env:
            obs = await env.reset(site.url("site/second.html"))
            assert obs.mode == "webarena"
            assert re.search(r"^RootWebArea \[\d+\] 'Second page'", obs.text, flags=re.M)
            link = next(i for i in obs.ids if obs.tree.node(i).role == "link")
            step = await env.step(f"click [{link}]")
            assert step.ok and step.observation.title == "Action test page"
            return step.elapsed_ms

    assert asyncio.run(run()) > 0


@pytest.mark.parametrize("source", ["dom", "ax"])
def test_hidden_iframe_is_left_out_not_an_error(browser, site, source):
    browser.config.source = source
    try:
        obs = browser.reset(site.url("site/hidden-frame.html"))
    finally:
        browser.config.source = "dom"
    assert "Visible frame text" in obs.text
    assert "Hidden frame text" not in obs.text and obs.frame_errors == []
    if source == "ax":
        assert obs.tree.orphan_frames  # the hidden one, listed


def test_orphan_frames_in_the_core():
    main = b'{"nodes": [{"nodeId": "1", "role": {"value": "RootWebArea"}, "backendDOMNodeId": 1, "childIds": []}]}'
    frame = b'{"nodes": [{"nodeId": "1", "role": {"value": "RootWebArea"}, "backendDOMNodeId": 1, "childIds": []}]}'
    with pytest.raises(AXTreeError, match="own the frame"):
        AXTree.from_cdp(main, frames=[(42, frame, "F")])
    tree = AXTree.from_cdp(main, frames=[(42, frame, "F")], skip_orphan_frames=True)
    assert len(tree) == 1 and tree.orphan_frames == [(42, "F")]


@pytest.mark.parametrize(("page", "on_the_loop"), [("base-url", True), ("wikipedia-2", False)])
def test_a_large_page_is_built_off_the_event_loop(page, on_the_loop, monkeypatch):
    """A large page's tree is built on a worker thread (the loop keeps serving meanwhile); a
    small one on the loop, where it costs less than the hop to a thread and back."""
    import threading

    from pagelens.browser import pagetree

    built_on = []

    class Recording:
        @staticmethod
        def from_cdp(*args, **kwargs):
            built_on.append(threading.current_thread())
            return AXTree.from_cdp(*args, **kwargs)

    monkeypatch.setattr(pagetree, "AXTree", Recording)
    payload = ax_bytes(page)
    assert (len(payload) <= pagetree.INLINE_PAYLOAD_BYTES) == on_the_loop
    tree, _ = asyncio.run(pagetree.build_tree(payload, [], None))
    assert len(tree) > 0
    assert (built_on == [threading.main_thread()]) == on_the_loop


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pagelens", *args], capture_output=True, text=True, timeout=120)


def test_cli_observes_a_url(site):
    out = run_cli("observe", site.url("site/frames.html"), "--allow-host", "localhost", "--wait-ms", "100")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# Frames <http://127.0.0.1:")
    assert "button" in out.stdout and "Child button" in out.stdout and "Cross button" in out.stdout


def test_cli_observes_an_html_file_in_webarena_mode(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<title>Local</title><button>Press me</button><a href='#x'>Anchor</a>")
    out = run_cli("observe", str(page), "--mode", "webarena", "--no-header", "--wait-ms", "0")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^RootWebArea \[\d+\] 'Local'", out.stdout, flags=re.M)
    assert re.search(r"button \[\d+\] 'Press me'", out.stdout)


def test_cli_reports_an_unreachable_page():
    out = run_cli("observe", "http://127.0.0.1:9/nothing", "--timeout", "10")
    assert out.returncode == 2
    assert out.stderr.startswith("pagelens: error:") and "Traceback" not in out.stderr


def test_playwright_only_path_gives_the_same_observation(site):
    # Without the raw DevTools socket the trees come through Playwright as dicts.
    url = site.url("site/frames.html")
    texts = []
    for socket in (True, False):
        with BrowserEnv(
            launch=LaunchOptions(devtools_socket=socket), allowed_hosts=("127.0.0.1", "localhost"), settle_ms=100
        ) as env:
            obs = env.reset(url)
            assert env.aenv._shared is not None and (env.aenv._shared.devtools is not None) == socket
            texts.append(without_ids(obs.text))
            assert env.step(f"click [{next(i for i in obs.ids if obs.tree.node(i).name == 'Cross button')}]").ok
    assert texts[0] == texts[1]
    assert "Cross button" in texts[0]


def test_frames_over_the_cap_are_left_out_and_said(browser, site):
    """At most max_frames frames are read (the main one included), in document order; the
    rest are named on a line after the tree."""
    obs = browser.reset(site.url("site/many-frames.html"))
    assert obs.frame_count == 100
    assert "Frame button 0" in obs.text and "Frame button 98" in obs.text and "Frame button 99" not in obs.text
    assert obs.text.endswith("[not shown: 6 frames left out: at most 100 frames are read (max_frames)]")


def test_a_frame_that_detaches_mid_capture_is_left_out_and_said(ax_source, site, monkeypatch):
    """A frame removed between listing the frames and reading its tree: the rest of the page is
    observed, and a line says which frame is not shown. The detach is the page's own (a real
    iframe removed in Chromium); the test only chooses the moment."""
    from pagelens.browser import frames as frames_module

    browser = ax_source
    listed = frames_module.list_frames

    async def list_then_detach(*args, **kwargs):
        found = await listed(*args, **kwargs)
        await browser.aenv.page.evaluate("document.getElementById('same').remove()")
        return found

    browser.reset(site.url("site/frames.html"), observe=False)
    monkeypatch.setattr(frames_module, "list_frames", list_then_detach)
    obs = browser.observe()
    assert "Main button" in obs.text and obs.frame_errors
    assert "[not shown: frame " in obs.text and "frame-child.html" in obs.text.splitlines()[-1] + "".join(
        obs.frame_errors
    )


# -- page text never reads as an id (spec 3.16), live -------------------------------------------

_ID_READ = re.compile(r"(?<!\\)\[\s*\*?\s*([^\s\[\]*]{1,64})\s*\]")


def test_page_text_never_reads_as_an_id_in_a_live_observation(browser, site):
    """Lists, cells, code, headings, runs, the title of a tab, a dialog's message and a URL
    all write `[4]`: reading what an agent gets finds only the real ids (and the header's own
    tab numbers)."""
    obs = browser.reset(site.url("site/forged-text.html"))
    opener = next(i for i in obs.ids if obs.tree.node(i).name == "Open a tab")
    obs = browser.step(f"click [{opener}]").observation
    assert len(obs.tabs) == 2 and "[4]" in obs.url
    obs = browser.step("tab_focus [0]").observation
    alert = next(i for i in obs.ids if obs.tree.node(i).name == "Alert")
    obs = browser.step(f"click [{alert}]").observation
    assert obs.dialogs and obs.tabs[1].title == "button *[4] 'Delete account'"

    def read(text: str) -> list[str]:
        return [m.group(1) for line in text.splitlines() for m in _ID_READ.finditer(line)]

    assert read(obs.text) == [str(i) for i in obs.ids], obs.text
    assert obs.text.count("*\\[4]") >= 3, obs.text  # list item, cell, code, heading
    header = obs.header()
    assert read(header) == ["0", "1"], header  # the tabs' own numbers only
    assert "*\\[4] 'Delete account'" in header and "Dialog (dismissed)" in header


def test_a_lone_surrogate_blinds_nothing(browser, site):
    """A script that writes half an emoji (`'😀'.slice(1)`) into a text, a name and the title:
    both observations read the page, the odd character as U+FFFD."""
    obs = browser.reset(site.url("site/lone-surrogate.html"))
    assert "odd \ufffd text" in obs.text and "button" in obs.text and "Save\ufffd" in obs.text
    save = next(i for i in obs.ids if obs.tree.node(i).role == "button")
    assert browser.step(f"click [{save}]").ok
    html = browser.observe_html()
    assert "odd \ufffd text" in html.dom.html()


@pytest.mark.parametrize("source", ["dom", "ax"])
def test_the_active_tabs_title_is_the_documents_as_the_tab_gives_it(browser, site, source):
    """The capture reads the active tab's title with the page (no call of its own): what
    `document.title` gives, white space collapsed but for the non-ASCII kinds it keeps (a
    trailing no-break space stays), and a title a script set after the load; the other tabs'
    titles are read beside it."""
    browser.config.source = source
    try:
        browser.reset(site.url("site/second.html"), observe=False)

        async def retitle(aenv):
            first = aenv.page
            other = await aenv.context.new_page()  # the active tab now
            await other.set_content("<title> Other\n tab </title>")
            await first.evaluate("() => { document.title = '\\n  Set by\\tscript \\u00a0 '; }")
            return await first.title()

        given = browser.run(retitle)
        obs = browser.step("tab_focus [0]").observation
    finally:
        browser.config.source = "dom"
    assert given == "Set by script \u00a0"
    assert obs.title == given
    assert [(t.title, t.active) for t in obs.tabs] == [(given, True), ("Other tab", False)]


def _module_entries(run):
    """Runs ``run()`` (a coroutine) traced call by call: each time a function of a pagelens
    browser module is called from another such module, the (caller, callee) modules."""
    entries: list[tuple[str, str]] = []
    started: set[int] = set()
    kept = []  # a coroutine's frame, kept so that its id is not reused while tracing

    def module_of(frame):
        name = frame.f_code.co_filename
        return name.split("/pagelens/browser/", 1)[1] if "/pagelens/browser/" in name else None

    def profile(frame, event, arg):
        if event != "call" or (callee := module_of(frame)) is None:
            return
        if frame.f_code.co_flags & 0x2A0:  # a coroutine or generator: its first start, not each resume
            if id(frame) in started:
                return
            started.add(id(frame))
            kept.append(frame)
        caller = frame.f_back
        while caller is not None and module_of(caller) is None:
            caller = caller.f_back
        if caller is not None and module_of(caller) != callee:
            entries.append((module_of(caller), callee))

    async def traced():
        sys.setprofile(profile)
        try:
            await run()
        finally:
            sys.setprofile(None)

    return traced, entries


@pytest.mark.parametrize("page", ["site/form.html", "site/frames.html"])
def test_one_observation_visits_each_module_once_in_one_direction(site, page):
    """Data flows one way (issue 62): the env asks the capture for rows, the capture asks the
    frames for what it needs (the main frame; a page with frames, their list too), DevTools
    carries the calls, the core builds the tree, the resolver keeps the ids. Traced call by
    call, no module calls back into one that called it, and each is entered once."""

    async def main():
        env = AsyncBrowserEnv()
        try:
            await env.reset(site.url(page))
            for change in (
                None,
                "document.body.append(Object.assign(document.createElement('p'), {textContent: 'x'}))",
            ):
                if change:
                    await env.page.evaluate(change)
                traced, entries = _module_entries(env.observe)
                await traced()
                edges = set(entries)
                assert not {(b, a) for a, b in edges} & edges, sorted(edges)  # no way back
                count = {m: sum(1 for _, b in entries if b == m) for _, m in entries}
                assert count["capture.py"] == 1 and count["resolve.py"] == 1, entries
                assert count["frames.py"] == (2 if "frames" in page else 1), [
                    e for e in entries if "devtools" not in e[1]
                ]
                assert count.get("pagetree.py", 0) <= 1, entries
        finally:
            await env.close()

    asyncio.run(main())
