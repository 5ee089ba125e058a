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
]


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


def test_the_cli_reports_the_family_in_one_line(tmp_path: Path):
    import subprocess
    import sys

    bad = tmp_path / "tree.json"
    bad.write_text("{")
    out = subprocess.run([sys.executable, "-m", "pagelens", "observe", str(bad)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and out.stderr.startswith("pagelens: error: malformed accessibility-tree JSON")
    assert "Traceback" not in out.stderr
