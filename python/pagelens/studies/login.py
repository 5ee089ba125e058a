"""Logging in to WebArena's sites once per worker: the recipe WebArena's ``auto_login.py``
follows for each site (page, fields, button), run in a fresh browser context with the
account from the sites file (``"accounts": {"shopping": {"username", "password"}}``); the
context's storage state (cookies, local storage) is then given to every episode of that
worker on that site. A storage state file ``STORAGE_DIR/<site>.json`` wins over the recipe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from pagelens.errors import PagelensError


class LoginError(PagelensError, RuntimeError):
    """A site's login could not be done (no account, no recipe, or the page refused)."""


@dataclass(frozen=True)
class Field:
    by: str  # "label", "placeholder" or "test_id", as Playwright's get_by_*
    name: str
    value: str  # "username" or "password": which part of the account goes in


@dataclass(frozen=True)
class Recipe:
    path: str  # the login page, under the site's URL
    fields: tuple[Field, ...]
    submit_by: str  # "role" (a button with this name) or "test_id"
    submit: str


# WebArena's browser_env/auto_login.py, site by site.
RECIPES = {
    "shopping": Recipe(
        "/customer/account/login/",
        (Field("label", "Email", "username"), Field("label", "Password", "password")),
        "role",
        "Sign In",
    ),
    "reddit": Recipe(
        "/login", (Field("label", "Username", "username"), Field("label", "Password", "password")), "role", "Log in"
    ),
    "shopping_admin": Recipe(
        "",
        (Field("placeholder", "user name", "username"), Field("placeholder", "password", "password")),
        "role",
        "Sign in",
    ),
    "gitlab": Recipe(
        "/users/sign_in",
        (Field("test_id", "username-field", "username"), Field("test_id", "password-field", "password")),
        "test_id",
        "sign-in-button",
    ),
}


def _locate(page: Page, by: str, name: str) -> Any:
    if by == "label":
        return page.get_by_label(name, exact=True)
    if by == "placeholder":
        return page.get_by_placeholder(name)
    if by == "test_id":
        return page.get_by_test_id(name)
    return page.get_by_role("button", name=name)


async def log_in(browser: Any, site: str, base_url: str, account: dict[str, str], timeout_ms: float) -> dict[str, Any]:
    """Runs ``site``'s recipe in a new context of ``browser`` (a Playwright Browser) and returns
    the context's storage state."""
    recipe = RECIPES.get(site)
    if recipe is None:
        raise LoginError(
            f"no login recipe for site {site!r} (known: {', '.join(sorted(RECIPES))}); "
            f"give STORAGE_DIR/{site}.json instead"
        )
    context = await browser.new_context()
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        login_url = base_url.rstrip("/") + recipe.path
        await page.goto(login_url, wait_until="load")
        for field in recipe.fields:
            await _locate(page, field.by, field.name).fill(account[field.value])
        button = (
            page.get_by_test_id(recipe.submit)
            if recipe.submit_by == "test_id"
            else page.get_by_role("button", name=recipe.submit)
        )
        # The site's answer (a session cookie and a redirect, or the login page again for a
        # wrong password) is a navigation that comes after the click returns: the state is
        # taken once it has loaded, and only if it left the login page. Waiting for that page
        # to be left instead would take the whole timeout to tell a wrong password.
        try:
            async with page.expect_navigation(wait_until="load"):
                await button.click()
        except PlaywrightTimeoutError:
            pass  # no answer in time: where the page is tells
        if page.url.split("?")[0].rstrip("/") == login_url.rstrip("/"):
            raise LoginError(
                f"logging in to {site} at {base_url} as {account.get('username')!r} (the sites file's account for "
                f"{site}): the site stayed on its login page; is that account's password right?"
            )
        await page.wait_for_load_state("load")
        state: dict[str, Any] = await context.storage_state()
        return state
    except LoginError:
        raise
    except Exception as e:
        raise LoginError(f"logging in to {site} at {base_url} as {account.get('username')!r} failed: {e}") from e
    finally:
        await context.close()


def merge_states(states: list[dict[str, Any]]) -> dict[str, Any]:
    """One storage state for a task on several sites."""
    return {
        "cookies": [c for s in states for c in s.get("cookies", [])],
        "origins": [o for s in states for o in s.get("origins", [])],
    }
