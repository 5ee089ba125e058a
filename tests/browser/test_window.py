"""What an answer prints of a page over its budget (pagelens.browser.window): properties over
generated texts — whole lines of the text in order, within the budget, the view's lines in it,
parts that cover the page once, contents that name only what is outside the window."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens.browser.window import WINDOW_SHARE, contents, display_lines, line_cost, parts_of, window
from support.strategies import observation_lines

_ID = re.compile(r"\[(\d+)\]")

_line = observation_lines(10_000, st.text("abcdefgh xyz", max_size=120))


@st.composite
def _pages(draw):
    lines = draw(st.lists(_line, min_size=1, max_size=300))
    if draw(st.booleans()):  # a giant paragraph with elements inside it, as some pages print
        words = draw(st.lists(st.sampled_from(["word", "link [77] 'x'", "more text"]), min_size=50, max_size=900))
        lines.insert(draw(st.integers(0, len(lines))), "\t" + " ".join(words))
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(_pages(), st.integers(20, 800), st.data())
def test_a_window_is_whole_lines_within_the_budget_where_the_view_is(text, budget, data):
    room = int(budget * WINDOW_SHARE)
    lines = display_lines(text, room)
    assert "".join(line.replace("… ", "").replace("\t", "").replace(" ", "") for line in lines) == text.replace(
        "\n", ""
    ).replace("\t", "").replace(" ", "")  # the pieces are the text, cut
    assert all(line_cost(line) <= max(room, 5) for line in lines)
    ids = [int(m) for m in _ID.findall(text)]
    view = frozenset(data.draw(st.lists(st.sampled_from(ids), max_size=5))) if ids else frozenset()
    shown = window(text, budget, view=view)
    kept = lines[shown.first : shown.last + 1]
    assert shown.shown == "\n".join(kept) and 0 <= shown.first <= shown.last < shown.total == len(lines)
    assert sum(map(line_cost, kept)) <= room or shown.first == shown.last
    if view:  # at least one of the view's elements is in the window
        assert view & shown.ids
    # The contents name lines outside the window only, and only headings and elements.
    for entry in shown.rest.splitlines():
        found = re.match(r"  line (\d+): (.*)", entry)
        if found:
            n = int(found.group(1)) - 1
            assert not shown.first <= n <= shown.last
            assert found.group(2).startswith("heading ") or _ID.search(found.group(2))


@settings(max_examples=150, deadline=None)
@given(_pages(), st.integers(20, 800))
def test_the_parts_cover_the_page_once_and_each_is_asked_by_its_number(text, budget):
    lines = display_lines(text, int(budget * WINDOW_SHARE))
    runs = parts_of(lines, budget)
    assert runs[0][0] == 0 and runs[-1][1] == len(lines) - 1
    assert all(b[0] == a[1] + 1 for a, b in zip(runs, runs[1:], strict=False))
    for n, (first, last) in enumerate(runs, start=1):
        shown = window(text, budget, part=n)
        assert (shown.first, shown.last, shown.part, shown.parts) == (first, last, n, len(runs))
    past = window(text, budget, part=len(runs) + 5)
    assert (past.part, past.last) == (len(runs), len(lines) - 1)


def test_the_contents_keep_the_end_of_the_page_and_fit_their_budget():
    """Over its budget the contents spread over the rest, the page's last elements kept (its
    submit button, its footer) and the count of those left out said."""
    lines = ["RootWebArea 'Shop'"] + [f"\tlink [{i}] 'item {i}'" for i in range(1, 2000)]
    lines += ["\theading 'Checkout'", "\tbutton [5000] 'Pay'"]
    text = contents(lines, 0, 10, 300)
    assert "button [5000] 'Pay'" in text and "heading 'Checkout'" in text and "… and" in text
    assert sum(line_cost(line) for line in text.splitlines()) <= 300 + 40
