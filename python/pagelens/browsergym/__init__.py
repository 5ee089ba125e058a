"""pagelens inside BrowserGym and AgentLab: its observation read as pagelens' occam text, with
BrowserGym's own element ids (``bid``), and pagelens actions written as BrowserGym's.

::

    from pagelens.browsergym import occam_text, to_action

    text = occam_text(obs)                  # obs: what BrowserGym's env.step() returned
    action = to_action("click [12]", obs)   # -> "click('12')", for env.step(action)

Nothing here imports BrowserGym: the observation is a dict (``axtree_object``,
``extra_element_properties``, ``dom_object``, as BrowserGym gives them), the action a string.
BrowserGym pins an older Playwright than pagelens; install it beside pagelens without its
dependencies (README, "BrowserGym"). :func:`link_playwright_browsers` gives the second Chromium
BrowserGym starts (its chat window) Debian's.

Three jobs, a module each: ``observation`` (BrowserGym's observation as a pagelens tree with
bids), ``actions`` (a pagelens action as BrowserGym's call, in the caller's action set),
``browsers`` (Debian's Chromium where Playwright looks for its own).
"""

from __future__ import annotations

from pagelens.browsergym.actions import BROWSERGYM_SUBSETS, DEFAULT_SUBSETS, SCROLL_PIXELS, to_action
from pagelens.browsergym.browsers import link_playwright_browsers
from pagelens.browsergym.observation import bid_tree, occam_observation, occam_text

__all__ = [
    "BROWSERGYM_SUBSETS",
    "DEFAULT_SUBSETS",
    "SCROLL_PIXELS",
    "bid_tree",
    "link_playwright_browsers",
    "occam_observation",
    "occam_text",
    "to_action",
]
