"""Workflow steps as the pipeline reads them, and the rejects it keeps of bad ones.

A *step* is one recorded action on one page: the raw HTML at that moment, what was done
(action type, typed text) and to which element (a CSS selector or an absolute node path).
A *workflow* is the ordered steps of one objective. ScribeAgent's prompt for step t needs
steps 1..t-1, so a workflow is the unit of work."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from pagelens._core import RawHtml
from pagelens.errors import PagelensError
from pagelens.stepformat.operations import OPERATIONS, canonical_operation

# ScribeAgent's action names (the operations table's keys).
ACTIONS = tuple(OPERATIONS)
_SPELLINGS = tuple(op.spellings[0] for op in OPERATIONS.values())


def canonical_action(name: str) -> str | None:
    """ScribeAgent's name for an action given in its own or WebArena's/Mind2Web's spelling."""
    return canonical_operation(name)


# The key under which a row read back from an output file carries where it was read ("file:3",
# "file row 3"), until it is checked; it cannot be a column name.
ORIGIN_KEY = "\0origin"


@dataclass(frozen=True)
class Step:
    workflow_id: str
    step: int
    objective: str
    url: str
    html: str | RawHtml  # RawHtml: a page the reader decoded into the core (see readers.py)
    action: str
    source: str  # where the record came from: "file.jsonl:12", "file.parquet#3", "file.json[0].actions[2]"
    text: str = ""
    target_selector: str = ""
    target_path: str = ""
    description: str = ""


@dataclass(frozen=True)
class Workflow:
    workflow_id: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Reject:
    """A record that produced no example, and why. Rejects are written, never dropped."""

    source: str
    reason: str
    field: str = ""
    workflow_id: str = ""
    step: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class RecordError(PagelensError, ValueError):
    """A record field at fault (carries the field name for the rejects file)."""

    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field = field
        self.reason = reason


def _string(record: dict[str, Any], name: str, *, required: bool) -> str:
    value = record.get(name)
    if value is None:
        if required:
            raise RecordError(name, f"missing field {name!r}")
        return ""
    if not isinstance(value, str):
        raise RecordError(name, f"field {name!r} must be a string, not {type(value).__name__}")
    if required and not value.strip():
        raise RecordError(name, f"field {name!r} is empty")
    return value


def html_bytes(html: str | RawHtml) -> int:
    """A page's size in UTF-8 bytes."""
    return html.nbytes if isinstance(html, RawHtml) else len(html.encode("utf-8", "surrogatepass"))


def step_from_record(record: Any, source: str, position: int) -> Step:
    """Validates one record of the step layout. ``position`` numbers steps that carry no
    ``step`` field (their order in the file)."""
    if not isinstance(record, dict):
        raise RecordError("", f"a record must be a JSON object, not {type(record).__name__}")
    workflow_id = record.get("workflow_id")
    if isinstance(workflow_id, int) and not isinstance(workflow_id, bool):
        workflow_id = str(workflow_id)
    if not isinstance(workflow_id, str) or not workflow_id:
        raise RecordError("workflow_id", "missing or empty field 'workflow_id'")
    step = record.get("step", position)
    if step is None:
        step = position
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise RecordError("step", f"field 'step' must be a non-negative integer, not {step!r}")
    raw_action = _string(record, "action", required=True)
    action = canonical_action(raw_action)
    if action is None:
        raise RecordError(
            "action",
            f"unknown action {raw_action!r}; expected one of {', '.join(ACTIONS)} or {'/'.join(_SPELLINGS)}",
        )
    text = _string(record, "text", required=False)
    if OPERATIONS[action].needs_text and not text:
        raise RecordError("text", f"{action} needs the 'text' that was typed, pressed or chosen")
    selector = _string(record, "target_selector", required=False).strip()
    path = _string(record, "target_path", required=False).strip()
    if not selector and not path:
        raise RecordError(
            "target_selector", "no target: give 'target_selector' (CSS) or 'target_path' (/html/body/...)"
        )
    return Step(
        workflow_id=workflow_id,
        step=step,
        objective=_string(record, "objective", required=True),
        url=_string(record, "url", required=False),
        # A RawHtml is a JSON string the reader found non-blank (readers.py).
        html=record["html"] if isinstance(record.get("html"), RawHtml) else _string(record, "html", required=True),
        action=action,
        source=source,
        text=text,
        target_selector=selector,
        target_path=path,
        description=_string(record, "description", required=False).strip(),
    )


@dataclass
class WorkflowBuilder:
    """Collects a file's steps per workflow, in first-seen order, then orders each by step."""

    steps: dict[str, list[Step]] = field(default_factory=dict)
    rejects: list[Reject] = field(default_factory=list)
    # Workflow id -> its earliest rejected step (number, source): the steps after it are
    # rejected too, since their history would have a gap (docs/datasets.md).
    broken: dict[str, tuple[int, str]] = field(default_factory=dict)

    def add(self, step: Step) -> None:
        self.steps.setdefault(step.workflow_id, []).append(step)

    def reject(self, reject: Reject) -> None:
        """A record rejected before it became a step; it breaks its workflow from there on."""
        self.rejects.append(reject)
        if reject.workflow_id and reject.step is not None:
            earliest = self.broken.get(reject.workflow_id)
            if earliest is None or reject.step < earliest[0]:
                self.broken[reject.workflow_id] = (reject.step, reject.source)

    def build(self) -> list[Workflow]:
        workflows = []
        for wid, steps in self.steps.items():
            steps.sort(key=lambda s: s.step)
            kept: list[Step] = []
            broken = self.broken.get(wid)
            for s in steps:
                if broken is not None and s.step > broken[0]:
                    self.rejects.append(
                        Reject(
                            s.source,
                            f"an earlier step ({broken[0]}, {broken[1]}) of the workflow was rejected",
                            "workflow",
                            wid,
                            s.step,
                        )
                    )
                    continue
                if kept and kept[-1].step == s.step:
                    self.rejects.append(
                        Reject(
                            s.source,
                            f"step {s.step} of workflow {wid!r} appears twice (first at {kept[-1].source})",
                            "step",
                            wid,
                            s.step,
                        )
                    )
                    continue
                kept.append(s)
            workflows.append(Workflow(wid, tuple(kept)))
        return workflows


@dataclass(frozen=True)
class Example:
    """One training example: a step's prompt (objective, URL, an observation chunk, the
    previous steps) and its label (the next step). Its fields, in order, are the columns of
    the output (``pagelens.datasets.SCHEMA`` is made from them). Token counts are under the
    run's tokenizer."""

    workflow_id: str
    step: int  # the step's index in its workflow
    source: str  # input record, e.g. "steps.jsonl:12"
    objective: str
    url: str
    action: str  # ScribeAgent's action name
    text: str  # typed / pressed / chosen text
    prompt: str  # objective, URL, observation, previous steps
    label: str  # the next step, five lines
    target_node: int  # node="N" of the target
    target_tag: str  # its start tag in the observation
    target_rescued: bool  # cleaning would have removed it
    # "arrow": stored as this Arrow type rather than the Python type's default (int64).
    chunk_index: int = field(metadata={"arrow": "int32"})
    chunk_count: int = field(metadata={"arrow": "int32"})
    contains_target: bool  # always true with chunks="target"
    oversized: bool  # a single unit over the budget, cut
    html_bytes: int  # raw HTML size (UTF-8)
    raw_tokens: int  # tokens of the raw HTML
    clean_tokens: int  # tokens of the cleaned DOM (sum over its chunks)
    observation_tokens: int  # tokens of this chunk (at most max_tokens)
    prompt_tokens: int
    label_tokens: int
    tokenizer: str
    profile: str

    def as_row(self) -> dict[str, Any]:
        # Every field is a str, int or bool: asdict's deep copy of each value buys nothing.
        return {f.name: getattr(self, f.name) for f in fields(self)}
