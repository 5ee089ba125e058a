"""``pagelens mcp``: the live browser as an MCP server (the ``mcp`` extra's adapter), on the
official SDK, over stdio or streamable HTTP.

The tools are Playwright MCP's, by its names and argument names (a prompt or client written
for it works unchanged): ``browser_snapshot`` answers pagelens' text, ``ref`` is an id as the
text prints it (``"12"`` for ``[12]``; Playwright MCP's newer ``target`` is read the same way),
``element`` a description used in errors. pagelens' own tools keep their own names
(``browser_observe`` with a budget or a subtree, ``browser_find``, ``browser_html``,
``browser_scroll``); ``browser_evaluate`` exists only with ``--caps evaluate``.

An action is answered with what it did and, by default, only what changed on the page
(``--snapshot-mode incremental``; ``full`` answers the whole text, ``none`` no page text), one
text item per answer. Each MCP session has its own browser context (pages, cookies and storage
apart), closed when the session ends or idles out. Errors an agent can act on come back as
tool errors saying why; nothing but one line per failure reaches stderr.

Register it in a client (e.g. a ``mcpServers`` entry)::

    {"mcpServers": {"pagelens": {"command": "pagelens", "args": ["mcp", "--allow-host", "example.com"]}}}

See docs/mcp.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hmac
import inspect
import ipaddress
import json
import logging
import re
import sys
import time
import typing
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TextIO, get_type_hints
from urllib.parse import unquote, urlsplit

from pagelens import __version__
from pagelens.browser.launch import LaunchOptions
from pagelens.browser.operations import OPERATIONS, Picture
from pagelens.browser.pool import BrowserPool
from pagelens.browser.session import (
    BrowserSession,
    SessionOptions,
)
from pagelens.browser.tools import TOOLS, Tool
from pagelens.errors import PagelensError, one_line
from pagelens.extras import require

mcp_server: Any = require("mcp.server.mcpserver", "`pagelens mcp`")
mcp_exceptions: Any = require("mcp.server.mcpserver.exceptions", "`pagelens mcp`")
mcp_security: Any = require("mcp.server.transport_security", "`pagelens mcp`")
mcp_types: Any = require("mcp_types", "`pagelens mcp`")
ToolError = mcp_exceptions.ToolError
Context = mcp_server.Context

# What a session costs the server: measured 51-63 MB (benches/report_sessions.py: PSS over the
# idle server per session, 8 to 64 sessions each on a 200-paragraph page, contexts in shared
# browsers), with room for heavier pages (a news page's renderer holds several times that page's):
# --max-sessions' default is the memory available at start over this.
SESSION_COST_MB = 120
# However much memory there is: the driver and the server's loop serve every session.
MOST_SESSIONS = 256


def default_max_sessions() -> int:
    """Sessions served at once by default: the memory available now (``MemAvailable``) over
    :data:`SESSION_COST_MB`, between 1 and :data:`MOST_SESSIONS`; 8 where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available_mb = int(line.split()[1]) // 1024
                    return max(1, min(MOST_SESSIONS, available_mb // SESSION_COST_MB))
    except (OSError, ValueError, IndexError):
        pass
    return 8


_LOOPBACK = ("127.0.0.1", "localhost", "::1")

# The arguments that name an element by its id. The schema keeps Playwright MCP's `string`, but a
# ref comes as models write it: a number (12), or "[12]", which the SDK reads as JSON (a list)
# before it checks the type. Each is made the text parse_ref reads, and anything else its text
# too, for parse_ref to say in one line what a ref is (never a validation dump).
REF_ARGUMENTS = frozenset({"ref", "target", "startRef", "endRef", "startTarget", "endTarget"})


def _as_ref_text(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], (int, str)):
        return f"[{value[0]}]"
    return str(value)


def _ref_hint(hint: Any) -> Any:
    """The type of a ref argument: the same, with refs as models write them read."""
    pydantic: Any = require("pydantic", "`pagelens mcp`")
    return Annotated[hint, pydantic.BeforeValidator(_as_ref_text)]


def _schema_hint(hint: Any, name: str = "") -> Any:
    """An operation's argument type as the tool's schema shows it: words an ``Annotated`` text
    gives become its description, the keys of a ``TypedDict`` (a form's fields) likewise, and
    refs anywhere are read as models write them."""
    pydantic: Any = require("pydantic", "`pagelens mcp`")
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        inner, words = args[0], [a for a in args[1:] if isinstance(a, str)]
        others = [a for a in args[1:] if not isinstance(a, str)]
        kept = (_schema_hint(inner, name), *others, *([pydantic.Field(description=words[0])] if words else []))
        return Annotated[kept] if len(kept) > 1 else kept[0]
    if origin is list and args:
        return list[_schema_hint(args[0])]  # type: ignore[misc]
    if typing.is_typeddict(hint):
        keys = typing.get_type_hints(hint, include_extras=True)
        # (pydantic reads typing_extensions' TypedDict on Python < 3.12, not typing's)
        typed_dict: Any = require("typing_extensions", "`pagelens mcp`").TypedDict
        return typed_dict(hint.__name__, {k: _schema_hint(v, k) for k, v in keys.items()})
    return _ref_hint(hint) if name in REF_ARGUMENTS else hint


log = logging.getLogger("pagelens.mcp")


async def _client_roots(ctx: Any) -> tuple[Path, ...] | None:
    """The folders the client names as its roots (``file:`` URIs), asked when it declares the
    capability; None when it does not, or does not answer within 10 s."""
    try:
        session = ctx.session
        if not session.check_client_capability(mcp_types.ClientCapabilities(roots=mcp_types.RootsCapability())):
            return None
        with warnings.catch_warnings():
            # Roots are deprecated from the 2026-07-28 protocol on; clients still send them.
            warnings.simplefilter("ignore")
            listed = await asyncio.wait_for(session.list_roots(), 10)
    except Exception:  # the client's answer, or none: the working directory then
        return None
    found = []
    for root in listed.roots:
        parts = urlsplit(str(root.uri))
        if parts.scheme == "file" and parts.path:
            found.append(Path(unquote(parts.path)))
    return tuple(found) or None


def _sse_key(ctx: Any) -> str:
    """The session of a call on a legacy SSE connection: the connection's id, which its POSTs
    carry in their address (``/messages/?session_id=...``); "" for any other call."""
    request = getattr(ctx.request_context, "request", None)
    query = getattr(request, "query_params", None)
    found = query.get("session_id") if query is not None else None
    return f"sse:{found}" if found else ""


class Sessions:
    """The server's browser sessions, one per MCP session (per client connection over HTTP;
    the one client over stdio), closed when it ends or idles out."""

    def __init__(
        self, options: SessionOptions, max_sessions: int | None = None, pool: BrowserPool | None = None
    ) -> None:
        self.options = options
        self.max_sessions = max_sessions if max_sessions is not None else default_max_sessions()
        # The browsers the sessions' contexts live in (HTTP: shared, many contexts each); None:
        # each session a browser of its own (stdio's one client).
        self.pool = pool
        self._by_key: dict[str, BrowserSession] = {}
        self._reaper: asyncio.Task[None] | None = None
        self.opening = 0  # sessions being initialised (admitted, their id not known yet)
        self._opened = 0  # sessions served so far (each client's folder is named by its number)
        self._numbers: dict[int, int] = {}  # id(session) -> its number, for the timings
        # --timings: a JSON line per call (its session, the tool, and the seconds it waited for the
        # session's previous call, for a browser from the pool, and worked), written as it ends.
        self.timings: TextIO | None = None

    def timed(self, session: BrowserSession, tool: str, queued: float, pool: float, total: float) -> None:
        if self.timings is None:
            return
        number = self._numbers.get(id(session), 0)
        line = {"session": number, "tool": tool, "queued_s": round(queued, 4), "pool_s": round(pool, 4)}
        line["worked_s"] = round(total - pool, 4)
        self.timings.write(json.dumps(line) + "\n")
        self.timings.flush()

    def refusal(self) -> str | None:
        """Why a new session cannot be served now; None when it can."""
        if len(self._by_key) + self.opening >= self.max_sessions:
            return (
                f"the server already serves {self.max_sessions} sessions (--max-sessions): close one or wait for "
                "one to idle out, then try again"
            )
        return None

    def holds(self, key: str) -> bool:
        return key in self._by_key

    def admit(self, key: str) -> BrowserSession:
        """The session ``key`` (new, or the one it has), counted from now on."""
        found = self._by_key.get(key)
        if found is None:
            options = self.options
            if key:  # one client of many: its downloads and files in a folder of its own
                self._opened += 1
                folder = options.output_dir / f"session-{self._opened}"
                options = dataclasses.replace(options, output_dir=folder)
            found = BrowserSession(options, self.pool)
            self._by_key[key] = found
            self._numbers[id(found)] = self._opened
            if self._reaper is None or self._reaper.done():
                self._reaper = asyncio.ensure_future(self._reap())
        return found

    def of(self, ctx: Any) -> BrowserSession:
        # An HTTP client's session id (the SDK's header), a legacy SSE connection's own key;
        # over stdio the one client.
        headers = ctx.headers or {}
        key = headers.get("mcp-session-id") or _sse_key(ctx)
        found = self._by_key.get(key)
        if found is None:
            refused = self.refusal()
            if refused is not None:
                raise ToolError(refused)
            found = self.admit(key)
        found.last_used = time.monotonic()
        return found

    async def end(self, key: str) -> None:
        """The client ended its session: its browser goes with it."""
        session = self._by_key.pop(key, None)
        if session is not None:
            self._numbers.pop(id(session), None)
            async with session.lock:
                await session.close()

    async def _reap(self) -> None:
        while self._by_key:
            await asyncio.sleep(min(60.0, self.options.idle_timeout_s / 4))
            now = time.monotonic()
            for key, session in list(self._by_key.items()):
                if now - session.last_used > self.options.idle_timeout_s and not session.lock.locked():
                    self._by_key.pop(key, None)
                    await session.close()

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        sessions, self._by_key = list(self._by_key.values()), {}
        for session in sessions:
            await session.close()
        if self.pool is not None:
            await self.pool.close()
        if self.timings is not None:
            self.timings.close()
            self.timings = None

    @property
    def count(self) -> int:
        return len(self._by_key)


def _argument_problem(error: Any) -> str:
    """One line for one of pydantic's findings on a tool's arguments: where, and what was wrong,
    with the value given (cut short) — never the dump, its links or its newlines."""
    where = ".".join(str(part) for part in error.get("loc", ())) or "the arguments"
    if error.get("type") == "missing":
        return f"{where} is missing"
    given = repr(error.get("input"))
    given = given if len(given) <= 40 else given[:39] + "…"
    said = str(error.get("msg", "is not valid")).replace("Input should be", "should be").splitlines()[0]
    return f"{where} {said[0].lower() + said[1:] if said else 'is not valid'} (given {given})"


def _takes(schema: dict[str, Any]) -> str:
    """What a tool takes, from its input schema: each argument, the required marked."""
    required = set(schema.get("required", ()))
    names = [f"{n}{'' if n in required else '?'}" for n in schema.get("properties", {})]
    legend = " (? optional)" if len(required) < len(names) else ""
    return ", ".join(names) + legend if names else "no arguments"


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its ``$defs`` written where they are used, as Playwright MCP's schemas
    are: a client that does not follow ``$ref`` (several do not) sees a form field's keys."""
    defs = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in defs:
                return inline(defs[ref[8:]])  # the operations' types nest, never recurse
            return {k: inline(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema) if defs else schema


class _OneLineErrors(mcp_server.MCPServer):  # type: ignore[misc]  # the SDK's class, known at run time
    """The SDK's server whose answer to arguments that do not fit a tool (missing, of the wrong
    type, unknown) is one line naming each and what the tool takes: a model reads that and
    calls again, where the SDK's validation dump (several lines, links) reads as noise."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            unknown = sorted(set(arguments) - set(tool.parameters.get("properties", {})))
            if unknown:
                raise ToolError(f"{name} takes no {', '.join(unknown)}: it takes {_takes(tool.parameters)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if cause is None or type(cause).__name__ != "ValidationError" or not hasattr(cause, "errors"):
                raise
            problems = "; ".join(_argument_problem(err) for err in cause.errors()[:4])
            takes = _takes(tool.parameters) if tool is not None else ""
            raise ToolError(f"{name}: {problems}. It takes {takes}") from None


def build_server(options: SessionOptions, sessions: Sessions | None = None) -> Any:
    """The MCP server; each MCP session gets its own browser context from ``sessions``."""
    if sessions is None:
        sessions = Sessions(options)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        if sessions.pool is not None:
            sessions.pool.warm()  # the first session waits for no browser to start
        try:
            yield None
        finally:
            await sessions.close()

    server = _OneLineErrors(
        "pagelens",
        version=__version__,
        instructions=(
            "A live browser. browser_navigate opens a page; browser_snapshot shows it as text with element "
            'ids in brackets ([12]); act on an element by passing its id as ref ("12"). After an action the '
            "answer shows what changed on the page (new elements marked *[id]); browser_snapshot shows all of "
            "it, browser_find searches it."
        ),
        lifespan=lifespan,
        log_level="WARNING",
    )

    def tool(entry: Tool) -> Callable[[Any], Any]:
        """A tool run in the caller's session, one call at a time per session, whose errors are
        tool errors saying why (never a crash, one line on stderr for what is not the agent's)."""

        def register(fn: Any) -> Any:
            @functools.wraps(fn)
            async def run(*args: Any, **kwargs: Any) -> Any:
                ctx = kwargs.pop("ctx")
                session = sessions.of(ctx)
                asked = time.perf_counter()
                async with session.lock:
                    began = time.perf_counter()
                    pool_before = session.env.pool_wait_s if session.env is not None else 0.0
                    try:
                        if entry.reads_files:
                            session.file_roots = await _client_roots(ctx)
                        answer = await fn(session, *args, **kwargs)
                        if isinstance(answer, Picture):
                            return mcp_server.Image(data=answer.data, format=answer.format)
                        return answer
                    except ToolError:
                        raise
                    except Exception as e:
                        lost = await session.lost_browser()  # its browser died: said so, once
                        if lost is not None:
                            raise ToolError(str(lost)) from None
                        if isinstance(e, (PagelensError, ValueError)):
                            raise ToolError(str(e)) from None
                        # a bug, or what the browser's death looked like: said in one line
                        print(f"pagelens mcp: {fn.__name__}: {one_line(e)}", file=sys.stderr, flush=True)
                        raise ToolError(f"{fn.__name__} failed: {one_line(e)}") from None
                    finally:
                        session.last_used = time.monotonic()
                        pool = (session.env.pool_wait_s if session.env is not None else 0.0) - pool_before
                        sessions.timed(session, fn.__name__, began - asked, pool, time.perf_counter() - began)

            # The session argument is the server's, not the client's: the schema shows the rest,
            # and the SDK passes the request's context, which names the session.
            hints = {name: _schema_hint(hint, name) for name, hint in get_type_hints(fn, include_extras=True).items()}
            params = [p.replace(annotation=hints[p.name]) for p in list(inspect.signature(fn).parameters.values())[1:]]
            ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
            run.__signature__ = inspect.Signature([*params, ctx_param], return_annotation=Any)  # type: ignore[attr-defined]
            run.__annotations__ = {**{p.name: p.annotation for p in params}, "ctx": Context, "return": Any}
            del run.__wrapped__
            annotations = mcp_types.ToolAnnotations(readOnlyHint=True) if entry.readonly else None
            server.tool(structured_output=False, annotations=annotations)(run)
            registered = server._tool_manager.get_tool(fn.__name__)
            registered.parameters = _inlined(registered.parameters)
            return fn

        return register

    for entry, operation in zip(TOOLS, OPERATIONS, strict=True):
        if entry.capability is None or entry.capability in options.caps:
            tool(entry)(operation)

    return server


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK:
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    return False


class SessionEnds:
    """ASGI middleware: a client's DELETE of its session (the SDK's way to end one) closes the
    session's browser once the SDK has answered it."""

    def __init__(self, app: Any, sessions: Sessions) -> None:
        self.app, self.sessions = app, sessions

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            key = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1")
            if key:
                await self.sessions.end(key)


async def _say(send: Any, status: int, line: str, *headers: tuple[bytes, bytes]) -> None:
    """An HTTP answer saying ``line``: a JSON-RPC error (the MCP clients show its message as
    the call's error; its ``id`` is null, the request not read)."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": line}}).encode()
    start = {"type": "http.response.start", "status": status}
    await send({**start, "headers": [(b"content-type", b"application/json"), *headers]})
    await send({"type": "http.response.body", "body": body})


class SessionLimit:
    """ASGI middleware at ``/mcp``: a request that would start a session (no ``Mcp-Session-Id``)
    when the server serves ``--max-sessions`` already is answered 503 with one line saying why
    (and ``Retry-After``); a session the server starts is counted from its first answer, which
    names it; a request naming a session this server does not hold (ended, idled out, or held by
    a server that stopped, behind a proxy) is answered 404 with one line saying so."""

    def __init__(self, app: Any, sessions: Sessions) -> None:
        self.app, self.sessions = app, sessions

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/mcp"):
            await self.app(scope, receive, send)
            return
        named_key = dict(scope.get("headers") or []).get(b"mcp-session-id")
        if named_key is not None:
            key = named_key.decode("latin-1")
            if not self.sessions.holds(key) and scope.get("method") != "DELETE":
                await _say(send, 404, f"this server holds no session {key[:64]}: start a new one")
                return
            await self.app(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        refused = self.sessions.refusal()
        if refused is not None:
            log.info("refused a new session: %s", refused)
            await _say(send, 503, refused, (b"retry-after", b"30"))
            return
        self.sessions.opening += 1
        counted = False

        async def named(message: Any) -> None:
            nonlocal counted
            if message.get("type") == "http.response.start" and not counted:
                counted = True
                self.sessions.opening -= 1
                key = dict(message.get("headers") or []).get(b"mcp-session-id")
                if key:
                    self.sessions.admit(key.decode("latin-1"))
            await send(message)

        try:
            await self.app(scope, receive, named)
        finally:
            if not counted:
                self.sessions.opening -= 1


class BearerToken:
    """ASGI middleware: every request carries ``Authorization: Bearer <token>`` (compared in
    constant time), else 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, value = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token):
                await send(
                    {"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]}
                )
                await send(
                    {"type": "http.response.body", "body": b"a bearer token is required (Authorization: Bearer ...)"}
                )
                return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class HttpOptions:
    host: str
    port: int
    allow_remote: bool = False
    token: str | None = None
    allowed_hosts: tuple[str, ...] = ()  # Host names clients reach the server by ("*": any)
    max_sessions: int | None = None  # sessions served at once (None: default_max_sessions())
    timings: Path | None = None  # where each call's timings go (a JSON line each)


def http_app(server: Any, sessions: Sessions, http: HttpOptions, idle_timeout_s: float) -> Any:
    """The streamable-HTTP ASGI app: Host/Origin checked (DNS rebinding), a bearer token when
    one is set; a non-loopback address only with ``allow_remote`` and a token."""
    if not _is_loopback(http.host):
        if not http.allow_remote:
            raise PagelensError(
                f"{http.host} is not a loopback address: serving a browser to the network needs --allow-remote "
                "and a token (--token or PAGELENS_MCP_TOKEN)"
            )
        if not http.token:
            raise PagelensError("--allow-remote needs a token (--token or PAGELENS_MCP_TOKEN) clients must send")
    names = ["127.0.0.1", "localhost", "[::1]"]
    if http.host not in ("0.0.0.0", "::"):
        names.append(f"[{http.host}]" if ":" in http.host else http.host)
    names += list(http.allowed_hosts)
    if "*" in names:
        security = mcp_security.TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:
        security = mcp_security.TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{n}:*" for n in names] + names,
            allowed_origins=[f"{scheme}://{n}:*" for n in names for scheme in ("http", "https")]
            + [f"{scheme}://{n}" for n in names for scheme in ("http", "https")],
        )
    app = server.streamable_http_app(transport_security=security, host=http.host, session_idle_timeout=idle_timeout_s)
    app.router.routes.extend(_sse_routes(server, sessions, security))
    app = SessionLimit(SessionEnds(app, sessions), sessions)
    return BearerToken(app, http.token) if http.token else app


def _sse_routes(server: Any, sessions: Sessions, security: Any) -> list[Any]:
    """Playwright MCP's legacy endpoint, ``GET /sse`` (and the ``POST /messages/`` its stream
    names), for clients configured with its older URL: each connection a session of its own,
    whose browser closes when the connection does."""
    routing: Any = require("starlette.routing", "`pagelens mcp`")
    responses: Any = require("starlette.responses", "`pagelens mcp`")
    sse_transport: Any = require("mcp.server.sse", "`pagelens mcp`")
    runner: Any = require("mcp.server.runner", "`pagelens mcp`")
    transport = sse_transport.SseServerTransport("/messages/", security_settings=security)
    lowlevel = server._lowlevel_server

    async def connect(request: Any) -> Any:
        # The connection's id is the one its stream names first (the endpoint event), read on
        # the way out: the transport keeps it to itself.
        named: list[str] = []

        async def send(message: Any) -> None:
            if not named and message.get("type") == "http.response.body":
                found = re.search(rb"session_id=([0-9a-f]+)", message.get("body", b""))
                if found:
                    named.append(found.group(1).decode())
            await request._send(message)

        try:
            async with transport.connect_sse(request.scope, request.receive, send) as (reading, writing):
                # The server's loop without its lifespan: that is the app's, and ending it here
                # would close every session's browser when one connection ends.
                await runner.serve_dual_era_loop(
                    lowlevel,
                    reading,
                    writing,
                    lifespan_state=None,
                    init_options=lowlevel.create_initialization_options(),
                )
        finally:
            if named:
                await sessions.end(f"sse:{named[0]}")
        return responses.Response()

    return [
        routing.Route("/sse", endpoint=connect, methods=["GET"]),
        routing.Mount("/messages/", app=transport.handle_post_message),
    ]


def serve(options: SessionOptions, http: HttpOptions | None = None) -> None:
    """Runs the server over stdio, or over streamable HTTP."""
    options.output_dir.mkdir(parents=True, exist_ok=True)
    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # one line per failure, ours
    if http is None:
        sessions = Sessions(options, max_sessions=1)
    else:  # every session a context in shared browsers (see pagelens.browser.pool)
        pool = BrowserPool(LaunchOptions(headless=not options.headed))
        sessions = Sessions(options, max_sessions=http.max_sessions, pool=pool)
        if http.timings is not None:
            sessions.timings = http.timings.open("a", encoding="utf-8")
    server = build_server(options, sessions)
    if http is None:
        server.run("stdio")
        return
    import uvicorn

    app = http_app(server, sessions, http, options.idle_timeout_s)
    config = uvicorn.Config(app, host=http.host.strip("[]"), port=http.port, log_level="warning", access_log=False)
    asyncio.run(uvicorn.Server(config).serve())
