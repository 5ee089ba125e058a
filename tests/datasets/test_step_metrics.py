"""Step-level metrics (issue: ScribeAgent live, part 3): Mind2Web's element accuracy,
operation F1 and step success rate over a real `pagelens prep` output and hand-made
predictions, every value computed by hand below; bad prediction files counted, not fatal;
`predict-steps` resumable over a local OpenAI-compatible server."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagelens.datasets import PrepConfig, read_output, run_local
from pagelens.datasets.records import Example
from pagelens.datasets.steps import example_id, operation, predict_steps, score_steps, token_f1
from pagelens.errors import InputFileError
from pagelens.llm import LLMClient
from support.llm_server import LLMServer

EXAMPLE_FIELDS = {f.name: {"str": str, "int": int, "bool": bool}[str(f.type)] for f in dataclasses.fields(Example)}

PAGE = """<html><body><h1>Shop</h1>
<form><label>City <input id="city" type="text"></label>
<label>Note <input id="note" type="text"></label>
<select id="colour"><option>Red</option><option>Blue</option></select>
<button id="go">Search</button></form><a id="help" href="/help">Help</a></body></html>"""

# (workflow, step, url, action, text, target)
STEPS = [
    ("A", 0, "https://a.test/shop", "click", "", "#go"),
    ("A", 1, "https://a.test/shop", "type", "new york", "#city"),
    ("A", 2, "https://a.test/shop", "type", "x", "#note"),
    ("B", 0, "https://b.test/shop", "select", "Blue", "#colour"),
    ("B", 1, "https://b.test/shop", "click", "", "#help"),
]


@pytest.fixture(scope="module")
def prep_out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("steps")
    records = [
        {
            "workflow_id": w,
            "step": k,
            "objective": "Buy",
            "url": u,
            "html": PAGE,
            "action": a,
            "text": t,
            "target_selector": sel,
        }
        for w, k, u, a, t, sel in STEPS
    ]
    (folder / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = folder / "out"
    run_local([str(folder / "in.jsonl")], str(out), PrepConfig(max_tokens=2048), workers=1)
    examples, rejects = read_output(out)
    assert not rejects and len(examples) == len(STEPS)
    return out, {(e["workflow_id"], e["step"]): e for e in examples}


def reply(node: int, action: str, target: str = "<button>") -> str:
    return f"9.\nDescription: whatever\nAction: {action}\nNode: {node}\nTarget: {target}"


def test_mind2web_metrics_by_hand(prep_out, tmp_path):
    out, ex = prep_out
    other = ex[("B", 1)]["target_node"]  # the link: a wrong element for B/0
    lines = [
        # A/0: right element, CLICK = CLICK -> success.
        {"id": example_id(ex[("A", 0)]), "reply": reply(ex[("A", 0)]["target_node"], "mouse_click_action")},
        # A/1: right element, "TYPE new york city" vs "TYPE new york": P 3/4, R 1 -> F1 6/7.
        {
            "id": example_id(ex[("A", 1)]),
            "reply": reply(ex[("A", 1)]["target_node"], "keyboard_sequence_action [new york city]"),
        },
        # A/2: a click on the <input>, read as typing: "TYPE" vs "TYPE x": P 1, R 1/2 -> F1 2/3.
        {
            "id": example_id(ex[("A", 2)]),
            "reply": reply(ex[("A", 2)]["target_node"], "mouse_click_action", '<input id="note">'),
        },
        # B/0: wrong element, right operation: F1 1, no success.
        {"id": example_id(ex[("B", 0)]), "reply": reply(other, "select_action [Blue]")},
        # Not used: an id no example has, a second reply for A/0, a record without a reply.
        {"id": "Z/0/0", "reply": reply(1, "mouse_click_action")},
        {"id": example_id(ex[("A", 0)]), "reply": reply(0, "hover_action")},
        {"id": example_id(ex[("B", 1)])},
    ]
    path = tmp_path / "pred.jsonl"
    # B/1's reply is the torn last line: missing, wrong in every metric.
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"id": "B/1/0", "reply": "1.\\nDesc')
    scores = score_steps(out, path)
    assert scores["steps"] == 5
    assert scores["element_accuracy"] == pytest.approx(3 / 5)
    assert scores["operation_f1"] == pytest.approx((1 + 6 / 7 + 2 / 3 + 1 + 0) / 5)
    assert scores["step_success_rate"] == pytest.approx(1 / 5)
    a, b = scores["per_website"]["a.test"], scores["per_website"]["b.test"]
    assert (a["steps"], a["element_accuracy"], a["step_success_rate"]) == (3, 1.0, pytest.approx(1 / 3))
    assert a["operation_f1"] == pytest.approx((1 + 6 / 7 + 2 / 3) / 3)
    assert (b["steps"], b["element_accuracy"], b["operation_f1"], b["step_success_rate"]) == (2, 0.0, 0.5, 0.0)
    assert scores["counts"] == {
        "examples": 5,
        "predictions": 5,
        "unknown_ids": 1,
        "torn_lines": 1,
        "malformed": 1,
        "duplicates": 1,
        "unreadable_replies": 0,
        "steps_without_prediction": 1,
    }


def test_token_f1_and_operations_are_mind2web_s():
    assert token_f1("TYPE new york", "TYPE new york") == 1.0
    assert token_f1("", "") == 1.0 and token_f1("CLICK", "") == 0.0
    assert token_f1("TYPE , new", "TYPE new") == 1.0  # a lone punctuation token is dropped
    assert token_f1("CLICK", "TYPE x") == 0.0
    assert token_f1("SELECT Blue Red", "SELECT Blue") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert operation("mouse_click_action", "ignored") == "CLICK"
    assert operation("keyboard_sequence_action", " new   york ") == "TYPE new york"
    assert operation("keyboard_combination_action", "Enter") == "PRESS Enter"


def test_predict_steps_resumes_and_the_cli_scores(prep_out, tmp_path):
    out, ex = prep_out
    by_prompt = {e["prompt"]: e for e in ex.values()}
    asked: list[str] = []

    def model(messages):
        e = by_prompt[messages[-1]["content"]]
        asked.append(example_id(e))
        return reply(e["target_node"], "mouse_click_action")

    server = LLMServer(model)
    try:
        llm = LLMClient(model="scripted", base_url=server.base_url, backoff=0.01)
        path = tmp_path / "p.jsonl"
        first = next(iter(ex.values()))
        # A killed run: one line done, one torn.
        path.write_text(
            json.dumps({"id": example_id(first), "reply": reply(first["target_node"], "mouse_click_action")})
            + '\n{"id": "A/1/0", "re'
        )
        seen: list[tuple[int, int]] = []
        counts = predict_steps(out, path, llm, workers=2, progress=lambda done, total: seen.append((done, total)))
        assert counts == {"examples": 5, "already_done": 1, "predicted": 4}
        assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
        assert sorted(asked) == sorted(example_id(e) for e in ex.values() if e is not first)
        assert predict_steps(out, path, llm, workers=2)["predicted"] == 0  # nothing left
    finally:
        server.close()
    run = subprocess.run(
        [sys.executable, "-m", "pagelens", "score-steps", str(out), str(path), "--json"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    scores = json.loads(run.stdout)
    # Every element right; clicks where typing and selecting were asked lose operation F1.
    assert scores["element_accuracy"] == 1.0 and scores["counts"]["torn_lines"] == 0
    assert scores["step_success_rate"] == pytest.approx(2 / 5)  # the two clicks


# -- reading replies and voting, as ScribeAgent's WebArena agent does -------------------------------


def test_replies_are_read_as_scribeagent_reads_them():
    from pagelens.actions import ActionError
    from pagelens.stepformat.lines import parse_step, vote

    step = parse_step(
        '3.\nDescription: Type  "ab"\nAction: keyboard_sequence_action [ab]\nNode: 42 42 42\nTarget: <input node="42">'
    )
    assert (step.action, step.text, step.node, step.description) == ("keyboard_sequence_action", "ab", 42, 'Type  "ab"')
    # The node is the first word after "Node:" when it is a number, else the first node="N".
    fallback = parse_step('Description: x\nAction: mouse_click_action\nNode: the link\nTarget: <a node="7">')
    assert fallback.node == 7
    assert parse_step("Description: x\nAction: click\nNode: 5\nTarget: <b>").action == "mouse_click_action"
    assert parse_step("Description: done\nAction: stop [42 items]\nNode: -\nTarget: none").text == "42 items"
    for bad in (
        "Description: x\nAction: mouse_click_action\nNode: 5",  # no Target line
        "Description: x\nAction: mouse_click_action\nNode: \nTarget: <b>",  # an empty field
        "Description: x\nAction: mouse_click_action\nNode: 99999999999\nTarget: <b>",
    ):
        with pytest.raises(ActionError):
            parse_step(bad)
    # A hostile reply is read in linear time.
    import time

    t = time.perf_counter()
    with pytest.raises(ActionError):
        parse_step("Description: " + "x" * 200_000 + "\nAction: " + " " * 100_000)
    assert time.perf_counter() - t < 1.0
    # Votes: most votes win; ties go to the larger id; the longest answer is the text.
    a = [
        parse_step(f"Description: {d}\nAction: mouse_click_action\nNode: {n}\nTarget: <b>")
        for d, n in (("short", 3), ("a longer one", 3), ("x", 9), ("y", 8), ("z", 8))
    ]
    assert vote(a[:3]).description == "a longer one"
    assert vote([a[2], a[3]]).node == 9
    assert vote(a).node in (3, 8) and vote(a).node == 8  # 3 and 8 tie at two votes: the larger id
    assert vote([]) is None


# -- a damaged prep output: named, never a traceback ------------------------------------------------


def _damage_cases(tmp_path_factory, prep_out):
    """(name, the damaged copy of the output) for a Parquet and a JSON-lines output."""
    import shutil

    out, _ = prep_out
    base = tmp_path_factory.mktemp("damaged")
    as_jsonl = base / "jsonl"
    shutil.copytree(out, as_jsonl)
    for p in (as_jsonl / "examples").glob("*.parquet"):
        rows = read_output(out)[0]
        (as_jsonl / "examples" / (p.stem + ".jsonl")).write_text("".join(json.dumps(r) + "\n" for r in rows))
        p.unlink()
    good_line = (next((as_jsonl / "examples").glob("*.jsonl"))).read_text().splitlines()[0]
    row = json.loads(good_line)

    def copy(name, source):
        folder = base / name
        shutil.copytree(source, folder)
        return folder

    def examples_file(folder, suffix):
        return next((folder / "examples").glob(f"*{suffix}"))

    cases = []
    garbage = copy("garbage-parquet", out)
    examples_file(garbage, ".parquet").write_bytes(b"PAR1 not really")
    cases.append(("garbage-parquet", garbage))
    cut = copy("cut-parquet", out)
    f = examples_file(cut, ".parquet")
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    cases.append(("cut-parquet", cut))
    for name, line in [
        ("not-utf8", b"\xff\xfe{}"),
        ("not-json", b"{oops"),
        ("deep", b"[" * 100_000 + b"]" * 100_000),
        ("a-list", b"[1, 2]"),
        ("missing-field", json.dumps({k: v for k, v in row.items() if k != "target_node"}).encode()),
        ("wrong-type", json.dumps({**row, "step": "3"}).encode()),
        ("bool-for-int", json.dumps({**row, "chunk_index": True}).encode()),
    ]:
        folder = copy(name, as_jsonl)
        f = examples_file(folder, ".jsonl")
        f.write_bytes(f.read_bytes() + line + b"\n")
        cases.append((name, folder))
    rejects = copy("bad-reject", as_jsonl)
    (rejects / "rejects").mkdir(exist_ok=True)
    (rejects / "rejects" / "r.jsonl").write_text('{"source": 3}\n')
    cases.append(("bad-reject", rejects))
    return cases


def test_a_damaged_prep_output_is_named_by_score_steps_and_predict_steps(tmp_path_factory, prep_out, tmp_path):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("")
    for name, folder in _damage_cases(tmp_path_factory, prep_out):
        for command in (
            ["score-steps", str(folder), str(predictions)],
            [
                "predict-steps",
                str(folder),
                str(tmp_path / f"{name}.jsonl"),
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "m",
            ],
        ):
            run = subprocess.run([sys.executable, "-m", "pagelens", *command], capture_output=True, text=True)
            assert run.returncode == 2, (name, command[0], run.stderr[-500:])
            assert "Traceback" not in run.stderr and str(folder) in run.stderr, (name, command[0], run.stderr[-500:])
        assert not (tmp_path / f"{name}.jsonl").exists()  # nothing predicted from a damaged output


def test_a_step_url_that_does_not_parse_is_its_own_website(prep_out, tmp_path):
    import shutil

    out, ex = prep_out
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    rows = read_output(out)[0]
    rows[0]["url"] = "http://[::1"  # prep keeps the URL a record gave
    for p in (copy / "examples").glob("*"):
        p.unlink()
    (copy / "examples" / "part.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": example_id(e), "reply": reply(e["target_node"], "mouse_click_action")}) + "\n"
            for e in rows
        )
    )
    scores = score_steps(copy, predictions)
    assert "(unreadable URL)" in scores["per_website"] and scores["counts"]["examples"] == len(rows)


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(EXAMPLE_FIELDS)), JUNK)
def test_junk_in_any_example_field_is_named_or_read_as_it_is(prep_out, tmp_path_factory, field, value):
    out, ex = prep_out
    folder = tmp_path_factory.mktemp("junk")
    rows = read_output(out)[0]
    rows[-1] = {**rows[-1], field: value}
    (folder / "examples").mkdir()
    (folder / "examples" / "part.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        read, _ = read_output(folder)
    except InputFileError as e:
        assert f"part.jsonl:{len(rows)}" in str(e) and repr(field) in str(e), str(e)
        return
    assert read == sorted(rows, key=lambda r: (r["workflow_id"], r["step"], r["chunk_index"]))
    assert isinstance(read[-1][field], EXAMPLE_FIELDS[field]) or field not in read[-1]
