"""The optional extras: which import each one provides and what it is for. One home for the
message a missing extra gives, so that every feature names the same ``pip install``.

Layering rule (tested in ``tests/house/test_layers.py``): no module imports an optional dependency
at import time but the adapters each extra lists (``pagelens.datasets.arrow`` for pyarrow);
every other module, ``pagelens.ray_cluster`` (Ray's one start-up) among them, asks for it with
:func:`require` when a feature needs it, so the base install imports every module and runs every command's ``--help``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Extra:
    name: str  # pip install 'pagelens[name]'
    modules: tuple[str, ...]  # top-level imports it provides
    purpose: str
    # Modules that import the extra when they are imported (they fail without it, naming it).
    adapters: tuple[str, ...] = ()


EXTRAS: dict[str, Extra] = {
    e.name: e
    for e in (
        Extra(
            "datasets",
            ("pyarrow", "ray"),
            "`pagelens prep` (Parquet) and the Ray engines of prep and studies",
            adapters=("pagelens.datasets.arrow",),
        ),
        Extra("miniwob", ("miniwob",), "MiniWoB++ task pages"),
        Extra(
            "browsergym",
            ("gymnasium",),
            "BrowserGym's dependencies, to run pagelens.browsergym in its envs (browsergym-core itself: --no-deps)",
        ),
        Extra("mcp", ("mcp",), "`pagelens mcp`: the browser as an MCP server", adapters=("pagelens.mcp_server",)),
        Extra("verified", ("webarena_verified",), "WebArena-Verified's own evaluators (`eval --variant verified`)"),
    )
}


def adapters() -> dict[str, str]:
    """Adapter module -> the extra it needs."""
    return {module: extra.name for extra in EXTRAS.values() for module in extra.adapters}


def extra_for(module: str) -> Extra:
    top = module.split(".")[0]
    for extra in EXTRAS.values():
        if top in extra.modules:
            return extra
    raise KeyError(f"{module} is not an optional dependency of pagelens")


def require(module: str, feature: str) -> ModuleType:
    """Imports ``module`` (an optional dependency), or raises ImportError naming ``feature``
    and the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        extra = extra_for(module)
        raise ImportError(f"{feature} needs {module.split('.')[0]}: pip install 'pagelens[{extra.name}]'") from e
