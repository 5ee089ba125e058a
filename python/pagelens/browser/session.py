"""One agent's live browser, kept between its calls: what the MCP server gives each MCP session
and ``pagelens browser`` each shell session. It opens pages on the allow-list's terms, carries
out actions on the environment's one action path, holds dialogs and file choosers for the
caller to answer, keeps what the page logged, and answers every action with what it did and
what changed on the page (``pagelens.browser.changes``), or the whole page.

Errors are :class:`SessionError` s whose ``kind`` says what went wrong (a server's tool error,
a shell's exit code): ``usage``, ``no_page``, ``unknown_id``, ``refused``, ``navigation``,
``action``, ``modal``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from pagelens._core import escape_page_text
from pagelens._io import write_atomically
from pagelens.actions import Action
from pagelens.browser.allowlist import HostAllowList
from pagelens.browser.changes import describe_changes
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.browser.launch import LaunchOptions
from pagelens.browser.pool import BrowserPool
from pagelens.browser.records import PageObservation, StepResult
from pagelens.browser.window import window
from pagelens.errors import PagelensError, one_line
from pagelens.hosts import web_address
from pagelens.serving import SnapshotMode, storage_state_problem
from pagelens.settle import AFTER_ACTION_MS

T = TypeVar("T")
# The longest an answer waits for Playwright to tell what an action set off (see _heard).
_HEARD_WAIT_S = 1.0

__all__ = [
    "IDLE_TIMEOUT_S",
    "MAX_TOKENS",
    "BrowserSession",
    "SessionError",
    "SessionOptions",
    "Words",
    "inside",
    "one_ref",
    "parse_ref",
]

# A snapshot answered inline up to this many tokens (GPT-2's); beyond, it goes to a file.
MAX_TOKENS = 6000
# A session with no call for this long has its browser closed.
IDLE_TIMEOUT_S = 30 * 60.0
# "12", "[12]", "*[12]", and the forms a prompt written for Playwright MCP may use: "e12", "[ref=e12]".
_REF = re.compile(r"^\s*\*?\[?\s*(?:ref\s*=\s*)?e?(\d+)\s*\]?\s*$")
_LOG_LIMIT = 1000  # console messages and requests kept per session
# How long an answer waits for the downloads its action started to be saved (a longer one is
# said to be under way, and said saved in a later answer).
DOWNLOAD_WAIT_S = 10.0
_DOWNLOADS_KEPT = 100


# A file name's most bytes (255 on the usual file systems), less room for " (9999)" that a
# name already taken gets.
_NAME_BYTES = 255 - len(" (9999)")


def _fit_name(name: str, most: int = _NAME_BYTES) -> str:
    """``name`` cut to ``most`` UTF-8 bytes at a character's boundary, its extension kept."""
    if len(name.encode()) <= most:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or len(ext.encode()) > 16:
        stem, dot, ext = name, "", ""
    room = most - len((dot + ext).encode())
    return stem.encode()[:room].decode("utf-8", "ignore").rstrip() + dot + ext


def safe_file_name(suggested: str) -> str:
    """A file name for what a page offers as ``suggested`` (its words: no directory, no hidden
    file, no character a shell or another system reads specially, no lone surrogate, and no
    square bracket: the answer prints the path as it is, and a page's ``[3]`` must not read as
    an id there)."""
    name = suggested.encode("utf-8", "replace").decode("utf-8").replace("\\", "/").rsplit("/", 1)[-1]
    name = name.translate(_BRACKETS)
    name = "".join(c if c.isprintable() and c not in '<>:"|?*' else "_" for c in name).strip().lstrip(".-")
    return _fit_name(name.strip()) or "download"


_BRACKETS = str.maketrans("[]", "()")


def free_path(directory: Path, name: str) -> Path:
    """``directory/name``, or ``name (2)`` and so on if that is taken; the file is created (empty)
    so that no other download takes the same name."""
    stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
    for n in range(1, 10_000):
        candidate = directory / (name if n == 1 else f"{stem} ({n}){dot}{ext}")
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return candidate
        except FileExistsError:
            continue
    raise SessionError(f"no free file name for the download {name!r} in {directory}", "action")


@dataclass
class _Download:
    """A file a page downloaded: saved under ``path`` (in the session's output directory)."""

    name: str
    path: Path
    state: str = "started"  # then "saved" or "failed"
    error: str = ""
    said: str = ""  # the state an answer last reported


class SessionError(PagelensError):
    """A call the session could not carry out; ``kind`` says why (see the module)."""

    def __init__(self, message: str, kind: str = "action") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Words:
    """How answers and errors name the caller's own commands (an MCP server's tools, a shell's
    subcommands)."""

    open: str = "browser_navigate"
    snapshot: str = "browser_snapshot"
    dialog: str = "browser_handle_dialog"
    upload: str = "browser_file_upload"
    allow_file: str = "--allow-file DIR"
    # How a long page's answer says to reach the rest (Playwright MCP's own tools first).
    view: str = "browser_press_key End or PageDown (or browser_scroll)"
    part: str = "browser_snapshot with part=N"
    find: str = "browser_find"


@dataclass(frozen=True)
class SessionOptions:
    """What a browser session is held to (the MCP server's sessions, a shell session)."""

    allowed: tuple[str, ...] = ()  # --allow-host; empty: browser_navigate allows what it is asked to open
    allow_file: tuple[Path, ...] = ()  # directories file: URLs may open
    output_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="pagelens-")))
    max_tokens: int = MAX_TOKENS
    snapshot_mode: SnapshotMode = "incremental"
    caps: frozenset[str] = frozenset()
    headed: bool = False
    idle_timeout_s: float = IDLE_TIMEOUT_S
    settle_ms: float = AFTER_ACTION_MS  # the most time waited for the page to go quiet after an action
    words: Words = field(default_factory=lambda: Words())  # how answers name the caller's commands


def parse_ref(ref: str | int | None, what: str = "ref") -> int:
    """The id a ``ref`` names: ``"12"``, ``"[12]"``, ``"*[12]"``, ``12``, or Playwright MCP's
    spelling ``"e12"``; else a tool error saying what a ref is."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref
    found = _REF.match(ref) if isinstance(ref, str) else None
    if found is None:
        raise SessionError(
            f"{what} {ref!r} is not an element id: give the number in brackets from the last snapshot, "
            'e.g. "12" for [12]',
            "usage",
        )
    return int(found.group(1))


def one_ref(ref: str | None, target: str | None, what: str = "ref") -> int:
    given = ref if ref is not None else target
    if given is None:
        raise SessionError(
            f'{what} is required: the id of the element in the last snapshot, e.g. "12" for [12]', "usage"
        )
    return parse_ref(given, what)


def inside(path: Path, roots: tuple[Path, ...]) -> bool:
    resolved = path.resolve()
    return any(resolved == r or r in resolved.parents for r in (root.resolve() for root in roots))


async def _done_before_a_dialog(env: AsyncBrowserEnv, task: asyncio.Future[Any]) -> bool:
    """Waits for ``task`` or for a dialog held for the caller, whichever comes first: whether
    the task finished (a dialog holds the page's thread, and every call into the page, until
    it is answered)."""
    opened = asyncio.ensure_future(env.dialog_opened.wait())
    try:
        await asyncio.wait({task, opened}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        opened.cancel()
    return task.done()


class BrowserSession:
    """One agent's browser (an MCP session's, a shell session's): its environment, its last
    observation, the dialogs and file choosers waiting, what the page logged; it carries out
    actions and answers each with what it did and what changed."""

    def __init__(self, options: SessionOptions, pool: BrowserPool | None = None) -> None:
        self.options = options
        # Where the session's browser context comes from: a server's shared browsers, else a
        # browser of its own.
        self.pool = pool
        self.words = options.words
        self.allowed: tuple[str, ...] = options.allowed
        self.env: AsyncBrowserEnv | None = None
        self.last: PageObservation | None = None
        self.storage_state: dict[str, Any] | None = None  # cookies and storage new contexts start with
        self.last_used = time.monotonic()
        self.lock = asyncio.Lock()
        # An action left waiting on a dialog: finished once the dialog is answered.
        self.pending: asyncio.Task[StepResult] | None = None
        self.choosers: list[Any] = []  # file choosers waiting for browser_file_upload
        self.console: deque[tuple[int, str, str]] = deque(maxlen=_LOG_LIMIT)  # (navigation, level, text)
        # On a page over the budget: where the view is (see locate), what the last window showed
        # and the view the last answer spoke of.
        self._view: frozenset[int] = frozenset()  # the ids of the elements in the viewport
        self._answered: frozenset[int] = frozenset()  # the ids of the window last printed
        self._last_view: frozenset[int] = frozenset()  # the view at the last answer that said it
        # The folders the client works in (an MCP client's roots), told by the front before an
        # operation that reads files; None: the client named none (the working directory is).
        self.file_roots: tuple[Path, ...] | None = None
        self.requests: deque[tuple[int, Any]] = deque(maxlen=_LOG_LIMIT)
        self.navigations = 0
        self.downloads: deque[_Download] = deque(maxlen=_DOWNLOADS_KEPT)
        self._saving: set[asyncio.Task[None]] = set()
        self._download_seen = asyncio.Event()  # set by every download, cleared by every action

    # -- the browser ------------------------------------------------------------------------

    def _config(self) -> BrowserConfig:
        return BrowserConfig(
            storage_state=self.storage_state,
            hold_dialogs=True,
            settle_ms=self.options.settle_ms,
            allowed_hosts=self._allow_list() or None,
            launch=LaunchOptions(headless=not self.options.headed),
        )

    def _allow_list(self) -> tuple[str, ...]:
        hosts = self.allowed
        if self.options.allow_file:
            hosts = (*hosts, *(f"file:{d.resolve()}" for d in self.options.allow_file))
        return hosts

    def opening(self, url: str) -> Callable[[], Awaitable[StepResult]]:
        """The work of opening ``url`` in the current tab (the first one: a fresh browser),
        once the URL is checked."""
        self._check_url(url)
        if self.env is not None and self.env.browser_lost:
            self.last = None  # the pages went with the browser: opened afresh, in a new context
        if self.env is None:
            self.env = AsyncBrowserEnv(self._config(), pool=self.pool)
        env = self.env
        if self.last is None:

            async def first() -> StepResult:
                env.config.allowed_hosts = self._allow_list() or None
                if self._watch_page not in env.page_watchers:
                    env.page_watchers.append(self._watch_page)
                # A new browser context: the logs are of its pages, from the first (its load's
                # messages and requests included).
                self.console.clear()
                self.requests.clear()
                self.choosers.clear()
                obs = await env.reset(url)
                return StepResult(Action("goto", text=url), ok=True, observation=obs)

            return first
        env.set_allow_list(self._allow_list())
        return lambda: env.perform(f"open {url}", lambda: env.navigate(url, settle=False))

    def _check_url(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme == "file":
            path = Path(unquote(parts.path))
            if not self.options.allow_file:
                raise SessionError(
                    f"file: URLs are refused ({url}): start with {self.words.allow_file} to open the files of a "
                    "directory",
                    "refused",
                )
            if not inside(path, self.options.allow_file):
                dirs = ", ".join(str(d) for d in self.options.allow_file)
                raise SessionError(f"{url} is outside the directories opened to file: URLs ({dirs})", "refused")
            return
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SessionError(f"not a web address to open: {url!r} (give an http:// or https:// URL)", "usage")
        if self.options.allowed:
            allow = HostAllowList(self.options.allowed)
            if not allow.allows(url):
                raise SessionError(allow.refusal(url), "refused")
        else:  # no list given: the user's own navigations are allowed, the page's stay held to them
            self.allowed = tuple(dict.fromkeys((*self.allowed, parts.hostname)))

    def _watch_page(self, page: Any) -> None:
        """Console messages, requests, file choosers and downloads of a page, from its start."""

        def navigated(frame: Any) -> None:
            if frame == page.main_frame:
                self.navigations += 1

        page.on("framenavigated", navigated)
        page.on("console", lambda m: self.console.append((self.navigations, m.type, m.text)))
        page.on("pageerror", lambda e: self.console.append((self.navigations, "error", str(e))))
        page.on("requestfinished", lambda r: self.requests.append((self.navigations, r)))
        page.on("requestfailed", lambda r: self.requests.append((self.navigations, r)))
        page.on("filechooser", lambda chooser: self.choosers.append(chooser))
        page.on("download", self._on_download)

    def _on_download(self, download: Any) -> None:
        self._download_seen.set()
        name = safe_file_name(download.suggested_filename)
        try:
            self.options.output_dir.mkdir(parents=True, exist_ok=True)
            path = free_path(self.options.output_dir, name)
        except (OSError, SessionError) as e:
            self.downloads.append(_Download(name, self.options.output_dir, "failed", one_line(e)))
            return
        record = _Download(path.name, path)
        self.downloads.append(record)
        task = asyncio.ensure_future(self._save(download, record))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save(self, download: Any, record: _Download) -> None:
        try:
            await download.save_as(record.path)
        except Exception as e:  # cancelled, refused, the browser gone: said, and nothing left half
            try:
                failure = await download.failure()
            except Exception:  # noqa: BLE001 (the first error is the one said)
                failure = None
            record.state, record.error = "failed", failure or one_line(e)
            record.path.unlink(missing_ok=True)
        else:
            with contextlib.suppress(OSError):  # a page's file: its user's to read alone
                record.path.chmod(0o600)
            record.state = "saved"

    async def _downloads_saved(self) -> None:
        """Waits (at most DOWNLOAD_WAIT_S) for the downloads under way to be saved."""
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=DOWNLOAD_WAIT_S)

    def _download_lines(self) -> list[str]:
        """What happened to downloads since the last answer said (Playwright MCP's words)."""
        lines = []
        for d in self.downloads:
            if d.said == d.state:
                continue
            if d.state == "started" or (d.said == "" and d.state != "failed"):
                lines.append(f"- Downloading file {d.name} ...")
            if d.state == "saved":
                lines.append(f'- Downloaded file {d.name} to "{d.path}"')
            elif d.state == "failed":
                lines.append(f"- Download of {d.name} failed: {escape_page_text(d.error)}")
            d.said = d.state
        return lines  # the names are safe_file_name's: nothing in them reads as an id

    async def save_state(self) -> dict[str, Any]:
        """The browser's cookies and each origin's localStorage (Playwright's storage state)."""
        env = self.page_env()
        return dict(await env.context.storage_state())

    async def load_state(self, state: dict[str, Any] | None, url: str | None = None) -> str:
        """A fresh browser context with ``state``'s cookies and storage, at ``url`` (else the
        page it was on, if any)."""
        problem = storage_state_problem(state) if state is not None else None
        if problem is not None:
            raise SessionError(f"not a storage state (Playwright's cookies and origins): {problem}", "usage")
        url = web_address(url) if url else (self.last.url if self.last is not None else None)
        self.storage_state = state
        if self.env is not None:
            self.env.config.storage_state = state
        if url is None:
            return "The state will be used by the next page opened."
        self.last = None  # a new context: the page is opened afresh
        result = await self.opening(url)()
        return self.finish(f"Loaded the state and opened {escape_page_text(url)}", result, full=True)

    def _lost(self) -> SessionError:
        self.last = None  # said once: the next call finds no page, and opening one works
        return SessionError(
            f"the browser this session ran in stopped (it crashed or was killed): its pages are gone; "
            f"{self.words.open} a URL to go on in a new one",
            "no_page",
        )

    async def lost_browser(self) -> SessionError | None:
        """After a call failed: the error that says the session's browser died, when it did
        (told once), else None."""
        env = self.env
        if env is None or self.last is None or not await env.browser_died():
            return None
        return self._lost()

    def page_env(self) -> AsyncBrowserEnv:
        if self.env is not None and self.last is not None and self.env.browser_lost:
            raise self._lost()
        if self.env is None or self.last is None:
            raise SessionError(f"no page yet: {self.words.open} a URL first", "no_page")
        return self.env

    async def close(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        for task in list(self._saving):
            task.cancel()
        if self.env is not None:
            await self.env.close()
            self.env = None
        self.last = None

    # -- acting ---------------------------------------------------------------------------

    async def run(
        self,
        what: str | Callable[[], str],
        work: Callable[[], Awaitable[StepResult]],
        *,
        full: bool = False,
        opening: bool = False,
    ) -> str:
        """Runs an action and answers it: what it did (told after the work when only that
        knows, as how long a wait took), then the page (what changed, or all of it with
        ``full``). An action a dialog interrupts is answered with the dialog; it finishes once
        browser_handle_dialog answers it."""
        env = self.env if opening else self.page_env()
        assert env is not None
        self._refuse_if_modal()
        self._download_seen.clear()
        task: asyncio.Task[StepResult] = asyncio.ensure_future(work())
        if not await _done_before_a_dialog(env, task):
            self.pending = task
            return self.compose(f"{what if isinstance(what, str) else what()}: a dialog opened", None)
        result = task.result()
        await self._heard(env)
        what = what if isinstance(what, str) else what()
        if result.observation is not None:
            await self.locate(result.observation)
        # A navigation that turned out to be a file (Playwright's words): downloaded, not failed.
        a_file = not result.ok and result.error_kind == "navigation" and "Download is starting" in (result.error or "")
        if a_file:  # its download event may trail the navigation's end
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._download_seen.wait(), DOWNLOAD_WAIT_S)
        await self._downloads_saved()
        if a_file:
            return self.compose(f"{what}: the address is a file to download", None)
        return self.finish(what, result, full=full)

    @staticmethod
    async def _heard(env: AsyncBrowserEnv) -> None:
        """Gives Playwright the time to tell what the action set off in the page (a file chooser:
        Playwright reads its input element before telling it, round trips that pagelens' reading,
        on a socket of its own, can outrun — seen on a busy machine: "the page did not change"
        for a click that opened one). One call to the page over Playwright's connection, queued
        behind the round trips Playwright has already begun: the title, which Playwright reads
        in its own isolated world (no code in the page's). This narrows the race, it does not
        close it (a chooser Playwright has not begun to read yet is told in the next answer).
        Not while a dialog holds the page, and no longer than a second (a busy page's script is
        not waited for)."""
        if env.pending_dialogs or env.page.is_closed():
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(env.page.title(), _HEARD_WAIT_S)

    def finish(self, what: str, result: StepResult, *, full: bool = False) -> str:
        if not result.ok:
            if result.observation is not None:
                self.last = result.observation
            raise SessionError(result.error or f"{what} failed", result.error_kind or "action")
        return self.compose(what, result.observation, full=full)

    def _refuse_if_modal(self, *, opened: bool = False) -> None:
        env = self.env
        if env is not None and env.pending_dialogs:
            d = env.pending_dialogs[0]
            article = "an" if d.type.startswith(("a", "e", "i", "o", "u")) else "a"  # an alert, a prompt
            state = "opened while the page was read" if opened else "is open"
            raise SessionError(
                f"{article} {d.type} dialog {state} ({escape_page_text(repr(d.message))}): answer it with "
                f"{self.words.dialog} first",
                "modal",
            )

    async def read(self, reading: Callable[[], Awaitable[T]]) -> T:
        """A reading of the page that is no action (a snapshot, the tabs, the HTML): refused while
        a dialog is open, and given up when one opens while it runs — the dialog holds the page's
        thread, and with it every call into the page, until it is answered (the reading waited
        out its timeout and said only "TimeoutError")."""
        env = self.page_env()
        self._refuse_if_modal()
        task = asyncio.ensure_future(reading())
        if not await _done_before_a_dialog(env, task):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            self._refuse_if_modal(opened=True)
            # Answered meanwhile by another call of the same client: the reading is still gone.
            raise SessionError(
                "a dialog opened while the page was read and was answered since: read the page again", "modal"
            )
        return task.result()

    # -- answers --------------------------------------------------------------------------

    def compose(self, what: str, obs: PageObservation | None, *, full: bool = False) -> str:
        """The answer: what happened, the page's address and title, tabs, open dialogs and file
        choosers, then the page (by the snapshot mode). The page's words are escaped as the
        tree's are."""
        parts = ["### Result", what]
        if obs is not None:
            before, self.last = self.last, obs
            parts += ["### Page", escape_page_text(f"- Page URL: {obs.url}\n- Page Title: {obs.title}")]
            if len(obs.tabs) > 1:
                parts += ["### Open tabs", *self._tab_lines(obs)]
            if obs.dialogs:
                parts += ["### Dialogs (dismissed)", *(f"- {escape_page_text(d)}" for d in obs.dialogs)]
            if obs.notes:  # read another way than asked, a script stopped: pagelens' words
                parts += ["### Notes", *(f"- {escape_page_text(n)}" for n in obs.notes)]
            parts += self._waiting_sections()
            mode = "full" if full else self.options.snapshot_mode
            # A page over the budget whose view moved (End, PageDown, a scroll, a click far down)
            # is answered with the window where the view is now, after what changed.
            moved = bool(self._view) and len(self._view & self._answered) * 2 < len(self._view)
            if mode == "incremental":
                changes = describe_changes(before, obs)
                if changes is not None:
                    section = [
                        f"### Snapshot changes ({changes.changed} of {changes.total} lines changed or new, "
                        f"{changes.removed} gone; {self.words.snapshot} shows the whole page)",
                        changes.text,
                    ]
                    if moved:
                        kept = section if changes.changed or changes.removed else []
                        return "\n".join([*parts, *kept, *self._snapshot(obs)])
                    if self._view and self._view != self._last_view:
                        section.append(
                            "The view moved, within the lines the last snapshot showed: "
                            f"{self.words.view} moves it on, {self.words.part} shows a part."
                        )
                        self._last_view = self._view
                        return "\n".join([*parts, *section])
                    # A small page is answered whole when that is no longer than its changes.
                    if sum(map(len, section)) < len(obs.text) + len("### Snapshot"):
                        return "\n".join([*parts, *section])
                mode = "full"
            if mode == "full":
                parts += self._snapshot(obs)
        else:
            parts += self._waiting_sections()
        return "\n".join(parts)

    def _tab_lines(self, obs: PageObservation) -> list[str]:
        return [
            f"- {t.index}:{' (current)' if t.active else ''} {escape_page_text(f'{t.title} <{t.url}>')}"
            for t in obs.tabs
        ]

    def _waiting_sections(self) -> list[str]:
        """What every answer carries above the page: the dialogs and file choosers waiting for
        the caller, and what happened to downloads since the last answer."""
        parts = []
        modal = self._modal_lines()
        if modal:
            parts += ["### Modal state", *modal]
        events = self._download_lines()
        if events:
            parts += ["### Events", *events]
        return parts

    def _modal_lines(self) -> list[str]:
        env = self.env
        lines = []
        if env is not None:
            lines += [
                f"- [{d.type} dialog with message {escape_page_text(repr(d.message))}]: can be handled by "
                f"{self.words.dialog}"
                for d in env.pending_dialogs
            ]
        lines += [f"- [File chooser]: can be handled by {self.words.upload}" for _ in self.choosers]
        return lines

    async def locate(self, obs: PageObservation) -> None:
        """Where the view is on a page over the budget: the elements in the viewport now (those
        that start in it; with none, one element filling it, the innermost reaching into it) —
        the window an answer prints is where most of them are; unchanged when that cannot be
        told (nothing in view, a frame's elements, Chromium's ids)."""
        if obs.rendered.token_count <= self.options.max_tokens or self.env is None:
            self._view = frozenset()
            return
        try:
            starting, reaching = await self.env.ids_in_view()
        except Exception:  # the page went away meanwhile: the view as it was
            return
        if starting:
            self._view = frozenset(starting)
        elif reaching:
            within = set(reaching)
            innermost = next((i for i in reversed(obs.ids) if i in within), None)
            self._view = frozenset() if innermost is None else frozenset({innermost})
        else:
            self._view = frozenset(i for i in self._view if i in obs.tree)

    def _snapshot(self, obs: PageObservation, max_tokens: int | None = None, part: int | None = None) -> list[str]:
        budget = max_tokens or self.options.max_tokens
        if obs.rendered.token_count <= budget:
            return ["### Snapshot", obs.text]
        path = self.options.output_dir / f"snapshot-{time.strftime('%Y%m%d-%H%M%S')}-{len(obs.text)}.txt"
        write_atomically(path, obs.text, private=True)  # a logged-in page's text: its user's alone
        shown = window(obs.text, budget, view=self._view, part=part)
        self._answered = shown.ids
        self._last_view = self._view
        where = (
            f"part {shown.part} of {shown.parts}"
            if part is not None
            else (f"where the view is, part {shown.part} of {shown.parts}" if self._view else "the top")
        )
        words = self.words
        head = [
            "### Snapshot",
            f"The page is {obs.rendered.token_count:,} tokens, over the {budget:,} budget: lines {shown.first + 1}-"
            f"{shown.last + 1} of {shown.total} are shown ({where}); the whole snapshot is in {path.as_uri()} . "
            f"To see more: {words.view} moves the view and the next answer shows it; {words.part} shows part N "
            f"of {shown.parts}; {words.find} finds lines. The rest's headings and elements (usable as printed) "
            "follow the lines shown.",
            shown.shown,
        ]
        return [*head, "### The rest of the page", shown.rest] if shown.rest else head

    def snapshot_answer(self, obs: PageObservation, max_tokens: int | None = None, part: int | None = None) -> str:
        self.last = obs
        parts = ["### Page", escape_page_text(f"- Page URL: {obs.url}\n- Page Title: {obs.title}")]
        if len(obs.tabs) > 1:
            parts += ["### Open tabs", *self._tab_lines(obs)]
        parts += self._waiting_sections()
        return "\n".join([*parts, *self._snapshot(obs, max_tokens, part)])
