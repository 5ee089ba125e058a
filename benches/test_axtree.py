"""pytest-benchmark: the whole corpus per round, pagelens against BrowserGym on the same bytes.

pytest benches/test_axtree.py --benchmark-only --benchmark-group-by=group
"""

from __future__ import annotations

import json

import pytest

import pagelens
from corpus import ax_payloads

PAYLOADS = ax_payloads()
browsergym_obs = pytest.importorskip("browsergym.utils.obs")


@pytest.mark.benchmark(group="corpus: parse + render")
def test_browsergym_json_loads_flatten(benchmark):
    def run():
        for data in PAYLOADS.values():
            browsergym_obs.flatten_axtree_to_str(json.loads(data))

    benchmark.pedantic(run, rounds=3, iterations=1)


@pytest.mark.benchmark(group="corpus: parse + render")
@pytest.mark.parametrize("mode", ["webarena", "occam"])
def test_pagelens(benchmark, mode):
    def run():
        for data in PAYLOADS.values():
            pagelens.AXTree.from_cdp(data).render(mode)

    benchmark.pedantic(run, rounds=10, iterations=1)


@pytest.mark.benchmark(group="corpus: parse only")
def test_python_json_loads(benchmark):
    def run():
        for d in PAYLOADS.values():
            json.loads(d)

    benchmark.pedantic(run, rounds=5, iterations=1)


@pytest.mark.benchmark(group="corpus: parse only")
def test_pagelens_parse(benchmark):
    def run():
        for d in PAYLOADS.values():
            pagelens.AXTree.from_cdp(d)

    benchmark.pedantic(run, rounds=10, iterations=1)
