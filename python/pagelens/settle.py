"""How long pagelens waits for a page to be quiet before it is read (ms), one home for every
reader. After an action and the load event (and, for Chromium's accessibility tree, the next
rendering update, when Chromium builds it), an environment waits until the page has had no
request in flight and no DOM change for ``QUIET_MS``, at most the reader's time below (late
work: scripts that fill the page, XHR); a quiet page is read after one quiet window. An
evaluator checking a page waits its whole time (WebArena's habit)."""

from __future__ import annotations

QUIET_MS = 60.0  # no request in flight and no DOM change for this long: the page is quiet
AFTER_ACTION_MS = 1_000.0  # at most, on a live site after an action (BrowserConfig's default)
SELF_CONTAINED_MS = 50.0  # pages with nothing late to wait for: MiniWoB++, study episodes' own browsers
FIRST_LOOK_MS = 500.0  # `pagelens observe` of a page just opened (its first paint may still be filling in)
CHECK_MS = 1_000.0  # an evaluator reading a page to score it (WebArena sleeps 3 s; the load event plus this)

# `--settle-ms` of the commands that keep a browser for an agent (pagelens mcp, pagelens browser).
SETTLE_MS_HELP = (
    f"the most time waited after an action for the page to go quiet, no request in flight and no DOM change for "
    f"{QUIET_MS:g} ms (default {AFTER_ACTION_MS:g}; higher for sites that keep loading)"
)
