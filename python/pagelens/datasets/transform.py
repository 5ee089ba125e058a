"""The per-step transform: raw HTML and an action become ScribeAgent's prompt and label.

parse (ids in reverse document order) → resolve the target → clean, keeping the target →
chunk the cleaned DOM to a token budget → choose the chunk(s) → prompt (objective, URL,
observation, previous steps) and label (the next step), both in the paper's five-line step
format (ScribeAgent section 3.2.2 and appendix A.2). Every heavy stage runs in the Rust core
with the GIL released, so threads scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pagelens import DEFAULT_TOKENIZER, Dom, DomError, load_tokenizer
from pagelens.datasets.records import Example, Reject, Step, Workflow, html_bytes
from pagelens.errors import ArgumentError
from pagelens.stepformat.chunks import check_chunking, page_chunks
from pagelens.stepformat.lines import one_line, prompt_text, step_lines

CHUNK_MODES = ("target", "all", "last")


@dataclass(frozen=True)
class PrepConfig:
    """What a run makes of each step. ``max_tokens`` bounds the observation (the DOM chunk);
    ``chunks``: "target" emits the chunk holding the target (training), "all" one example
    per chunk and "last" the last chunk (evaluation)."""

    tokenizer: str = DEFAULT_TOKENIZER
    max_tokens: int = 4096
    profile: Literal["scribe", "minimal"] = "scribe"
    chunks: str = "target"

    def __post_init__(self) -> None:
        if self.chunks not in CHUNK_MODES:
            raise ArgumentError(f"chunks must be one of {', '.join(CHUNK_MODES)}, not {self.chunks!r}")
        check_chunking(self.profile, self.max_tokens)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer,
            "max_tokens": self.max_tokens,
            "profile": self.profile,
            "chunks": self.chunks,
        }


@dataclass(frozen=True)
class _Done:
    """What later steps of the workflow need of an earlier one."""

    number: int
    lines: str


_VERBS = {
    "mouse_click_action": "Click",
    "keyboard_sequence_action": "Type",
    "keyboard_combination_action": "Press",
    "select_action": "Select",
    "hover_action": "Hover over",
}


def _describe(step: Step, dom: Dom, node: int) -> str:
    """A description for a step recorded without one, from the target's own words."""
    el = dom.element(node)
    attrs = el.attributes
    named_by = ("aria-label", "title", "alt", "placeholder", "value", "name")
    label = next((attrs[a] for a in named_by if attrs.get(a)), "") or el.text
    label = one_line(label)[:60] or el.tag
    verb = _VERBS[step.action]
    if step.action == "keyboard_sequence_action":
        return f'Type "{one_line(step.text)}" into "{label}"'
    if step.action == "keyboard_combination_action":
        return f'Press {step.text} on "{label}"'
    if step.action == "select_action":
        return f'Select "{one_line(step.text)}" in "{label}"'
    return f'{verb} "{label}"'


class Transformer:
    """Turns workflows into examples under one :class:`PrepConfig`. Holds the tokenizer, so
    build one per worker and reuse it; it is safe to share between threads."""

    def __init__(self, config: PrepConfig):
        self.config = config
        self.tokenizer = load_tokenizer(config.tokenizer)

    def _resolve(self, dom: Dom, step: Step) -> tuple[int | None, Reject | None]:
        def reject(field: str, reason: str) -> tuple[None, Reject]:
            return None, Reject(step.source, reason, field, step.workflow_id, step.step)

        by_selector = by_path = None
        if step.target_selector:
            try:
                found = dom.select(step.target_selector)
            except DomError as e:
                return reject("target_selector", str(e))
            if not found:
                return reject("target_selector", f"target_selector {step.target_selector!r} matches no element")
            by_selector = found[0]  # querySelector's answer: the first in document order
        if step.target_path:
            try:
                by_path = dom.find_path(step.target_path)
            except DomError as e:
                return reject("target_path", str(e))
            if by_path is None:
                return reject("target_path", f"target_path {step.target_path!r} leads to no element")
        if by_selector is not None and by_path is not None and by_selector != by_path:
            return reject("target_path", "target_selector and target_path name different elements")
        return (by_selector if by_selector is not None else by_path), None

    def workflow(self, wf: Workflow) -> tuple[list[dict[str, Any]], list[Reject]]:
        """Examples of every step, in order. A step that cannot be resolved is rejected and
        so are the steps after it (their history would be wrong); earlier ones stand."""
        examples: list[dict[str, Any]] = []
        rejects: list[Reject] = []
        history: list[_Done] = []
        for i, step in enumerate(wf.steps):
            made, reject, done = self._step(step, len(history) + 1, history)
            if reject is not None:
                rejects.append(reject)
                for later in wf.steps[i + 1 :]:
                    rejects.append(
                        Reject(
                            later.source,
                            f"an earlier step ({step.step}, {step.source}) of the workflow was rejected",
                            "workflow",
                            later.workflow_id,
                            later.step,
                        )
                    )
                break
            assert done is not None  # a step is either rejected or done
            examples.extend(made)
            history.append(done)
        return examples, rejects

    def _step(
        self, step: Step, number: int, history: list[_Done]
    ) -> tuple[list[dict[str, Any]], Reject | None, _Done | None]:
        cfg, tok = self.config, self.tokenizer
        dom = Dom.parse(step.html)
        node, reject = self._resolve(dom, step)
        if reject is not None:
            return [], reject, None
        assert node is not None  # _resolve gives a node or a reject
        cleaned, chunks = page_chunks(dom, cfg.profile, cfg.max_tokens, tok, keep=[node])
        target_tag = cleaned.start_tag(node)
        tag_tokens = tok.count(target_tag)
        if tag_tokens > cfg.max_tokens:
            # No chunk can show the target's `node="N"`, and its Target line alone would put the
            # label over the budget: the step cannot be learned from what the model would see.
            reason = f"the target's start tag alone is {tag_tokens} tokens, over the budget of {cfg.max_tokens}"
            return [], Reject(step.source, reason, "target_selector", step.workflow_id, step.step), None
        description = step.description or _describe(step, cleaned, node)
        lines = step_lines(number, description, step.action, step.text, node, target_tag)
        holding = next((i for i, c in enumerate(chunks) if node in c.node_ids), None)
        if cfg.chunks == "target":
            if holding is None:
                reject = Reject(
                    step.source, f"no chunk holds target node {node}", "target_selector", step.workflow_id, step.step
                )
                return [], reject, None
            chosen = [holding]
        elif cfg.chunks == "last":
            chosen = [len(chunks) - 1]
        else:
            chosen = list(range(len(chunks)))
        guide = "\n".join(h.lines for h in history)
        raw_tokens = tok.count(step.html)
        # The chunks are the cleaned DOM cut at start tags: their tokens are what feeding the
        # whole page costs (within a token or two per cut of counting it in one piece).
        clean_tokens = sum(c.token_count for c in chunks)
        examples = []
        for k in chosen:
            c = chunks[k]
            prompt = prompt_text(step.objective, step.url, c.text, guide)
            examples.append(
                Example(
                    workflow_id=step.workflow_id,
                    step=step.step,
                    source=step.source,
                    objective=step.objective,
                    url=step.url,
                    action=step.action,
                    text=step.text,
                    prompt=prompt,
                    label=lines,
                    target_node=node,
                    target_tag=target_tag,
                    target_rescued=node in cleaned.rescued_ids,
                    chunk_index=k,
                    chunk_count=len(chunks),
                    # The prompt shows the target's id (an oversized tag's id is listed with its
                    # first piece, but its `node="N"` is written at the tag's end).
                    contains_target=node in c.node_ids and f'node="{node}"' in c.text,
                    oversized=c.oversized,
                    html_bytes=html_bytes(step.html),
                    raw_tokens=raw_tokens,
                    clean_tokens=clean_tokens,
                    observation_tokens=c.token_count,
                    prompt_tokens=tok.count(prompt),
                    label_tokens=tok.count(lines),
                    tokenizer=tok.name,
                    profile=cfg.profile,
                ).as_row()
            )
        return examples, None, _Done(number, lines)
