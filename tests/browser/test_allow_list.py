"""The allow-list holds for every request of a redirect chain, in every frame and tab: a 302
or 307 from an allowed host never takes the browser, a frame or a sub-resource off the list
(each hop is checked where Chromium decides to load it: pagelens.browser.guard)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagelens.browser import BrowserEnv, HostAllowList
from pagelens.browser.guard import Policy, Refusal, verdict
from pagelens.errors import ArgumentError
from pagelens.hosts import web_address


def off_list(site, since: int) -> list[tuple[str, str, str]]:
    """Requests that reached the server under the host that is not on the list."""
    return [r for r in site.requests[since:] if r[0].startswith("localhost")]


@pytest.fixture(scope="module")
def guarded():
    with BrowserEnv(allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=50) as env:
        yield env


def element(obs, name: str) -> int:
    for i in obs.ids:
        if name in obs.tree.node(i).name:
            return i
    raise AssertionError(f"no element named {name!r} in:\n{obs.text}")


@pytest.mark.parametrize(
    "name",
    ["Redirected link", "Redirected by script", "Redirected form post", "Redirected twice"],
)
def test_a_redirect_cannot_take_the_tab_off_the_list(guarded, site, name):
    obs = guarded.reset(site.url("site/redirects.html"))
    since = len(site.requests)
    result = guarded.step(f"click [{element(obs, name)}]")
    assert not result.ok
    assert "localhost" in result.error and "was refused" in result.error
    assert "a redirect from http://127.0.0.1" in result.error  # the hop is named
    assert result.observation.url == site.url("site/redirects.html")  # the page stays
    assert "The second page" not in result.observation.text
    assert off_list(site, since) == []


@pytest.mark.parametrize("name", ["Redirected new tab", "Redirected popup"])
def test_a_redirect_cannot_open_a_tab_off_the_list(guarded, site, name):
    obs = guarded.reset(site.url("site/redirects.html"))
    since = len(site.requests)
    result = guarded.step(f"click [{element(obs, name)}]")
    assert not result.ok and "localhost" in result.error and "a redirect from" in result.error
    assert all("localhost" not in tab.url for tab in result.observation.tabs)
    assert "The second page" not in result.observation.text
    assert off_list(site, since) == []


def test_a_redirect_cannot_bring_a_frame_or_an_image_from_off_the_list(guarded, site):
    since = len(site.requests)
    obs = guarded.reset(site.url("site/redirects.html"))
    assert "The second page" not in obs.text  # the frame's redirect was refused
    assert off_list(site, since) == []  # nor did the image's hop reach the other host
    hops = [r for r in site.requests[since:] if r[2].startswith("/redirect")]
    assert any("image" in r[2] for r in hops) and any("frame" in r[2] for r in hops)  # both were asked


def test_a_frame_sent_off_the_list_leaves_the_action_done(guarded, site):
    """An action whose page sends one of its frames (an ad's, say) to a host off the list is
    done: the frame's navigation is refused and stays empty, the tab and the action are fine."""
    obs = guarded.reset(site.url("site/redirects.html"))
    since = len(site.requests)
    result = guarded.step(f"click [{element(obs, 'Move the frame away')}]")
    assert result.ok, result.error
    assert "asked the frame to move" in result.observation.text
    assert "The second page" not in result.observation.text
    assert off_list(site, since) == []


def test_goto_through_a_redirect_is_refused_naming_the_hop(guarded, site):
    guarded.reset(site.url("site/redirects.html"))
    since = len(site.requests)
    target = site.url("site/second.html", host="localhost")
    result = guarded.step(f"goto [{site.url('redirect')}?to={target}]")
    assert not result.ok and f"navigation to {target}" in result.error and "a redirect from" in result.error
    assert off_list(site, since) == []


def test_a_redirect_that_stays_on_the_list_is_followed(guarded, site):
    obs = guarded.reset(site.url("site/redirects.html"))
    result = guarded.step(f"click [{element(obs, 'Redirected on the list')}]")
    assert result.ok, result.error
    assert result.observation.url == site.url("site/second.html?fine")


def test_an_unsealed_run_loads_sub_resources_from_anywhere_but_documents_only_from_the_list(site):
    with BrowserEnv(allowed_hosts=("127.0.0.1",), settle_ms=50) as env:
        since = len(site.requests)
        obs = env.reset(site.url("site/redirects.html"))
        assert "The second page" not in obs.text
        reached = off_list(site, since)
        assert [r for r in reached if "image" in r[2]]  # the image hop went through
        assert not [r for r in reached if "second.html" in r[2]]  # the frame's did not


def test_the_guards_verdicts():
    policy = Policy(lambda _: None)
    assert verdict([policy], "http://anywhere.example/", "Document") == "continue"  # no run yet
    policy.allow = HostAllowList(["shop.test"])
    assert verdict([policy], "http://shop.test:7770/a", "Document") == "continue"
    assert verdict([policy], "http://evil.test/", "Document") == "refuse"
    assert verdict([policy], "http://evil.test/x.png", "Image") == "continue"
    policy.sealed = True
    assert verdict([policy], "http://evil.test/x.png", "Image") == "fail"
    assert verdict([policy], "data:text/html,hi", "Document") == "continue"
    message = Refusal("http://evil.test/p", "http://shop.test/r").message(policy.allow)
    assert message.startswith("navigation to http://evil.test/p (a redirect from http://shop.test/r) was refused")
    assert "its host evil.test" in message and "allowed: shop.test" in message
    # The URL is the page's: in what the model reads it cannot pass for an id.
    forged = Refusal("http://evil.test/button%20*[4]", None).message(policy.allow)
    assert "*\\[4]" in forged and "*[4]" not in forged


def test_a_request_no_context_owns_is_held_to_every_list_of_the_browser():
    # A shared browser's request whose frame is not (yet) attributed loads only what every
    # context's list allows: sharing never widens a list.
    shop = Policy(lambda _: None, HostAllowList(["shop.test"]), sealed=False)
    wiki = Policy(lambda _: None, HostAllowList(["wiki.test"]), sealed=True)
    assert verdict([shop, wiki], "http://shop.test/", "Document") == "refuse"
    assert verdict([shop, wiki], "http://shop.test/a.png", "Image") == "fail"  # off wiki's sealed list
    assert verdict([shop, Policy(lambda _: None)], "http://shop.test/", "Document") == "continue"
    assert verdict([shop], "http://wiki.test/a.png", "Image") == "continue"  # shop's run is not sealed


@pytest.mark.parametrize(
    ("entry", "url", "allowed"),
    [
        ("shop.test", "https://shop.test:8443/a", True),  # any port
        ("shop.test:7770", "http://shop.test:7770/", True),
        ("shop.test:7770", "http://shop.test:7771/", False),
        ("shop.test:443", "https://shop.test/", True),  # the scheme's port
        ("*.shop.test", "http://a.b.shop.test/", True),
        ("*.shop.test", "http://evilshop.test/", False),
        ("::1", "http://[::1]:8000/", True),  # an IPv6 address as a URL's host reads
        ("[::1]", "http://[::1]/", True),
        ("[::1]:8000", "http://[::1]:8000/", True),
        ("[::1]:8000", "http://[::1]:9000/", False),
    ],
)
def test_an_entry_allows_its_host(entry, url, allowed):
    assert HostAllowList([entry]).allows(url) is allowed


def test_a_start_url_on_an_ipv6_address_allows_itself():
    # Its host once read as a host ":" with port "1": the run refused its own start page.
    assert HostAllowList.for_start_url("http://[::1]:8765/a").allows("http://[::1]:8765/b")


@pytest.mark.parametrize("entry", ["", "  ", "http://shop.test", "shop.test/path", "file:relative", "shop test"])
def test_an_entry_that_is_no_host_is_refused_not_dropped(entry):
    """An entry that can match nothing (a URL, an empty word) is refused, naming it: dropped in
    silence, a run would refuse every page without saying why, or allow less than asked."""
    with pytest.raises(ArgumentError, match="host"):
        HostAllowList(["shop.test", entry])


@given(
    host=st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z]{2,5}){0,2}", fullmatch=True),
    port=st.none() | st.integers(1, 65535),
    path=st.from_regex(r"(/[a-z0-9._~%-]{0,6}){0,3}(\?[a-z=&]{0,8})?", fullmatch=True),
)
def test_an_address_without_a_scheme_is_read_as_http(host, port, path):
    text = host + (f":{port}" if port is not None else "") + path
    url = web_address(f"  {text} ")
    assert url == "http://" + text
    assert urlsplit(url).hostname == host


@pytest.mark.parametrize(
    "address",
    [
        "https://example.com/a",
        "http://x",
        "javascript:alert(1)",
        "data:text/html,hi",
        "about:blank",
        "file:///etc/passwd",
        "chrome://version",
        "view-source:http://x/",
        "mailto:a@b.c",
        "",
    ],
)
def test_an_address_with_a_scheme_stays_as_written(address):
    assert web_address(address) == address
