"""What changed on a page between two observations, as an agent reads it after an action: the
lines that changed with the lines above them that place them (and, inside a form or a dialog,
its fields and buttons: what the agent does next), new elements marked as the
observation marks them (``*[id]``), and a short note of what disappeared. A change that is
most of the page, or a new document, is answered with the whole text instead.

The MCP server's incremental answers and ``pagelens browser``'s read this; the line diff itself
is the core's (``line_changes``: exact, linear in practice, bounded by a deadline).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pagelens._core import line_changes
from pagelens.browser.records import PageObservation

# An element's id as the text prints it (a page's own brackets are escaped: never one of these).
_ID = re.compile(r"(?<!\\)\*?\[(\d+)\]")
# The mark of an element new to the observation: the next observation prints the same element
# without it, which is no change of the page.
_MARK = re.compile(r"(?<!\\)\*(?=\[\d+\])")
# An incremental answer is given only when it is at most this share of the whole text.
MAX_SHARE = 0.6
# Roles of the containers whose actionable lines a change inside them shows, at most this many.
CONTAINERS = frozenset({"form", "dialog", "alertdialog"})
CONTAINER_SHOWN = 24
# Lines that disappeared are named up to this many, each cut to this many characters.
GONE_SHOWN, GONE_WIDTH = 12, 80


@dataclass(frozen=True)
class Changes:
    """What changed: ``text`` is the incremental answer; ``changed`` and ``removed`` count
    the new text's changed lines and the old text's lines that went away."""

    text: str
    changed: int
    removed: int
    total: int  # lines in the new text


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip("\t"))


def _containers(lines: list[str]) -> list[int | None]:
    """For each line, the line of its innermost form or dialog ancestor (None: none), in one
    pass over the text."""
    out: list[int | None] = []
    stack: list[tuple[int, int]] = []  # (depth, line) of the open containers
    for i, line in enumerate(lines):
        depth = _depth(line)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        out.append(stack[-1][1] if stack else None)
        if line.lstrip("\t").split(" ", 1)[0] in CONTAINERS:
            stack.append((depth, i))
    return out


def _places(lines: list[str], above: int, below: int) -> bool:
    """Whether line ``above`` is an ancestor of line ``below`` (nothing between leaves it)."""
    depth = _depth(lines[above])
    return _depth(lines[below]) > depth and all(
        _depth(lines[i]) > depth or not lines[i].strip() for i in range(above + 1, below)
    )


def _actionable_in(lines: list[str], at: int) -> list[int]:
    """The lines with an id below the container on line ``at``."""
    depth = _depth(lines[at])
    found = []
    for i in range(at + 1, len(lines)):
        if _depth(lines[i]) <= depth and lines[i].strip():
            break
        if _ID.search(lines[i]):
            found.append(i)
    return found


def describe_changes(before: PageObservation | None, after: PageObservation) -> Changes | None:
    """The changes from ``before`` to ``after``, or None when the whole text should be shown
    instead: no earlier observation, another document or tab, a change that is most of the
    page, or nothing smaller to say."""
    if before is None or before.document is None or before.document != after.document or before.url != after.url:
        return None
    old, new = before.text, after.text
    old_lines, new_lines = old.split("\n"), new.split("\n")
    runs = line_changes(_MARK.sub("", old), _MARK.sub("", new))  # line for line: the indices hold
    changed_rows = [(s, e) for tag, _, _, s, e in runs if tag in ("insert", "replace")]
    # Old lines of elements still on the page changed (their new line is shown); the others went
    # away or were rewritten (text without an id).
    kept_ids = {m.group(1) for s, e in changed_rows for line in new_lines[s:e] for m in [_ID.search(line)] if m}
    gone = [
        line
        for tag, s, e, _, _ in runs
        if tag in ("delete", "replace")
        for line in old_lines[s:e]
        if not ((m := _ID.search(line)) and m.group(1) in kept_ids)
    ]
    changed = sum(e - s for s, e in changed_rows)
    if not changed and not gone:
        return Changes("The page did not change.", 0, 0, len(new_lines))
    shown: dict[int, str] = {}  # line of the new text -> its prefix ("+ " changed, "  " placing it)
    shown_until = -1  # the last changed line written out
    container = _containers(new_lines)
    for start, end in changed_rows:
        # The lines above that place the change (its ancestors in the tree), each once.
        depth = _depth(new_lines[start]) if start < len(new_lines) else 0
        for i in range(start - 1, shown_until, -1):
            if depth <= 1:  # the root (the page itself) places nothing: the answer names the page
                break
            d = _depth(new_lines[i])
            if d < depth and new_lines[i].strip():
                shown.setdefault(i, "  ")
                depth = d
        for i in range(start, end):
            shown[i] = "+ "
        shown_until = end - 1
    # A change inside a form or a dialog: what can be done there next (its fields and buttons)
    # is shown with it, the nearest first when there are many.
    first_change: dict[int, int] = {}  # container line -> the first change inside it
    for start, _ in changed_rows:
        at = container[start] if start < len(new_lines) else None
        if at is not None:
            first_change.setdefault(at, start)
    for at, start in first_change.items():
        shown.setdefault(at, "  ")
        near = sorted(
            (i for i in _actionable_in(new_lines, at) if i not in shown), key=lambda i: (i < start, abs(i - start))
        )
        for i in near[:CONTAINER_SHOWN]:
            shown.setdefault(i, "  ")
    out: list[str] = []
    previous = None
    for i in sorted(shown):
        if previous is not None and i > previous + 1 and not _places(new_lines, previous, i):
            out.append("…")  # lines left out here, beyond what the line above contains
        out.append(shown[i] + new_lines[i])
        previous = i
    if gone:
        kept = [line.strip() for line in gone if line.strip()]
        named = [line if len(line) <= GONE_WIDTH else line[: GONE_WIDTH - 1] + "…" for line in kept[:GONE_SHOWN]]
        more = f" and {len(kept) - GONE_SHOWN} more" if len(kept) > GONE_SHOWN else ""
        if kept:
            out.append(f"Gone or rewritten ({len(kept)} lines): " + " | ".join(named) + more)
    text = "\n".join(out)
    if len(text) > MAX_SHARE * len(new):
        return None
    return Changes(text, changed, len(gone), len(new_lines))
