"""A package's public names imported from their modules when first used (PEP 562's module
``__getattr__``): importing the package loads none of those modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, homes: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The package's ``__getattr__``: a name of ``homes`` is imported from the module it names
    and kept in ``namespace`` (the package's globals), so each is imported once."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (the module attribute PEP 562 names)
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return __getattr__
