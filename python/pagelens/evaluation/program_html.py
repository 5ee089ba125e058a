"""program_html: run each target's locator on the site's final state and check its contents.

The URL to check is ``last`` (the run's final URL), a URL (placeholders resolved), or a helper
``func:name(args)``; the locator is empty (the whole page), a JavaScript ``document...``
expression run in the page after the optional ``prep_actions``, or a helper. Helpers come from
the whitelist below, called with literal arguments parsed from the config: nothing from a
config is ``eval``-ed as Python (WebArena's harness ``eval``s these strings); an expression
that is not one of WebArena's helpers is that task's error, named with its id and file.
Site placeholders are replaced across the whole config before (see ``TaskConfig.resolved``).
"""

from __future__ import annotations

import ast
import asyncio
import html
import json
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Page

from pagelens import settle
from pagelens.errors import ArgumentError
from pagelens.evaluation.errors import NotScored, TaskError
from pagelens.evaluation.strings import exact_match, must_include
from pagelens.evaluation.tasks import ProgramTarget, SiteConfig, TaskConfig
from pagelens.evaluation.variants import Variant, get_variant

__all__ = ["HELPERS", "ProgramHtmlEvaluator", "parse_helper"]


# -- helpers ------------------------------------------------------------------------------------


def reddit_get_post_url(ctx: HelperContext, url: str) -> str:
    """The post a URL belongs to: ``/f/<forum>/<id>/...`` -> ``/f/<forum>/<id>/``. Read with
    ``urlparse`` as WebArena does: ``;params`` of the last segment are not part of the path."""
    parts = urllib.parse.urlparse(url)
    segments = parts.path.split("/")
    if len(segments) < 4 or segments[1] != "f":
        return url
    return f"{parts.scheme}://{parts.netloc}/f/{segments[2]}/{segments[3]}/"


def _shopping_api(ctx: HelperContext, path: str, params: dict[str, str] | None = None) -> Any:
    base = ctx.sites.base("__SHOPPING__")
    account = ctx.sites.accounts.get("shopping_admin")
    if base is None or not account:
        raise NotScored(
            "this check reads the shopping site's REST API: give its URL and a shopping_admin account in --sites"
        )
    token_request = urllib.request.Request(
        f"{base}/rest/default/V1/integration/admin/token",
        data=json.dumps({"username": account["username"], "password": account["password"]}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(token_request, timeout=ctx.timeout) as r:
            token = json.loads(r.read())
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        request = urllib.request.Request(f"{base}{path}{query}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=ctx.timeout) as r:
            return json.loads(r.read())
    except OSError as e:
        raise NotScored(f"the shopping site's REST API did not answer: {e}") from None


def shopping_get_latest_order_url(ctx: HelperContext) -> str:
    data = _shopping_api(
        ctx,
        "/rest/V1/orders",
        {
            "searchCriteria[sortOrders][0][field]": "created_at",
            "searchCriteria[sortOrders][0][direction]": "DESC",
            "searchCriteria[pageSize]": "1",
        },
    )
    order = int(data["items"][0]["increment_id"])
    return f"{ctx.sites.base('__SHOPPING__')}/sales/order/view/order_id/{order}/"


def shopping_get_sku_latest_review_author(ctx: HelperContext, sku: str) -> str:
    reviews = _shopping_api(ctx, f"/rest/V1/products/{urllib.parse.quote(sku)}/reviews")
    return reviews[-1]["nickname"] if reviews else ""


def shopping_get_sku_latest_review_rating(ctx: HelperContext, sku: str) -> str:
    reviews = _shopping_api(ctx, f"/rest/V1/products/{urllib.parse.quote(sku)}/reviews")
    if not reviews:
        return ""
    # WebArena's helper asserts that the first review's first rating is the star rating.
    name = reviews[0]["ratings"][0]["rating_name"]
    if name != "Rating":
        raise ValueError(f"the first review's first rating is {name!r}, not 'Rating' (WebArena's helper asserts it)")
    return str(reviews[-1]["ratings"][0]["percent"])


async def gitlab_get_project_memeber_role(ctx: HelperContext, page: Page, account: str) -> str:
    """The role shown for ``@account`` on a GitLab project-members page (name as WebArena spells it)."""
    try:
        role = await page.evaluate(
            """name => {
                const accounts = [...document.querySelectorAll(
                    "td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
                const i = accounts.findIndex(e => e.outerText === '@' + name);
                return i < 0 ? '' : document.querySelectorAll('td.col-max-role span')[i].outerText;
            }""",
            account,
        )
        return str(role)
    except Exception:
        return ""


HELPERS = {
    "reddit_get_post_url": reddit_get_post_url,
    "shopping_get_latest_order_url": shopping_get_latest_order_url,
    "shopping_get_sku_latest_review_author": shopping_get_sku_latest_review_author,
    "shopping_get_sku_latest_review_rating": shopping_get_sku_latest_review_rating,
    "gitlab_get_project_memeber_role": gitlab_get_project_memeber_role,
}
PAGE = object()  # the `__page__` argument


@dataclass
class HelperContext:
    sites: SiteConfig
    last_url: str
    timeout: float = 30.0


def parse_helper(text: str, last_url: str) -> tuple[str, list[Any]]:
    """``func:name('a', __page__)`` -> ("name", ["a", PAGE]). Only WebArena's helpers, with
    string literals or ``__page__`` as arguments; anything else raises ``ValueError``."""
    body = text.split("func:", 1)[1].strip()
    try:
        call = ast.parse(body, mode="eval").body
    except SyntaxError:
        raise ArgumentError(f"not a call of one of WebArena's helpers ({', '.join(sorted(HELPERS))})") from None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords:
        raise ArgumentError(f"not a call of one of WebArena's helpers ({', '.join(sorted(HELPERS))})")
    name = call.func.id
    if name not in HELPERS:
        raise ArgumentError(f"{name!r} is not one of WebArena's helpers ({', '.join(sorted(HELPERS))})")
    args: list[Any] = []
    for arg in call.args:
        if isinstance(arg, ast.Name) and arg.id == "__page__":
            args.append(PAGE)
        elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            args.append(arg.value.replace("__last_url__", last_url))
        else:
            raise ArgumentError(f"helper {name!r}: arguments are string literals or __page__, got {ast.unparse(arg)}")
    return name, args


async def _call_helper(text: str, ctx: HelperContext, page: Page, task: TaskConfig) -> str:
    try:
        name, args = parse_helper(text, ctx.last_url)
    except ValueError as e:
        raise TaskError(f"{task.where}: program_html expression {text!r}: {e}") from None
    fn: Any = HELPERS[name]  # the helpers' signatures differ; parse_helper checked the call
    args = [page if a is PAGE else a for a in args]
    try:
        if asyncio.iscoroutinefunction(fn):
            return str(await fn(ctx, *args))
        return str(await asyncio.to_thread(fn, ctx, *args))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        # The site answered with data the helper does not expect (a review without ratings, no
        # orders, an order id that is not a number): this run cannot be checked; others can.
        raise NotScored(f"{name} could not read the site's answer ({type(e).__name__}: {e})") from None


# -- the evaluator -----------------------------------------------------------------------------


@dataclass
class ProgramHtmlEvaluator:
    variant: Variant | str = "webarena"
    sites: SiteConfig = field(default_factory=SiteConfig)
    settle_ms: float = settle.CHECK_MS  # WebArena sleeps 3 s after navigating; the load event plus this
    navigation_timeout_ms: float = 30_000
    details: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.variant = get_variant(self.variant)

    async def score(self, task: TaskConfig, final_url: str | None, page: Page, at_final_url: bool = False) -> float:
        """``task`` has its placeholders resolved; ``page`` is a tab on the site;
        ``at_final_url``: it already shows the run's final state (live scoring), else "last"
        is reached by navigating to ``final_url``."""
        v = get_variant(self.variant)
        self.details = []
        ctx = HelperContext(self.sites, final_url or "")
        score = 1.0
        for target in task.program_html:
            options = [target, *(target.alternatives if v.html_or else ())]
            best = 0.0
            for option in options:
                best = max(best, await self._target(option, ctx, page, task, final_url, at_final_url))
            score *= best
        return score

    async def _target(
        self,
        target: ProgramTarget,
        ctx: HelperContext,
        page: Page,
        task: TaskConfig,
        final_url: str | None,
        at_final_url: bool,
    ) -> float:
        v = get_variant(self.variant)
        url = target.url
        if url.startswith("func:"):
            url = await _call_helper(url, ctx, page, task)
        if url == "last":
            if not final_url:
                raise NotScored("program_html checks the final page, and the run recorded no final URL")
            if not at_final_url:
                await self._goto(page, final_url)
        else:
            await self._goto(page, url)
        locator = target.locator.strip()
        if not locator:
            selected = await page.content()
        elif locator.startswith("document.") or locator.startswith("[...document."):
            try:  # one try around them all: the first prep action that throws ends the others
                for prep in target.prep_actions:
                    await page.evaluate(f"() => {prep}")
            except Exception:
                pass
            try:
                value = await page.evaluate(f"() => {locator}")
                selected = v.html_null_text if value is None else str(value)
            except Exception:
                selected = ""  # the element is not there: nothing found
        elif locator.startswith("func:"):
            selected = await _call_helper(locator, ctx, page, task)
        else:
            raise TaskError(
                f"{task.where}: program_html locator {locator!r} is neither empty, a "
                "`document.` expression nor a `func:` helper"
            )
        selected = html.unescape(selected)
        if target.exact_match is not None:
            s = exact_match(target.exact_match, selected)
            self.details.append(f"program_html {target.url} exact_match {target.exact_match!r}: {s:g}")
            return s
        found = []
        for content in target.must_include or ():
            # Each " |OR| " part is checked as a must_include reference of its own, so that
            # AgentOccam's check also splits a lower-case " |or| " inside it (AO-E:106).
            s = float(any(must_include(alt, selected, rule=v.must_include_or) for alt in content.split(" |OR| ")))
            self.details.append(f"program_html {target.url} must_include {content!r}: {s:g}")
            found.append(s)
        if not found:
            return 1.0
        if v.html_must_combine == "mean":
            return sum(found) / len(found)
        return float(all(found))

    def _check_resolved(self, url: str) -> str:
        missing = self.sites.unresolved(url)
        if missing:
            raise NotScored(f"program_html needs the URL of {', '.join(missing)} (--sites)")
        return url

    async def _goto(self, page: Page, url: str) -> None:
        url = self._check_resolved(url)
        try:
            await page.goto(url, wait_until="load", timeout=self.navigation_timeout_ms)
        except Exception as e:
            raise NotScored(f"the site did not answer at {url}: {str(e).splitlines()[0]}") from None
        if self.settle_ms:
            await asyncio.sleep(self.settle_ms / 1e3)
