"""One home per concept: every choice and default of the CLI comes from the registry or the
settings where the concept lives. Change the registry, the parser follows."""

from __future__ import annotations

import argparse
import inspect

import pytest

import pagelens
from pagelens import engines
from pagelens.agents import factory, runner
from pagelens.agents.scribe import ScribeConfig
from pagelens.cli import build_parser
from pagelens.datasets import cluster, local, output, shards, steps, transform
from pagelens.evaluation import variants
from pagelens.studies import benchmarks, settings
from support.paths import ROOT
from support.registries import spec_modes, stub_render_modes


def options(parser: argparse.ArgumentParser, *command: str) -> dict[str, argparse.Action]:
    """The options of a (sub)command by their long flag."""
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return {a.option_strings[-1]: a for a in parser._actions if a.option_strings}


REGISTRIES = [
    # (module, attribute, replacement, [(command..., flag)])
    (pagelens, "RENDER_MODES", ["webarena", "occam", "aria"], [(("observe",), "--mode")]),
    (pagelens, "CLEAN_PROFILES", ["minimal", "scribe", "bare"], [(("clean",), "--profile"), (("prep",), "--profile")]),
    (
        factory,
        "AGENTS",
        {"x": factory.AGENTS["step"], **factory.AGENTS},
        [(("run",), "--agent"), (("study", "run"), "--agent")],
    ),
    (
        benchmarks,
        "BENCHMARKS",
        {"toy": benchmarks.BENCHMARKS["miniwob"], **benchmarks.BENCHMARKS},
        [(("study", "run"), "--benchmark")],
    ),
    (
        engines,
        "ENGINES",
        {"dask": "a toy", **engines.ENGINES},
        [(("prep",), "--engine"), (("study", "run"), "--engine")],
    ),
    (variants, "COMBINE", ("mean", "all"), [(("eval",), "--combine")]),
    (transform, "CHUNK_MODES", ("target", "all", "last", "first"), [(("prep",), "--chunks")]),
    (output, "OUTPUT_FORMATS", ("jsonl", "parquet", "csv"), [(("prep",), "--format")]),
]


@pytest.mark.parametrize("module, name, replacement, flags", REGISTRIES, ids=[r[1] for r in REGISTRIES])
def test_choices_follow_their_registry(monkeypatch, module, name, replacement, flags):
    for cmd, flag in flags:
        assert list(options(build_parser(), *cmd)[flag].choices) == list(getattr(module, name)), (cmd, flag)
    monkeypatch.setattr(module, name, replacement)
    for cmd, flag in flags:
        assert list(options(build_parser(), *cmd)[flag].choices) == list(replacement), (cmd, flag)


def test_variants_and_their_aliases_are_the_evaluation_registry(monkeypatch):
    flag = options(build_parser(), "eval")["--variant"]
    assert list(flag.choices) == [*variants.VARIANTS, *variants.ALIASES]
    assert flag.default == next(iter(variants.VARIANTS))
    monkeypatch.setattr(variants, "ALIASES", {"paper": "webarena"})
    assert list(options(build_parser(), "eval")["--variant"].choices) == [*variants.VARIANTS, "paper"]


def test_defaults_are_the_settings_own():
    p = build_parser()
    expected = {
        ("observe", "--mode"): pagelens.RENDER_MODES[0],
        ("observe", "--tokenizer"): pagelens.DEFAULT_TOKENIZER,
        ("clean", "--profile"): pagelens.CLEAN_PROFILES[0],
        ("run", "--max-steps"): runner.MAX_STEPS,
        ("run", "--max-invalid"): factory.MAX_INVALID,
        ("run", "--max-tokens"): ScribeConfig.max_tokens,
        ("run", "--samples"): ScribeConfig.samples,
        ("prep", "--max-tokens"): transform.PrepConfig.max_tokens,
        ("prep", "--chunks"): transform.PrepConfig.chunks,
        ("prep", "--shard-size"): None,  # each engine's own (below)
        ("prep", "--stall-seconds"): cluster.STALL_SECONDS,
        ("predict-steps", "--workers"): steps.PREDICT_WORKERS,
        ("predict-steps", "--max-answer-tokens"): steps.PREDICT_MAX_TOKENS,
        ("study run", "--max-steps"): settings.StudySettings.max_steps,
        ("study run", "--episode-seconds"): settings.StudySettings.episode_seconds,
        ("study run", "--max-failed-decisions"): settings.StudySettings.max_failed_decisions,
        ("study run", "--workers"): settings.RunOptions.workers,
        ("study run", "--max-infra-failures"): settings.RunOptions.max_infra_failures,
    }
    for (cmd, flag), value in expected.items():
        assert options(p, *cmd.split())[flag].default == value, (cmd, flag)
    assert inspect.signature(local.run_local).parameters["shard_size"].default == shards.SHARD_SIZE
    assert inspect.signature(cluster.run_ray).parameters["shard_size"].default == shards.RAY_SHARD_SIZE
    # One value behind each name: the runner's limit is the studies' default too.
    assert settings.StudySettings.max_steps == runner.MAX_STEPS
    assert factory.MAX_INVALID == factory.AgentOptions.max_invalid


def test_every_registered_agent_is_made_by_the_factory():
    from pagelens.llm import LLMClient

    llm = LLMClient(model="m", base_url="http://127.0.0.1:9/v1", api_key="k")
    for name in factory.AGENTS:
        agent = factory.make_agent(name, llm, "do it", "http://127.0.0.1:9/")
        assert agent is not None
    with pytest.raises(pagelens.ArgumentError, match="unknown agent"):
        factory.make_agent("nope", llm, "t", "u")


def test_one_operations_table_for_prep_readers_metrics_and_the_agent():
    """Every operation of the table, in each of its spellings, is read by prep, written and
    read back in ScribeAgent's step format, scored by Mind2Web's operation, and acted on by
    the agent as a page action; nothing else knows an operation's name."""
    from pagelens.actions import ACTIONS, parse_action
    from pagelens.datasets.records import RecordError, step_from_record
    from pagelens.stepformat.lines import parse_step, step_lines
    from pagelens.stepformat.operations import MIND2WEB, OPERATIONS, canonical_operation, to_action

    for op in OPERATIONS.values():
        for spelling in (op.name, *op.spellings, *(s.upper() for s in op.spellings)):
            assert canonical_operation(spelling) == op.name
            record = {
                "workflow_id": "w",
                "objective": "o",
                "url": "",
                "html": "<p>",
                "action": spelling,
                "target_selector": "#a",
            }
            if op.needs_text:
                with pytest.raises(RecordError, match="needs the 'text'"):
                    step_from_record(record, "t", 0)
            assert step_from_record({**record, "text": "a b"}, "t", 0).action == op.name
        lines = step_lines(1, "do it", op.name, "a b", 7, '<input node="7">')
        parsed = parse_step(lines.split("\n", 1)[1])
        assert (parsed.action, parsed.node, parsed.text) == (op.name, 7, "a b")
        metric = steps.predicted_operation(parsed)
        assert metric.split(" ")[0] in ("TYPE", op.mind2web)  # a click on an <input> is typing
        assert (op.mind2web in MIND2WEB) == op.in_mind2web
        action = to_action(op.name, 7, "a b", "div")
        assert not ACTIONS[action.kind].internal
        assert parse_action(str(action), "all") == action  # a plain Action, not text to re-parse
    with pytest.raises(pagelens.PagelensError, match="unknown operation"):
        to_action("fly_action", 1, "", "div")


def test_python_literal_types_are_the_core_s_lists():
    """The names the core knows (render modes, cleaning profiles, chunk kinds) are spelled
    once, in the core; every Literal type that repeats them for type checkers — in the
    package and in the extension's stub — is checked against the core's list here."""
    import ast
    import typing
    from pathlib import Path

    import pagelens
    from pagelens import _core
    from pagelens.datasets.transform import PrepConfig

    core = {"mode": _core.RENDER_MODES, "profile": _core.CLEAN_PROFILES, "kind": _core.CHUNK_KINDS}
    # The run-time type is made from the list by the binding; the stub spells it for mypy.
    literals = typing.get_args(_core.RenderMode) if typing.get_origin(_core.RenderMode) is typing.Union else ()
    assert [name for lit in literals or (_core.RenderMode,) for name in typing.get_args(lit)] == core["mode"]
    assert set(typing.get_args(typing.get_type_hints(PrepConfig)["profile"])) == set(core["profile"])
    stub_text = (Path(pagelens.__file__).parent / "_core.pyi").read_text()
    assert stub_render_modes(stub_text) == core["mode"]
    # Every mode has its section in the observation spec.
    assert spec_modes((ROOT / "docs" / "spec" / "observation.md").read_text()) >= set(core["mode"])
    stub = ast.parse(stub_text)
    checked = 0
    for node in ast.walk(stub):
        if isinstance(node, ast.arg) and node.arg in core and node.annotation is not None:
            text = ast.unparse(node.annotation)
            if text.startswith("Literal["):
                names = ast.literal_eval(text[len("Literal") :].replace("[", "(", 1)[:-1] + ",)")
                assert set(names) == set(core[node.arg]), (node.arg, names)
                checked += 1
    assert checked >= 2  # clean's profile, chunks' kind (render's mode is the alias)


def test_every_engine_of_the_registry_runs_a_study_and_prep():
    """The engines registry (what `--engine` offers) and the study's pools are the same set:
    an engine added to one and not the other is caught here, not by a user."""
    from pagelens.cli.data import PREP_ENGINES
    from pagelens.engines import ENGINES
    from pagelens.studies.engines import POOLS

    assert set(POOLS) == set(ENGINES) == set(PREP_ENGINES)


def test_a_mode_answers_with_its_own_name_and_an_unknown_one_lists_them():
    """Each mode's name has one home (the core's Mode::name): an observation rendered in a
    mode says that mode, and a mode the core lacks is refused naming every one it has."""
    import json as _json

    import pytest

    from pagelens import RENDER_MODES, AXTree

    nodes = [{"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "t"}, "childIds": []}]
    tree = AXTree.from_cdp(_json.dumps({"nodes": nodes}))
    for mode in RENDER_MODES:
        assert tree.render(mode).mode == mode
    with pytest.raises(ValueError, match="unknown mode") as caught:
        tree.render("markdown")
    assert all(repr(m).replace("'", '"') in str(caught.value) for m in RENDER_MODES)
