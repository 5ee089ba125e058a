"""Next-step predictions over a `pagelens prep` output: made by any OpenAI-compatible model
(:func:`predict_steps`, resumable and parallel) and scored with Mind2Web's step-level metrics
(:func:`score_steps`).

A prediction file holds one JSON object per line, ``{"id": ..., "reply": ...}``, the id being
:func:`example_id` of a prep example (``workflow/step/chunk``). Replies are read with the
ScribeAgent agent's own parser, and a step whose examples span several chunks is decided by
the agent's own vote over them.

Metrics (Mind2Web, Deng et al. 2023, as ScribeAgent reports them):

- element accuracy: the voted node is the step's target node;
- operation F1: token F1 between the predicted and the true operation, ``CLICK``, ``HOVER``,
  ``TYPE <text>``, ``SELECT <option>`` or ``PRESS <keys>``: whitespace tokens as sets, tokens
  that are a single punctuation character dropped, 1 when both are empty;
- step success: element right and operation F1 = 1.

A predicted click whose target is an ``<input>`` or ``<textarea>`` is read as typing, as
ScribeAgent's evaluation reads it. A step with no usable prediction counts as wrong in every
metric and is reported as missing.
"""

from __future__ import annotations

import os
import string
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pagelens._io import JsonlLog, read_json_lines
from pagelens.actions import ActionError
from pagelens.datasets.output import read_output
from pagelens.errors import ArgumentError
from pagelens.llm import LLMClient
from pagelens.stepformat.lines import SYSTEM, ParsedStep, parse_step, vote
from pagelens.stepformat.operations import click_means_typing, mind2web_operation


def example_id(example: dict[str, Any]) -> str:
    return f"{example['workflow_id']}/{example['step']}/{example['chunk_index']}"


def operation(action: str, text: str) -> str:
    """Mind2Web's operation string of a ScribeAgent action."""
    return mind2web_operation(action, text)


def token_f1(predicted: str, label: str) -> float:
    """Mind2Web's token F1 (its ``calculate_f1``)."""
    pred = {t for t in predicted.split() if t not in string.punctuation}
    gold = {t for t in label.split() if t not in string.punctuation}
    if not pred and not gold:
        return 1.0
    if not pred or not gold:
        return 0.0
    tp = len(pred & gold)
    if tp == 0:
        return 0.0
    precision, recall = tp / len(pred), tp / len(gold)
    return 2 * precision * recall / (precision + recall)


def _website(url: str) -> str:
    """The host a step's URL names, for the per-website table."""
    try:
        host = urlsplit(url).hostname
    except ValueError:  # "http://[::1": prep keeps a step's URL as the record gave it
        return "(unreadable URL)"
    return host or "(no URL)"


def predicted_operation(step: ParsedStep) -> str:
    action = step.action
    tag = step.target.lstrip("<").split(" ", 1)[0].split(">", 1)[0].lower()
    if action == "mouse_click_action" and click_means_typing(tag):
        action = "keyboard_sequence_action"
    return operation(action, step.text)


# -- reading predictions -------------------------------------------------------------------------


@dataclass
class Predictions:
    """Replies by example id, and what could not be used (counted, never fatal)."""

    replies: dict[str, str] = field(default_factory=dict)
    torn_lines: int = 0  # not JSON (a cut-off last line, or junk)
    malformed: int = 0  # JSON without a string "id" and "reply"
    duplicates: int = 0  # an id seen before (the first reply counts)


def read_predictions(path: str | os.PathLike[str]) -> Predictions:
    found = Predictions()
    lines = read_json_lines(path)
    found.torn_lines = len(lines.bad_lines) + lines.torn_tail
    for record in lines.records:
        if not (
            isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("reply"), str)
        ):
            found.malformed += 1
        elif record["id"] in found.replies:
            found.duplicates += 1
        else:
            found.replies[record["id"]] = record["reply"]
    return found


# -- scoring -----------------------------------------------------------------------------------------


@dataclass
class _Tally:
    steps: int = 0
    element: int = 0
    f1: float = 0.0
    success: int = 0

    def add(self, element: bool, f1: float) -> None:
        self.steps += 1
        self.element += element
        self.f1 += f1
        self.success += element and f1 == 1.0

    def as_dict(self) -> dict[str, Any]:
        n = self.steps or 1
        return {
            "steps": self.steps,
            "element_accuracy": self.element / n,
            "operation_f1": self.f1 / n,
            "step_success_rate": self.success / n,
        }


def score_steps(prep_out: str | os.PathLike[str], predictions: str | os.PathLike[str]) -> dict[str, Any]:
    """Mind2Web's metrics over every step of a prep output, overall and per website (the host
    of the step's URL), with counts of the predictions that could not be used."""
    examples, _ = read_output(prep_out)
    found = read_predictions(predictions)
    known = {example_id(e) for e in examples}
    steps: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for e in examples:
        steps.setdefault((e["workflow_id"], e["step"]), []).append(e)
    overall = _Tally()
    by_site: dict[str, _Tally] = {}
    missing = unreadable = 0
    per_step = []
    for (workflow, number), rows in steps.items():
        parsed = []
        for row in rows:
            reply = found.replies.get(example_id(row))
            if reply is None:
                continue
            try:
                parsed.append(parse_step(reply))
            except ActionError:
                unreadable += 1
        winner = vote(parsed)
        gold = rows[0]
        truth = operation(gold["action"], gold["text"])
        if winner is None:
            missing += 1
            element, f1 = False, 0.0
        else:
            element = winner.node == gold["target_node"]
            f1 = token_f1(predicted_operation(winner), truth)
        site = _website(gold["url"])
        overall.add(element, f1)
        by_site.setdefault(site, _Tally()).add(element, f1)
        per_step.append(
            {
                "workflow_id": workflow,
                "step": number,
                "website": site,
                "element": element,
                "operation_f1": f1,
                "success": element and f1 == 1.0,
                "predicted": None
                if winner is None
                else {"node": winner.node, "operation": predicted_operation(winner)},
                "truth": {"node": gold["target_node"], "operation": truth},
            }
        )
    return {
        **overall.as_dict(),
        "per_website": {site: t.as_dict() for site, t in sorted(by_site.items())},
        "counts": {
            "examples": len(examples),
            "predictions": len(found.replies),
            "unknown_ids": len(set(found.replies) - known),
            "torn_lines": found.torn_lines,
            "malformed": found.malformed,
            "duplicates": found.duplicates,
            "unreadable_replies": unreadable,
            "steps_without_prediction": missing,
        },
        "per_step": per_step,
    }


# -- predicting ----------------------------------------------------------------------------------------


# predict-steps' defaults: requests in flight, and the endpoint's sampling (greedy, a step's length).
PREDICT_WORKERS = 4
PREDICT_TEMPERATURE = 0.0
PREDICT_MAX_TOKENS = 200


def predict_steps(
    prep_out: str | os.PathLike[str],
    predictions: str | os.PathLike[str],
    llm: LLMClient,
    workers: int = PREDICT_WORKERS,
    progress: Any = None,
    **params: Any,
) -> dict[str, int]:
    """Asks ``llm`` for every example of a prep output not yet in ``predictions`` (a rerun
    resumes; a line is written, flushed and synced as each reply comes), ``workers`` at a
    time. ``params`` go to the endpoint (``temperature``, ``max_tokens``...). ``progress(done,
    total)`` is called as replies come (``total``: the examples left to ask). Returns counts."""
    if workers < 1:
        raise ArgumentError(f"workers must be at least 1, not {workers}")
    path = Path(predictions)
    log = JsonlLog(path)  # cuts a killed run's torn last line
    done = set(read_predictions(path).replies) if path.exists() else set()
    examples, _ = read_output(prep_out)
    todo = [e for e in examples if example_id(e) not in done]
    lock = threading.Lock()
    answered = [0]

    def one(example: dict[str, Any]) -> None:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": example["prompt"]}]
        reply = llm.chat(messages, **params)
        log.append({"id": example_id(example), "reply": reply.text})
        if progress is not None:
            with lock:
                answered[0] += 1
                progress(answered[0], len(todo))

    with ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(one, e) for e in todo]:
            future.result()  # an endpoint that fails for good stops the run; a rerun resumes
    return {"examples": len(examples), "already_done": len(examples) - len(todo), "predicted": len(todo)}
