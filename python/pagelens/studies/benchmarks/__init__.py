"""The benchmarks a study can run (the protocol: :mod:`pagelens.studies.protocol`). The
registry :data:`BENCHMARKS` is where ``study run --benchmark``, its flags (each benchmark's
options) and the settings read them. Another package's benchmark joins it by an entry point of
the group ``pagelens.benchmarks`` (``name = "module:Benchmark"``, a class or an instance),
loaded as this module is; :func:`register` adds one from code (worker processes import its
module by name, so it must be importable there)."""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import entry_points

from pagelens.errors import ArgumentError, one_line
from pagelens.studies.protocol import Benchmark, EpisodeSetupError, EpisodeTask, TaskSelection

ENTRY_POINT_GROUP = "pagelens.benchmarks"

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


def _load_plugins() -> None:
    """Registers every installed package's benchmark (entry points of ENTRY_POINT_GROUP). One
    that fails to load is left out with one line on stderr saying which and why: a broken
    plugin must not stop the commands that do not use it."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found = point.load()
            benchmark = found() if isinstance(found, type) else found
            if getattr(benchmark, "name", None) != point.name:
                raise ArgumentError(f"it loads a benchmark named {getattr(benchmark, 'name', None)!r}")
            register(benchmark)
        except Exception as e:  # noqa: BLE001 (a plugin's own error, whatever it is, is said in a line)
            print(
                f"pagelens: the benchmark {point.name!r} ({point.value}, entry point of "
                f"{ENTRY_POINT_GROUP}) is left out: {one_line(e)}",
                file=sys.stderr,
            )


_load_plugins()

__all__ = [
    "BENCHMARKS",
    "ENTRY_POINT_GROUP",
    "Benchmark",
    "EpisodeSetupError",
    "EpisodeTask",
    "TaskSelection",
    "get_benchmark",
    "module_of",
    "register",
]
