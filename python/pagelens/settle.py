"""How long a page must be quiet before it is read (ms), one home for every reader: after
the load event and the next rendering update, pagelens waits this much longer for late
work (scripts that fill the page, XHR) before it observes or checks a page."""

from __future__ import annotations

AFTER_ACTION_MS = 300.0  # a live site after an action (BrowserConfig's default)
SELF_CONTAINED_MS = 50.0  # pages with nothing late to wait for: MiniWoB++, study episodes' own browsers
FIRST_LOOK_MS = 500.0  # `pagelens observe` of a page just opened (its first paint may still be filling in)
CHECK_MS = 1_000.0  # an evaluator reading a page to score it (WebArena sleeps 3 s; the load event plus this)
