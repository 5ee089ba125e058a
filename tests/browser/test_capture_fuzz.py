"""The differential fuzzer of the capture (issue 60, item 2): a hypothesis state machine changes a
page at random — every kind of change, seen by a MutationObserver or not (tests/sites/fuzz.html's
`change`), and resizes — interleaved with readings. Every reading runs with
``check_incremental`` (tests/conftest.py): one that copied rows is compared in its pass with a
whole reading and a difference raises; now and then a reading of the whole page by a capture that
copies nothing is compared with the incremental one, text for text.

Bounded in `make test`; `make fuzz-capture` runs it for as long as PAGELENS_FUZZ_SECONDS says."""

from __future__ import annotations

import os
import re
import time

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

KINDS = [
    "text", "class", "style", "attribute", "remove", "insert", "rule-edit", "rule-selector", "rule-insert",
    "rule-delete", "sheet-disabled", "adopt", "replace-sync", "attach-shadow", "slot-assign", "animate",
    "validity", "state", "design-mode", "popover", "details", "dialog", "value", "focus", "frame", "register",
    "pointer", "listen",
]  # fmt: skip

FUZZ_SECONDS = float(os.environ.get("PAGELENS_FUZZ_SECONDS", "0"))


def unmarked(text: str) -> str:
    return re.sub(r"\*\[(\d+)\]", r"[\1]", text)


def _machine(browser, site):
    class CaptureMachine(RuleBasedStateMachine):
        @initialize()
        def load(self):
            browser.reset(site.url("site/fuzz.html"))
            kinds = browser.run(lambda aenv: aenv.page.evaluate("window.CHANGE_KINDS"))
            assert kinds == KINDS  # the page and this list name the same changes

        @rule(kind=st.sampled_from(KINDS), pick=st.integers(0, 10_000), read=st.booleans())
        def change(self, kind, pick, read):
            browser.run(lambda aenv: aenv.page.evaluate("([k, p]) => window.change(k, p)", [kind, pick]))
            if read:
                self.read()

        @rule(width=st.sampled_from([500, 800, 1280]))
        def resize(self, width):
            browser.run(lambda aenv: aenv.page.set_viewport_size({"width": width, "height": 900}))

        @rule()
        def read(self):
            obs = browser.observe()  # check_incremental: raises on a reading that differs
            type(self).totals["readings"] += 1
            type(self).totals["copied"] += obs.reused_rows > 0
            self.last = obs.text

        @rule()
        def whole_reading_agrees(self):
            incremental = browser.observe().text
            browser.config.incremental = False
            try:
                whole = browser.observe().text
            finally:
                browser.config.incremental = True
            # Two readings in a row differ only in the marks of what is new since the one before.
            assert unmarked(incremental) == unmarked(whole)

        @invariant()
        def still_a_page(self):
            assert browser.run(lambda aenv: aenv.page.evaluate("typeof window.change")) == "function"

    return CaptureMachine


def test_random_changes_read_as_whole_readings(browser, site):
    """Bounded (derandomized: the same walks each run) unless PAGELENS_FUZZ_SECONDS asks for a
    campaign, which draws new walks until its time is up."""
    campaign = FUZZ_SECONDS > 0
    budget = settings(
        max_examples=10,
        stateful_step_count=20,
        deadline=None,
        derandomize=not campaign,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    machine = _machine(browser, site)
    machine.totals = {"readings": 0, "copied": 0}
    started = time.monotonic()
    walks = 0
    while True:
        run_state_machine_as_test(machine, settings=budget)
        walks += budget.max_examples
        if time.monotonic() - started >= FUZZ_SECONDS:
            break
    if campaign:
        print(
            f"capture fuzz: {walks} walks of up to {budget.stateful_step_count} steps in "
            f"{time.monotonic() - started:.0f} s: {machine.totals['readings']} readings, "
            f"{machine.totals['copied']} of them copying rows"
        )
    assert machine.totals["readings"] > 0
