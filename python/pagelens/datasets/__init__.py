"""Dataset preparation: workflow recordings (raw HTML + action + target) turned into
ScribeAgent-style next-step examples, on threads locally or on a pool of Ray actors.

    from pagelens.datasets import PrepConfig, run_local
    summary = run_local(["steps.jsonl"], "out/", PrepConfig(max_tokens=8192), workers=2)

See ``docs/datasets.md`` for the input layouts and the output schema
(``pagelens.datasets.arrow.SCHEMA``, which needs the ``datasets`` extra).

Importing this package loads nothing: each name is imported from its module when first used,
so that ``import pagelens.datasets`` does not start an engine's imports (Ray's among them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pagelens._lazy import lazy_names

# Where each public name lives.
_HOMES = {
    "NodesLost": "pagelens.datasets.cluster",
    "PrepStalled": "pagelens.datasets.cluster",
    "run_ray": "pagelens.datasets.cluster",
    "ManifestMismatch": "pagelens.datasets.local",
    "run_local": "pagelens.datasets.local",
    "read_output": "pagelens.datasets.output",
    "read_rejects": "pagelens.datasets.output",
    "input_files": "pagelens.datasets.readers",
    "read_workflows": "pagelens.datasets.readers",
    "ACTIONS": "pagelens.datasets.records",
    "Example": "pagelens.datasets.records",
    "Reject": "pagelens.datasets.records",
    "Step": "pagelens.datasets.records",
    "Workflow": "pagelens.datasets.records",
    "canonical_action": "pagelens.datasets.records",
    "PrepConfig": "pagelens.datasets.transform",
    "Transformer": "pagelens.datasets.transform",
    "ParsedStep": "pagelens.stepformat.lines",
    "parse_step": "pagelens.stepformat.lines",
    "prompt_text": "pagelens.stepformat.lines",
    "step_lines": "pagelens.stepformat.lines",
    "page_chunks": "pagelens.stepformat.chunks",
}

if TYPE_CHECKING:
    from pagelens.datasets.cluster import NodesLost, PrepStalled, run_ray
    from pagelens.datasets.local import ManifestMismatch, run_local
    from pagelens.datasets.output import read_output, read_rejects
    from pagelens.datasets.readers import input_files, read_workflows
    from pagelens.datasets.records import ACTIONS, Example, Reject, Step, Workflow, canonical_action
    from pagelens.datasets.transform import PrepConfig, Transformer
    from pagelens.stepformat.chunks import page_chunks
    from pagelens.stepformat.lines import ParsedStep, parse_step, prompt_text, step_lines


__getattr__ = lazy_names(__name__, _HOMES, globals())


__all__ = [
    "ACTIONS",
    "Example",
    "ManifestMismatch",
    "NodesLost",
    "ParsedStep",
    "PrepConfig",
    "PrepStalled",
    "Reject",
    "Step",
    "Transformer",
    "Workflow",
    "canonical_action",
    "input_files",
    "page_chunks",
    "parse_step",
    "prompt_text",
    "read_output",
    "read_rejects",
    "read_workflows",
    "run_local",
    "run_ray",
    "step_lines",
]
