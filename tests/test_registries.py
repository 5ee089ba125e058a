"""One home per concept: every choice and default of the CLI comes from the registry or the
settings where the concept lives. Change the registry, the parser follows."""

from __future__ import annotations

import argparse

import pytest

import pagelens
from pagelens import engines
from pagelens.agents import factory, runner
from pagelens.agents.scribe import ScribeConfig
from pagelens.cli import build_parser
from pagelens.datasets import cluster, local, output, steps, transform
from pagelens.evaluation import variants
from pagelens.studies import benchmarks, settings


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
        ("prep", "--shard-size"): local.SHARD_SIZE,
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
