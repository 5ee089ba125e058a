"""The blocking fronts cannot lag the async environments: every public method and property
of an async environment has a twin of the same parameters on its sync front, except those
whose values are bound to the async loop (Playwright objects), listed here with why."""

from __future__ import annotations

import inspect

import pytest

from pagelens.browser import AsyncBrowserEnv, BrowserEnv
from pagelens.envs.miniwob import AsyncMiniWoBEnv, MiniWoBEnv

# Public members that only make sense on the environment's own loop.
ASYNC_ONLY = {
    "page": "a Playwright Page, usable only on the environment's loop (BrowserEnv.run gives access)",
    "context": "a Playwright BrowserContext, same",
    "element": "an async context manager over a Playwright ElementHandle",
    "sessions_for": "CDP sessions of a Playwright Page",
    "set_active_page": "takes a Playwright Page",
}


def _public(cls: type) -> dict[str, object]:
    return {n: inspect.getattr_static(cls, n) for n in dir(cls) if not n.startswith("_")}


@pytest.mark.parametrize(("front", "back"), [(BrowserEnv, AsyncBrowserEnv), (MiniWoBEnv, AsyncMiniWoBEnv)])
def test_every_async_member_has_a_sync_twin(front, back):
    sync, aio = _public(front), _public(back)
    missing = sorted(set(aio) - set(sync) - set(ASYNC_ONLY))
    assert not missing, f"{front.__name__} lacks {missing} (add a twin, or list it in ASYNC_ONLY with why)"
    for name, member in aio.items():
        if name in ASYNC_ONLY or not callable(member) or isinstance(member, (property, type)):
            continue
        theirs = inspect.signature(getattr(back, name)).parameters
        ours = inspect.signature(getattr(front, name)).parameters
        assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()], name


def test_the_async_only_list_names_members_that_exist():
    """A name left in ASYNC_ONLY after its member went away would hide a new one's absence."""
    assert set(ASYNC_ONLY) <= set(_public(AsyncBrowserEnv))
