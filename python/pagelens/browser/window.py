"""The part of a page over the answer's budget that an answer prints: a window of whole lines —
where the agent's view is, or a numbered part — and, compactly, what the rest holds (its headings
and the lines with ids, each usable as printed), with how to reach the rest with the caller's
own commands.

Pure text: the session says which line the view is at (see ``BrowserSession.locate``); nothing
here touches the page. Costs are estimated per line (a character count), within a few percent of
a tokenizer's on observation text, and linear in the text.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# An element's id as the text prints it (a page's own brackets are escaped: never one of these).
_ID = re.compile(r"(?<!\\)\*?\[(\d+)\]")
# The share of the budget the window takes; the rest is the contents of the other lines.
WINDOW_SHARE = 0.75
# Lines above the view's first line the window keeps (what leads to it).
LEAD_LINES = 3


def line_cost(line: str) -> int:
    """A line's tokens, estimated (observation text runs ~3.5 characters a token)."""
    return len(line) // 3 + 1


@dataclass(frozen=True)
class Window:
    """What an answer prints of a long page: its lines ``first`` to ``last`` (0-based, inclusive)
    of ``total`` (a line too long for a window is cut into several, at spaces), which are
    ``part`` of ``parts`` when asked by number; the ids they show."""

    first: int
    last: int
    total: int
    part: int
    parts: int
    shown: str  # the window's lines
    rest: str  # the contents of the lines outside it ("" when nothing is left out)
    ids: frozenset[int]


def display_lines(text: str, room: int) -> list[str]:
    """The text's lines, each longer than ``room`` tokens cut into pieces that fit (at a space
    near the end of each, the pieces after the first marked "… "): a page of one giant line is
    read in parts too."""
    out: list[str] = []
    for line in text.split("\n"):
        if line_cost(line) <= room:
            out.append(line)
            continue
        body = line.lstrip("\t")
        tabs = line[: len(line) - len(body)]
        most = max(12, (room - 1) * 3 - len(tabs) - 2)  # characters: each piece's line_cost fits
        lead = ""
        while body:
            cut = len(body)
            if cut > most:
                space = body.rfind(" ", most // 2, most)
                cut = space if space > 0 else most
            out.append(tabs + lead + body[:cut])
            body, lead = body[cut:].lstrip(" "), "… "
    return out


def parts_of(lines: list[str], budget: int) -> list[tuple[int, int]]:
    """The page's parts: consecutive runs of whole lines, each within the window's share of the
    budget."""
    room = max(1, int(budget * WINDOW_SHARE))
    out: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, line in enumerate(lines):
        cost = line_cost(line)
        if used and used + cost > room:
            out.append((start, i - 1))
            start, used = i, 0
        used += cost
    out.append((start, len(lines) - 1))
    return out


def window(text: str, budget: int, *, view: frozenset[int] = frozenset(), part: int | None = None) -> Window:
    """The window of ``text`` for a ``budget`` of tokens: the numbered ``part`` (1-based; past
    the last, the last), else the one that shows the most of the ids in ``view`` (the elements
    in the viewport: a page's columns put far lines side by side), from a little above the first
    of them, else the first lines; and the contents of the rest within what the budget leaves."""
    room = max(1, int(budget * WINDOW_SHARE))
    lines = display_lines(text, room)
    runs = parts_of(lines, budget)
    if part is not None:
        index = min(max(part, 1), len(runs)) - 1
        first, last = runs[index]
    else:
        start = densest = _densest(lines, view, room)
        led, lead = 0, 0  # a few lines above it (what leads to it), within a tenth of the room
        own = line_cost(lines[densest]) if lines else 0
        while led < LEAD_LINES and start > 0 and lead + line_cost(lines[start - 1]) <= min(room // 10, room - own):
            start, led = start - 1, led + 1
            lead += line_cost(lines[start])
        if start <= LEAD_LINES and sum(line_cost(line) for line in lines[: densest + 1]) <= room:
            start = 0  # the view at the page's top: its first lines (the title, a heading) too
        first, last, used = start, start, 0
        while last < len(lines) and (used == 0 or used + line_cost(lines[last]) <= room):
            used += line_cost(lines[last])
            last += 1
        last -= 1
        # Near the end, the window reaches back to fill its room.
        while first > 0 and used + line_cost(lines[first - 1]) <= room:
            first -= 1
            used += line_cost(lines[first])
        index = next((k for k, (a, b) in enumerate(runs) if a <= first <= b), 0)
    shown = lines[first : last + 1]
    ids = frozenset(int(m.group(1)) for line in shown for m in _ID.finditer(line))
    rest = contents(lines, first, last, max(1, budget - room))
    return Window(first, last, len(lines), index + 1, len(runs), "\n".join(shown), rest, ids)


def _densest(lines: list[str], view: frozenset[int], room: int) -> int:
    """The line a window of ``room`` tokens starts at to hold the most lines printing an id of
    ``view`` (the earliest such start; 0 for an empty view): linear in the text, then
    ``k log k`` in the view's lines."""
    if not view:
        return 0
    at = sorted({i for i, line in enumerate(lines) for m in _ID.finditer(line) if int(m.group(1)) in view})
    if not at:
        return 0
    prefix = [0]
    for line in lines:
        prefix.append(prefix[-1] + line_cost(line))
    best, best_count = at[0], 0
    for k, start in enumerate(at):
        end = bisect.bisect_right(prefix, prefix[start] + room) - 1  # lines start..end-1 fit
        count = bisect.bisect_left(at, end) - k
        if count > best_count:
            best, best_count = start, count
    return best


# An element as a line prints it: its role, its id, and its name when it has one (quoted, the
# page's quotes escaped).
_ELEMENT = re.compile(r"[A-Za-z]+ (?<!\\)\*?\[\d+\](?: '(?:[^'\\]|\\.)*')?")
# A line listed whole in the contents when this short; a longer one by its elements.
ENTRY_COST = 40
# The last elements of a side, listed before the rest is spread.
TAIL = 4


def _entries(line: str) -> list[str]:
    """What the contents list of a line: the line itself (a heading, or a short line with an
    id), else each element it prints (role, id, name), each cut to a hundred characters."""
    stripped = line.lstrip("\t")
    if stripped.startswith("heading ") or (line_cost(stripped) <= ENTRY_COST and _ID.search(stripped)):
        return [stripped if len(stripped) <= 100 else stripped[:99] + "…"]
    return [m.group(0) if len(m.group(0)) <= 100 else m.group(0)[:99] + "…" for m in _ELEMENT.finditer(stripped)]


def contents(lines: list[str], first: int, last: int, budget: int) -> str:
    """The headings and the elements with ids outside ``first``..``last``, above and below, as
    printed (a long line by its elements), each with its line, within ``budget`` tokens:
    spread evenly over each side when they do not all fit (headings first), the count of those
    left out said."""
    sides = [("Above", range(0, first)), ("Below", range(last + 1, len(lines)))]
    listed = {name: [(i, e) for i in rows for e in _entries(lines[i])] for name, rows in sides}
    total_cost = sum(line_cost(e) for found in listed.values() for _, e in found)
    out: list[str] = []
    for name, rows in sides:
        found = listed[name]
        if not rows:
            continue
        share = budget * (sum(line_cost(e) for _, e in found) / total_cost) if total_cost else 0
        chosen = _spread(found, int(share))
        out.append(f"{name} (lines {rows.start + 1}-{rows.stop}): {len(found)} headings and elements with ids")
        out += [f"  line {i + 1}: {entry}" for i, entry in chosen]
        if len(chosen) < len(found):
            out.append(f"  … and {len(found) - len(chosen)} more")
    return "\n".join(out)


def _spread(found: list[tuple[int, str]], budget: int) -> list[tuple[int, str]]:
    """Of ``found`` (line, entry), as many as ``budget`` holds: headings first, then the others
    evenly over the side (its last and first among them), in the page's order."""
    cost = [line_cost(e) + 4 for _, e in found]
    if sum(cost) <= budget:
        return found
    headings = [k for k, (_, e) in enumerate(found) if e.startswith("heading ")]
    heading_set = set(headings)
    others = [k for k in range(len(found)) if k not in heading_set]
    chosen: list[int] = []
    used = 0
    for group in (headings, _evenly(others)):
        for k in group:
            if used + cost[k] > budget:
                break
            chosen.append(k)
            used += cost[k]
    return [found[k] for k in sorted(chosen)]


def _evenly(items: list[int]) -> list[int]:
    """``items`` reordered so that any prefix is spread over them: the last few (the end of a
    page: its submit buttons, its footer), the first, then the middles of the gaps, halving."""
    if len(items) <= TAIL + 1:
        return items[::-1]
    order = [*range(len(items) - 1, len(items) - 1 - TAIL, -1), 0]
    seen = set(order)
    step = len(items)
    while len(order) < len(items) and step > 1:
        step = max(1, step // 2)
        for k in range(step, len(items), step):
            if k not in seen:
                seen.add(k)
                order.append(k)
    return [items[k] for k in order]
