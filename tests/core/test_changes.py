"""What changed between two observations (pagelens.browser.changes, the core's line_changes):
properties over generated texts, and the answer's facts."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens._core import escape_page_text, line_changes
from pagelens.browser.changes import describe_changes
from support.strategies import observation_lines

_line = observation_lines(40, st.text("abcxyz ", max_size=6))
_texts = st.lists(_line, max_size=40).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_texts, _texts)
def test_the_runs_rebuild_the_new_text_and_cover_both(old, new):
    o, n = old.split("\n"), new.split("\n")
    rebuilt: list[str] = []
    oi = ni = 0
    for tag, o1, o2, n1, n2 in line_changes(old, new):
        assert (o1, n1) == (oi, ni)
        assert tag in ("equal", "insert", "delete", "replace")
        if tag == "equal":
            assert o[o1:o2] == n[n1:n2]
        assert (tag == "insert") == (o1 == o2 and n1 < n2) or tag != "insert"
        rebuilt += n[n1:n2]
        oi, ni = o2, n2
    assert (oi, ni) == (len(o), len(n))
    assert rebuilt == n


def test_a_text_changed_everywhere_is_answered_within_its_deadline():
    old = "\n".join(f"text 'line {i}'" for i in range(50_000))
    new = "\n".join(f"text 'line {i * 7 % 50_001}'" for i in range(50_000))
    started = time.monotonic()
    runs = line_changes(old, new)
    assert time.monotonic() - started < 5
    assert runs[-1][2:] == (50_000, 50_000, 50_000) or runs[-1][4] == 50_000


class _Obs:
    """The fields describe_changes reads of an observation."""

    def __init__(self, text: str, document: float | None = 1.0, url: str = "http://a/") -> None:
        self.text, self.document, self.url = text, document, url


PAGE = "\n".join(
    ["RootWebArea 'Shop'", "\tnavigation", "\t\tlink [3] 'Home'", "\tmain", "\t\tform [7] 'Order'"]
    + [f"\t\t\ttext 'filler {i}'" for i in range(40)]
    + ["\t\t\ttextbox [9] 'Qty' value: '1'", "\t\t\ttext 'Total: 5 EUR'", "\t\t\tbutton [11] 'Buy'"]
)


def test_a_changed_line_is_shown_with_its_place_and_what_went_away():
    after = PAGE.replace("value: '1'", "value: '3'").replace("Total: 5 EUR", "Total: 15 EUR")
    changes = describe_changes(_Obs(PAGE), _Obs(after))  # type: ignore[arg-type]
    assert changes is not None
    lines = changes.text.split("\n")
    # The ancestors that place it (main, the form), then the changed lines.
    assert lines[:4] == [
        "  \tmain",
        "  \t\tform [7] 'Order'",
        "+ \t\t\ttextbox [9] 'Qty' value: '3'",
        "+ \t\t\ttext 'Total: 15 EUR'",
    ]
    # The textbox is still there (changed); the old total line is gone.
    assert lines[-1] == "Gone or rewritten (1 lines): text 'Total: 5 EUR'"
    assert changes.changed == 2 and changes.removed == 1
    assert "filler" not in changes.text and len(changes.text) < len(after) / 4


def test_new_elements_keep_their_mark_and_the_whole_text_comes_when_it_should():
    after = PAGE.replace("\t\t\tbutton [11] 'Buy'", "\t\t\tbutton [11] 'Buy'\n\t\t\tdialog *[12] 'Added'")
    changes = describe_changes(_Obs(PAGE), _Obs(after))  # type: ignore[arg-type]
    assert changes is not None and "+ \t\t\tdialog *[12] 'Added'" in changes.text and "Gone" not in changes.text
    assert describe_changes(_Obs(PAGE), _Obs(PAGE)).text == "The page did not change."  # type: ignore[arg-type,union-attr]
    # Another document, another address, no earlier look, or most of the page changed: the whole text.
    assert describe_changes(_Obs(PAGE), _Obs(after, document=2.0)) is None  # type: ignore[arg-type]
    assert describe_changes(_Obs(PAGE), _Obs(after, url="http://a/other")) is None  # type: ignore[arg-type]
    assert describe_changes(None, _Obs(after)) is None  # type: ignore[arg-type]
    rewritten = "\n".join(line + " (new)" for line in PAGE.split("\n"))
    assert describe_changes(_Obs(PAGE), _Obs(rewritten)) is None  # type: ignore[arg-type]


def test_an_element_that_is_no_longer_new_is_no_change():
    """A menu an action opened is marked new (``*[12]``); after the next action the same
    element prints unmarked: that is not a change of the page. A page's own text ``*[5]``
    (printed escaped, ``*\\[5]``) stays text."""
    opened = PAGE.replace("\t\t\tbutton [11] 'Buy'", "\t\t\tbutton [11] 'Buy'\n\t\t\tmenu *[12] options: *[13] 'A'")
    settled = opened.replace("*[", "[")
    assert describe_changes(_Obs(opened), _Obs(settled)).text == "The page did not change."  # type: ignore[arg-type,union-attr]
    grown = settled.replace("'A'", "'A'; *[14] 'B'")
    changes = describe_changes(_Obs(opened), _Obs(grown))  # type: ignore[arg-type]
    assert changes is not None and "+ \t\t\tmenu [12] options: [13] 'A'; *[14] 'B'" in changes.text
    assert changes.changed == 1 and changes.removed == 0
    quoted = PAGE.replace("Total: 5 EUR", "Total: " + escape_page_text("*[5]") + " EUR")
    changes = describe_changes(_Obs(quoted), _Obs(quoted.replace("*\\[5]", "\\[5]")))  # type: ignore[arg-type]
    assert changes is not None and changes.changed == 1


@settings(max_examples=200, deadline=None)
@given(_texts, _texts)
def test_every_changed_line_is_in_the_answer(old, new):
    changes = describe_changes(_Obs(old), _Obs(new))  # type: ignore[arg-type]
    if changes is None or changes.changed == 0:
        return
    shown = [line[2:] for line in changes.text.split("\n") if line.startswith("+ ")]
    for tag, _, _, n1, n2 in line_changes(old, new):
        if tag in ("insert", "replace"):
            for line in new.split("\n")[n1:n2]:
                assert line in shown
    # Context lines are lines of the new text.
    context = [line[2:] for line in changes.text.split("\n") if line.startswith("  ")]
    assert all(line in new.split("\n") for line in context)


def test_a_change_inside_a_form_or_dialog_shows_what_can_be_done_there():
    """An agent that keeps only the last answer finds the next field and the button: the
    container's lines with ids come with a change inside it (the nearest first when there are
    many); a change outside any form or dialog brings nothing more."""
    after = PAGE.replace("value: '1'", "value: '3'")
    changes = describe_changes(_Obs(PAGE), _Obs(after))  # type: ignore[arg-type]
    assert changes is not None
    lines = changes.text.split("\n")
    assert lines == [
        "  \tmain",
        "  \t\tform [7] 'Order'",
        "+ \t\t\ttextbox [9] 'Qty' value: '3'",
        "…",
        "  \t\t\tbutton [11] 'Buy'",
    ]
    dialog = "\n".join(
        ["RootWebArea 'Shop'", "\tdialog 'Pay'", "\t\tgroup 'Card'", "\t\t\ttextbox [20] 'Number'"]
        + [f"\t\t\ttext 'note {i}'" for i in range(30)]
        + ["\t\t\ttextbox [21] 'Expiry'", "\t\tbutton [22] 'Pay 500 EUR'", "\tbutton [23] 'Outside'"]
        + [f"\ttext 'footer {i}'" for i in range(30)]
    )
    typed = describe_changes(_Obs(dialog), _Obs(dialog.replace("'Number'", "'Number' value: '4111'")))  # type: ignore[arg-type]
    assert typed is not None
    assert "textbox [21] 'Expiry'" in typed.text and "button [22] 'Pay 500 EUR'" in typed.text
    assert "Outside" not in typed.text and "note" not in typed.text
    outside = describe_changes(_Obs(dialog), _Obs(dialog.replace("'footer 3'", "'footer three'")))  # type: ignore[arg-type]
    assert outside is not None and "[2" not in outside.text
    big = "\n".join(["RootWebArea 'Form'", "\tform 'Survey'"] + [f"\t\tcheckbox [{i}] 'Q{i}'" for i in range(100, 400)])
    ticked = describe_changes(_Obs(big), _Obs(big.replace("'Q250'", "'Q250' checked")))  # type: ignore[arg-type]
    assert ticked is not None
    near = [int(m) for m in re.findall(r"checkbox \[(\d+)\]", ticked.text) if m != "250"]
    assert len(near) == 24 and all(abs(i - 250) <= 24 for i in near)
