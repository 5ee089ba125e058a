"""Reading a PageObservation in the browser tests."""

from __future__ import annotations

from pagelens.browser import PageObservation


def find(obs: PageObservation, role: str, name: str) -> int:
    """The id of the rendered node with this role whose name contains ``name``."""
    for i in obs.ids:
        node = obs.tree.node(i)
        if node.role == role and name in node.name:
            return i
    raise AssertionError(f"no {role} named {name!r} in:\n{obs.text}")
