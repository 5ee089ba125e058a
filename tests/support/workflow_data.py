"""A workflow dataset built from the corpus pages, for the dataset-pipeline tests and bench.

Targets are real interactive elements (links, buttons, text inputs) of each page's DOM,
found with html5lib — an independent WHATWG parser — and named the two ways recordings
name them: a structural CSS selector (``html > body > div:nth-child(2) > a:nth-child(1)``)
or an absolute node path (``/html/body/div[2]/a``). Each target's tag and attributes are
kept so a test can check that the pipeline resolved the same element.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path

import html5lib

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@dataclass(frozen=True)
class Target:
    css: str
    path: str
    tag: str
    attrs: dict
    kind: str  # "click" or "type"


def page_html(page: str) -> str:
    return gzip.decompress((CORPUS / page / "dom.html.gz").read_bytes()).decode("utf-8", "replace")


def pages() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if (p / "dom.html.gz").exists())


def _elements(parent) -> list:
    return [c for c in parent if isinstance(c.tag, str)]


def interactive_targets(html: str) -> list[Target]:
    """Every link with an href, button and text-like input under <body>, in document order."""
    root = html5lib.parse(html, treebuilder="etree", namespaceHTMLElements=False)
    found: list[Target] = []
    # (element, css so far, path so far); iterative: corpus pages nest deeply.
    stack = [(root, "html", "/html")]
    while stack:
        el, css, path = stack.pop()
        kids = _elements(el)
        same_tag: dict[str, int] = {}
        entries = []
        for i, k in enumerate(kids, start=1):
            same_tag[k.tag] = same_tag.get(k.tag, 0) + 1
            entries.append((k, f"{css} > {k.tag}:nth-child({i})", f"{path}/{k.tag}[{same_tag[k.tag]}]"))
        for k, kcss, kpath in reversed(entries):
            stack.append((k, kcss, kpath))
        if el is root or "/body" not in path or el.tag == "template":
            continue
        attrs = dict(el.attrib)
        kind = None
        if el.tag == "a" and attrs.get("href"):
            kind = "click"
        elif el.tag == "button":
            kind = "click"
        elif el.tag == "input" and attrs.get("type", "text").lower() in ("text", "search", "email", "password"):
            kind = "type"
        if kind:
            found.append(Target(css, path, el.tag, attrs, kind))
    # `stack.pop()` visits children left to right, so `found` is in document order.
    return [t for t in found if "template" not in t.path]


def build_dataset(folder: Path, n_pages: int = 12, steps: int = 3, seed: int = 7, broken: bool = True) -> dict:
    """Writes ``steps.jsonl`` (and a Parquet copy of half the workflows when pyarrow is
    there) into ``folder``. Returns what the tests check against: the expected targets by
    (workflow, step) and the broken records by source with the field at fault."""
    rng = random.Random(seed)
    # The smallest pages with targets first: the dataset stays quick to build and to run.
    by_size = sorted(pages(), key=lambda p: (CORPUS / p / "dom.html.gz").stat().st_size)
    chosen = []
    for p in by_size:
        if len(chosen) == n_pages:
            break
        if interactive_targets(page_html(p)):
            chosen.append(p)
    lines: list[str] = []
    expected: dict[tuple[str, int], Target] = {}
    broken_records: dict[str, str] = {}  # source -> field at fault
    for page in chosen:
        html = page_html(page)
        targets = interactive_targets(html)
        picks = rng.sample(targets, min(steps, len(targets)))
        for s, t in enumerate(picks):
            record = {
                "workflow_id": page,
                "step": s,
                "objective": f"Find something on {page}",
                "url": f"https://corpus.test/{page}",
                "html": html,
                "action": "type" if t.kind == "type" else "mouse_click_action",
                "description": "" if s == 1 else f"Step {s} on {page}",
            }
            if t.kind == "type":
                record["text"] = "hello world"
            # Alternate the two ways of naming a target; sometimes both.
            if s % 3 == 0:
                record["target_selector"] = t.css
            elif s % 3 == 1:
                record["target_path"] = t.path
            else:
                record["target_selector"], record["target_path"] = t.css, t.path
            lines.append(json.dumps(record))
            expected[(page, s)] = t
    if broken:
        html = page_html(chosen[0])
        good = {
            "objective": "Broken on purpose",
            "url": "https://corpus.test/b",
            "html": html,
            "action": "click",
            "target_selector": "a[href]",
        }

        def add(record, field):
            lines.append(record if isinstance(record, str) else json.dumps(record))
            broken_records[f"steps.jsonl:{len(lines)}"] = field

        add('{"workflow_id": "bad-json", "step": 0, "html": "<a', "")
        add({**good, "workflow_id": "no-html", "step": 0, "html": None}, "html")
        add({**good, "workflow_id": "bad-action", "step": 0, "action": "swipe"}, "action")
        add({**good, "workflow_id": "no-text", "step": 0, "action": "keyboard_sequence_action"}, "text")
        add({**good, "workflow_id": "no-target", "step": 0, "target_selector": ""}, "target_selector")
        add({**good, "workflow_id": "bad-selector", "step": 0, "target_selector": "div >"}, "target_selector")
        add(
            {**good, "workflow_id": "missing-target", "step": 0, "target_selector": "#no-such-element-anywhere"},
            "target_selector",
        )
        add(
            {**good, "workflow_id": "bad-path", "step": 0, "target_selector": "", "target_path": "/html/body/div[0]"},
            "target_path",
        )
        add(
            {**good, "workflow_id": "disagree", "step": 0, "target_selector": "body", "target_path": "/html/head"},
            "target_path",
        )
        # A good first step, a broken second one, and a third that must follow it out.
        lines.append(json.dumps({**good, "workflow_id": "cut-short", "step": 0}))
        expected_cut = len(lines)
        add({**good, "workflow_id": "cut-short", "step": 1, "target_selector": "#nope"}, "target_selector")
        add({**good, "workflow_id": "cut-short", "step": 2}, "workflow")
        broken_records["_cut_short_ok_line"] = str(expected_cut)
        # The same when the second record is refused while reading (no HTML): the third follows.
        lines.append(json.dumps({**good, "workflow_id": "cut-at-read", "step": 0}))
        add({**good, "workflow_id": "cut-at-read", "step": 1, "html": None}, "html")
        add({**good, "workflow_id": "cut-at-read", "step": 2}, "workflow")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "steps.jsonl").write_text("\n".join(lines) + "\n")
    return {"expected": expected, "broken": broken_records, "pages": chosen}


def split_workflows(data: bytes, folder: Path, files: int) -> None:
    """The JSONL records ``data`` in ``files`` files in ``folder``, each workflow's steps in
    one file, workflows dealt round-robin (a dataset as it comes at scale: many files)."""
    by_workflow: dict[str, list[bytes]] = {}
    for line in data.splitlines():
        if line.strip():
            by_workflow.setdefault(json.loads(line)["workflow_id"], []).append(line)
    folder.mkdir(parents=True)
    ids = list(by_workflow)
    for k in range(files):
        lines = [line for wid in ids[k::files] for line in by_workflow[wid]]
        (folder / f"part-{k:02d}.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def repeat_workflows(data: bytes, times: int) -> bytes:
    """The JSONL records ``data`` ``times`` over, each copy's workflow ids made its own
    (``ID-k``): a longer run of the same pages, where a run's fixed costs weigh less."""
    records = [json.loads(line) for line in data.splitlines() if line.strip()]
    out = [
        json.dumps({**record, "workflow_id": f"{record['workflow_id']}-{k}"}).encode()
        for k in range(times)
        for record in records
    ]
    return b"\n".join(out) + b"\n"
