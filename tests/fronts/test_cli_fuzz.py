"""Hypothesis over the command line: any arguments to the offline commands (odd numbers,
paths that are missing, folders, empty or odd files, unknown choices) end with exit 0, 1 or 2
and a message, never a traceback; nonsense exits non-zero naming what is wrong."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagelens.cli import build_parser, main

ODD_VALUES = st.sampled_from(
    [
        "",
        "0",
        "-1",
        "1",
        "3",
        "99999999999999999999",
        "nan",
        "inf",
        "1e9",
        "x",
        "é",
        "\ufeff",
        "-",
        "--",
        "gpt2",
        "a" * 300,
    ]
)


def _options(command: list[str]) -> list[tuple[str, bool]]:
    """(option, takes a value) of a command, read from the parser itself."""
    parser = build_parser()
    for word in command:
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = sub.choices[word]  # type: ignore[attr-defined]
    return [
        (a.option_strings[-1], a.nargs != 0)
        for a in parser._actions
        if a.option_strings and a.option_strings[-1] not in ("--help", "--address", "--engine")
    ]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """Inputs of each kind a command may be given, good and bad."""
    root = tmp_path_factory.mktemp("inputs")
    (root / "page.html").write_text("<p>a <a href='/x'>link</a></p>")
    (root / "empty.html").write_bytes(b"")
    (root / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (root / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + json.dumps({"type": "run", "task": "t"}).encode() + b"\n")
    (root / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (root / "steps.jsonl").write_text(
        json.dumps(
            {"workflow_id": "w", "step": 0, "objective": "o", "url": "https://a.test/", "html": "<a>go</a>"}
            | {"action": "click", "target_selector": "a", "description": "d"}
        )
        + "\n"
    )
    (root / "folder").mkdir()
    return {
        name: str(root / name)
        for name in ("page.html", "empty.html", "binary.bin", "bom.jsonl", "deep.json", "steps.jsonl", "folder")
    } | {"missing": str(root / "missing.txt")}


def run_cli(argv: list[str], cwd: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(cwd):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return int(code or 0), err.getvalue()


COMMANDS = {
    # command: the positional arguments it takes (each drawn from the files, or left out)
    ("observe",): 0,
    ("clean",): 1,
    ("report",): 1,
    ("score-steps",): 2,
    ("eval",): 1,
    ("prep",): 2,
    ("study", "report"): 1,
    ("study", "compare"): 2,
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(COMMANDS)), st.data())
def test_any_arguments_end_in_a_message_never_a_traceback(files, tmp_path_factory, command, data):
    options = _options(list(command))
    chosen = data.draw(st.lists(st.sampled_from(options), max_size=4, unique=True)) if options else []
    argv = list(command)
    for option, takes_value in chosen:
        argv.append(option)
        if takes_value:
            argv.append(data.draw(st.one_of(ODD_VALUES, st.sampled_from(sorted(files.values())))))
    for _ in range(COMMANDS[command]):
        argv.append(data.draw(st.sampled_from(sorted(files.values()) + [""])))
    if command == ("prep",) and len(argv) >= 3:
        argv[-1] = str(tmp_path_factory.mktemp("out") / "prep")  # where the examples go: a new folder
    # `observe` with no page renders the page shipped in the package (offline).
    code, err = run_cli(argv, tmp_path_factory.mktemp("cwd"))
    assert code in (0, 1, 2), (argv, code, err[-1500:])
    assert "Traceback" not in err, (argv, err[-3000:])
    if code != 0:
        assert err.strip(), (argv, "a failure says why")
