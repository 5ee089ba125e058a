"""One error family: whatever the package raises on bad input is a ``pagelens.PagelensError``
(and the built-in class that says what kind of mistake it is)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import pagelens
from pagelens import AXTree, Dom, PagelensError, Tokenizer, chunk, count_tokens
from pagelens.actions import parse_action
from pagelens.agents.planning import PlanTree
from pagelens.agents.step import parse_policy
from pagelens.browser.allowlist import HostAllowList
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.datasets import PrepConfig
from pagelens.envs.miniwob import task_url
from pagelens.evaluation import get_variant, load_tasks
from pagelens.evaluation.harness import Harness

PAYLOAD = b'{"nodes": [{"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "t"}}]}'


def tree():
    return AXTree.from_cdp(PAYLOAD)


def dom():
    return Dom.parse("<p id=a>x</p>")


BAD_CALLS = [
    # (call, the built-in class it also is, words of the message)
    (lambda: AXTree.from_cdp(b"{"), ValueError, "malformed accessibility-tree JSON"),
    (lambda: AXTree.from_cdp(12), TypeError, "payload"),
    (lambda: AXTree.from_cdp(PAYLOAD, clickable=["x"]), TypeError, "clickable"),
    (lambda: AXTree.from_cdp(PAYLOAD, frames=[{"payload": PAYLOAD}]), ValueError, "owner"),
    (lambda: tree().render("markdown"), ValueError, "unknown mode"),
    (lambda: tree().render(tokenizer="bpe9"), ValueError, "unknown tokenizer"),
    (lambda: tree().render(max_tokens=0), ValueError, "max_tokens"),
    (lambda: tree().node(999), KeyError, "999"),
    (lambda: Tokenizer("bpe9"), ValueError, "unknown tokenizer"),
    (lambda: count_tokens("x", "bpe9"), ValueError, "unknown tokenizer"),
    (lambda: chunk("<p>x</p>", 0), ValueError, "max_tokens"),
    (lambda: chunk("<p>x</p>", 10, kind="pdf"), ValueError, "unknown chunk kind"),
    (lambda: Dom.parse(12), TypeError, ""),
    (lambda: dom().clean(profile="tidy"), ValueError, "unknown cleaning profile"),
    (lambda: dom().clean(keep=[999]), ValueError, "no element with node id 999"),
    (lambda: dom().select("p[["), ValueError, "invalid CSS selector"),
    (lambda: dom().find_path("html/body"), ValueError, "invalid node path"),
    (lambda: parse_action("fly [3]"), ValueError, "fly"),
    (lambda: PlanTree().prune(42, "done"), ValueError, "42"),
    (lambda: parse_policy("no front matter"), ValueError, ""),
    (lambda: HostAllowList([]), ValueError, "at least one host"),
    (lambda: AsyncBrowserEnv(speed=3), TypeError, "speed"),
    (lambda: PrepConfig(profile="tidy"), ValueError, "tidy"),
    (lambda: task_url("no-such-task"), ValueError, "no-such-task"),
    (lambda: get_variant("papers"), Exception, "papers"),
    (lambda: load_tasks("/no/such/tasks.json"), ValueError, "no such task file"),
    (lambda: Harness({}, combine="median"), ValueError, "median"),
    # Integers out of range are the family's, not OverflowError (issue 17).
    (lambda: tree().render(max_tokens=-1), ValueError, "max_tokens must be 0 or more"),
    (lambda: tree().subtree([2**63]), ValueError, "out of range"),
    (lambda: tree().subtree([1], max_nodes=-1), ValueError, "max_nodes"),
    (lambda: tree().node(10**30), KeyError, "out of range"),
    (lambda: tree().node("1"), TypeError, "node id must be an int"),
    (lambda: AXTree.from_cdp(PAYLOAD, max_depth=-1), ValueError, "max_depth"),
    (lambda: AXTree.from_cdp(PAYLOAD, frames=[(2**70, PAYLOAD)]), ValueError, "frame owner"),
    (lambda: dom().element(-1), KeyError, "-1"),
    (lambda: dom().start_tag(2**40), KeyError, str(2**40)),
    (lambda: dom().clean(keep=[-1]), ValueError, "no element with node id -1"),
    (lambda: dom().clean(max_value_length=-1), ValueError, "max_value_length"),
    (lambda: chunk("<p>x</p>", -1), ValueError, "max_tokens"),
    (lambda: Dom.parse(b"x", encoding="klingon"), ValueError, "unknown encoding"),
    (lambda: parse_action("click ["), ValueError, "closing bracket"),
    (lambda: parse_action("Action: hover [12"), ValueError, "closing bracket"),
    (lambda: parse_action("click [" + "9" * 5000 + "]"), ValueError, "not one of the page's"),
]


def test_membership_of_impossible_ids_is_false():
    assert -1 not in dom() and 2**40 not in dom() and 10**30 not in tree()


@pytest.mark.parametrize("call,builtin,words", BAD_CALLS, ids=range(len(BAD_CALLS)))
def test_bad_input_raises_the_family(call, builtin, words):
    with pytest.raises(PagelensError) as e:
        call()
    assert isinstance(e.value, builtin), type(e.value).__mro__
    assert words in str(e.value)


def test_every_exception_class_of_the_package_is_in_the_family():
    found = {}
    for info in pkgutil.walk_packages(pagelens.__path__, "pagelens."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.startswith("pagelens"):
                found[f"{obj.__module__}.{name}"] = obj
    assert len(found) >= 20
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, PagelensError))
    assert not outside


def cli(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "pagelens", *args], capture_output=True, text=True, timeout=60)


def test_the_cli_reports_the_family_in_one_line(tmp_path: Path):
    import gzip

    bad = tmp_path / "tree.json"
    bad.write_text("{")
    page = tmp_path / "page.html"
    page.write_text("<p>hello</p>")
    truncated = tmp_path / "page.html.gz"
    truncated.write_bytes(gzip.compress(b"<p>hello</p>" * 100)[:40])
    cases = [
        (["observe", str(bad)], "malformed accessibility-tree JSON"),
        (["observe", str(truncated)], "not a complete gzip file"),
        (["clean", str(truncated)], "not a complete gzip file"),
        (["clean", str(page), "--max-tokens", "0"], "max_tokens must be at least 1"),
        (["clean", str(page), "--max-tokens", "-5"], "max_tokens must be 0 or more"),
        (["clean", str(page), "--encoding", "klingon"], "unknown encoding"),
        (["observe", "--max-tokens", "-1"], "max_tokens must be 0 or more"),
        (["clean", str(page), "--tokenizer", "o200k_base", "--max-tokens", "10"], None),
    ]
    for args, message in cases:
        out = cli(*args)
        assert "Traceback" not in out.stderr, (args, out.stderr[-300:])
        if message is None:
            assert out.returncode == 0, out.stderr
        else:
            assert out.returncode == 2 and out.stderr.startswith("pagelens: error: ") and message in out.stderr, (
                args,
                out.stderr,
            )
