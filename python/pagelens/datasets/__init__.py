"""Dataset preparation: workflow recordings (raw HTML + action + target) turned into
ScribeAgent-style next-step examples, on threads locally or on a pool of Ray actors.

    from pagelens.datasets import PrepConfig, run_local
    summary = run_local(["steps.jsonl"], "out/", PrepConfig(max_tokens=8192), workers=2)

See ``docs/datasets.md`` for the input layouts and the output schema
(``pagelens.datasets.arrow.SCHEMA``, which needs the ``datasets`` extra).
"""

from pagelens.datasets.cluster import NodesLost, PrepStalled, run_ray
from pagelens.datasets.local import ManifestMismatch, run_local
from pagelens.datasets.output import read_output, read_rejects
from pagelens.datasets.readers import input_files, read_workflows
from pagelens.datasets.records import ACTIONS, Example, Reject, Step, Workflow, canonical_action
from pagelens.datasets.scribe_format import ParsedStep, parse_step, prompt_text, step_lines
from pagelens.datasets.transform import PrepConfig, Transformer, page_chunks

__all__ = [
    "Example",
    "ACTIONS",
    "ManifestMismatch",
    "NodesLost",
    "PrepStalled",
    "PrepConfig",
    "Reject",
    "Step",
    "Transformer",
    "Workflow",
    "canonical_action",
    "input_files",
    "read_output",
    "read_rejects",
    "read_workflows",
    "run_local",
    "run_ray",
    "step_lines",
    "parse_step",
    "ParsedStep",
    "prompt_text",
    "page_chunks",
]
