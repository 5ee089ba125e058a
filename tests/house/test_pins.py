"""The check of the sets installed with --no-deps (`.ci/pins.py`, run by `make pins` in a fresh
venv) on distributions made here: a requirement nobody installed is found (issue 63: litellm's
python-dotenv), so is one at a version it refuses and one an extra asks for; an allowed pair is
not; the real requirement file lists every distribution the check needs to pass."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

SCRIPT = ROOT / ".ci" / "pins.py"


def _pins():
    spec = importlib.util.spec_from_file_location("pins_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dist(site: Path, name: str, version: str, *requires: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


@pytest.fixture
def pins():
    return _pins()


def test_a_requirement_nobody_installed_is_found(pins, tmp_path):
    _dist(tmp_path, "litellm", "1.110.2", "python-dotenv<2,>=1.0.0", "httpx>=0.23")
    _dist(tmp_path, "httpx", "0.28.1")
    problems = pins.unmet_requirements(pins.installed([str(tmp_path)]))
    assert problems == ["litellm requires python-dotenv<2,>=1.0.0: not installed"]
    _dist(tmp_path, "python-dotenv", "1.2.4")
    assert pins.unmet_requirements(pins.installed([str(tmp_path)])) == []


def test_a_version_refused_and_an_extra_asked_for_are_found(pins, tmp_path):
    _dist(tmp_path, "dataclasses-json", "0.6.7", "marshmallow<4.0.0,>=3.18.0")
    _dist(tmp_path, "marshmallow", "4.4.0")
    _dist(tmp_path, "app", "1.0", "tool[cli]>=1")
    _dist(tmp_path, "tool", "1.2", 'typer>=0.16; extra == "cli"', 'rich; extra == "other"')
    problems = pins.unmet_requirements(pins.installed([str(tmp_path)]))
    assert sorted(problems) == [
        "dataclasses-json requires marshmallow<4.0.0,>=3.18.0: marshmallow 4.4.0 is installed",
        'tool[cli] requires typer>=0.16; extra == "cli": not installed',
    ]


def test_an_allowed_pair_is_not_a_finding(pins, tmp_path):
    _dist(tmp_path, "browsergym-core", "0.14.3", "playwright==1.44")
    _dist(tmp_path, "playwright", "1.65.2")
    _dist(tmp_path, "other", "1.0", "playwright==1.44")
    problems = pins.unmet_requirements(pins.installed([str(tmp_path)]))
    assert problems == ["other requires playwright==1.44: playwright 1.65.2 is installed"]


def test_nonsense_input_exits_non_zero_naming_it(tmp_path):
    missing = tmp_path / "nope.txt"
    done = subprocess.run([sys.executable, str(SCRIPT), str(missing)], capture_output=True, text=True)
    assert done.returncode == 2 and str(missing) in done.stderr


def test_the_requirement_file_pins_what_litellm_imports(pins):
    # The finding of issue 63, kept: litellm imports dotenv at its import time.
    assert "python-dotenv" in pins.pinned_names([ROOT / "requirements" / "agentlab.txt"])
