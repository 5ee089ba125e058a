"""The benchmarks a study can run (the protocol: :mod:`pagelens.studies.protocol`). The
registry :data:`BENCHMARKS` is where ``study run --benchmark``, its flags (each benchmark's
options) and the settings read them; :func:`register` adds another (a module of yours; worker
processes import it by name, so it must be importable there)."""

from __future__ import annotations

import importlib

from pagelens.errors import ArgumentError
from pagelens.studies.protocol import Benchmark, EpisodeSetupError, EpisodeTask, TaskSelection

BENCHMARKS: dict[str, Benchmark] = {}
# Where each registered benchmark is defined, for worker processes to import it.
_MODULES: dict[str, str] = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Adds ``benchmark`` (call it when your module is imported: worker processes import that
    module to find it)."""
    BENCHMARKS[benchmark.name] = benchmark
    _MODULES[benchmark.name] = type(benchmark).__module__
    return benchmark


def module_of(name: str) -> str | None:
    """The module that registers benchmark ``name`` (sent to worker processes and Ray actors,
    which import it: a plugin's module must be importable there too)."""
    return _MODULES.get(name)


def get_benchmark(name: str, module: str | None = None) -> Benchmark:
    """The benchmark registered as ``name`` (importing ``module`` first when given)."""
    if name not in BENCHMARKS and module:
        importlib.import_module(module)
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ArgumentError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None


# The built-in ones.
from pagelens.studies.benchmarks import miniwob as _miniwob  # noqa: E402
from pagelens.studies.benchmarks import webarena as _webarena  # noqa: E402

register(_miniwob.MiniWoB())
register(_webarena.WebArena("webarena", "WebArena (812 tasks on self-hosted sites)", "webarena"))
register(_webarena.WebArena("webarena-verified", "WebArena-Verified (its task file, its own evaluators)", "verified"))

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "EpisodeSetupError",
    "EpisodeTask",
    "TaskSelection",
    "get_benchmark",
    "module_of",
    "register",
]
