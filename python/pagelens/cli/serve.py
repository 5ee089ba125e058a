"""``mcp``: the live browser served to MCP clients."""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from pagelens.cli.common import host_port
from pagelens.cli.types import host_entry, non_negative_float, positive_int
from pagelens.serving import CAPABILITIES, SNAPSHOT_MODES
from pagelens.settle import AFTER_ACTION_MS, SETTLE_MS_HELP


def _mcp(args: argparse.Namespace) -> int:
    from pagelens.extras import require

    require("mcp", "`pagelens mcp`")  # names the extra before anything starts
    from pagelens.browser.session import MAX_TOKENS, SessionOptions, Words
    from pagelens.errors import ArgumentError
    from pagelens.mcp_server import HttpOptions, serve

    caps = frozenset(c.strip() for c in ",".join(args.caps).split(",") if c.strip())
    unknown = sorted(caps - set(CAPABILITIES))
    if unknown:
        raise ArgumentError(f"--caps: unknown capabilities {unknown}; known: {', '.join(CAPABILITIES)}")
    for d in args.allow_file:
        if not Path(d).is_dir():
            raise ArgumentError(f"--allow-file: {d} is not a directory")
    token = args.token or os.environ.get("PAGELENS_MCP_TOKEN") or None
    http_only = (args.allow_remote, token, args.allowed_hosts, args.max_sessions is not None, args.timings)
    if args.http is None and any(http_only):
        raise ArgumentError("--allow-remote, --token, --allowed-hosts, --max-sessions and --timings are for --http")
    options = SessionOptions(
        allowed=tuple(args.allow_host),
        allow_file=tuple(Path(d).resolve() for d in args.allow_file),
        max_tokens=args.max_tokens or MAX_TOKENS,
        snapshot_mode=args.snapshot_mode,
        caps=caps,
        headed=args.headed,
        idle_timeout_s=float(args.idle_timeout),
        settle_ms=args.settle_ms,
        words=Words(),  # the MCP tools' names
    )
    if args.output_dir:
        options = dataclasses.replace(options, output_dir=Path(args.output_dir))
    http = None
    if args.http is not None:
        host, port = args.http
        allowed = tuple(h.strip() for h in ",".join(args.allowed_hosts).split(",") if h.strip())
        http = HttpOptions(
            host,
            port,
            allow_remote=args.allow_remote,
            token=token,
            allowed_hosts=allowed,
            max_sessions=args.max_sessions,
            timings=Path(args.timings) if args.timings else None,
        )
    serve(options, http)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve the live browser to MCP clients (stdio, or streamable HTTP)",
        description="An MCP server on the official SDK with Playwright MCP's tools and argument names "
        "(browser_snapshot, browser_click with ref, ...): pagelens' text with ids, answers that carry what "
        "changed, a browser context per session (in browsers shared by up to 16 sessions over HTTP). "
        "Register it in a client as "
        '{"command": "pagelens", "args": ["mcp"]}. See docs/mcp.md.',
    )
    mcp.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=host_port,
        help="serve streamable HTTP here instead of stdio (e.g. 127.0.0.1:8931, [::1]:8931); each MCP session "
        "gets its own browser context (cookies, storage, cache, permissions apart) in a shared browser",
    )
    mcp.add_argument(
        "--max-sessions",
        type=positive_int,
        default=None,
        metavar="N",
        help="MCP sessions served at once over --http; one more is refused with HTTP 503 and a line saying why "
        "(default: the memory available at start over ~120 MB a session, at most 256)",
    )
    mcp.add_argument(
        "--timings",
        metavar="FILE",
        help="with --http: append a JSON line per call to FILE: its session's number, the tool, and the seconds "
        "it waited for the session's previous call (queued_s), for a browser from the pool (pool_s), and worked",
    )
    mcp.add_argument(
        "--allow-host",
        action="append",
        type=host_entry,
        default=[],
        help="a host pages may go to (repeatable); without any, browser_navigate allows the hosts it is asked "
        "to open and the page is held to those",
    )
    mcp.add_argument(
        "--allow-file",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory whose files file: URLs may open and uploads may come from (repeatable); without it "
        "file: URLs are refused",
    )
    mcp.add_argument(
        "--snapshot-mode",
        choices=SNAPSHOT_MODES,
        default="incremental",
        help="what an action's answer shows of the page: incremental (default: the lines that changed, the "
        "whole text when most of it changed or the document did), full, or none; browser_snapshot is always full",
    )
    mcp.add_argument(
        "--caps",
        action="append",
        default=[],
        metavar="CAPS",
        help="extra tools, comma-separated: " + "; ".join(f"{k} ({v})" for k, v in CAPABILITIES.items()),
    )
    mcp.add_argument("--headed", action="store_true", help="show the browser window")
    mcp.add_argument(
        "--settle-ms",
        type=non_negative_float,
        default=AFTER_ACTION_MS,
        metavar="MS",
        help=SETTLE_MS_HELP,
    )
    mcp.add_argument(
        "--idle-timeout",
        type=positive_int,
        default=1800,
        metavar="SECONDS",
        help="a session's browser is closed after this long without a call (default 1800)",
    )
    mcp.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow --http on an address other than loopback (needs a token)",
    )
    mcp.add_argument(
        "--token",
        help="a bearer token every HTTP request must carry (Authorization: Bearer ...); better given as "
        "PAGELENS_MCP_TOKEN, which other users cannot read in the process list",
    )
    mcp.add_argument(
        "--allowed-hosts",
        action="append",
        default=[],
        metavar="HOSTS",
        help="comma-separated Host names clients reach the HTTP server by, besides loopback and the bound "
        "address ('*': no Host/Origin check)",
    )
    mcp.add_argument(
        "--output-dir",
        help="where snapshots over the budget, named files and downloads go (default: a temporary folder)",
    )
    mcp.add_argument(
        "--max-tokens",
        type=positive_int,
        help="snapshots up to this many tokens are answered inline, longer ones written to a file "
        "(default: pagelens.browser.session.MAX_TOKENS, 6,000)",
    )
    mcp.set_defaults(func=_mcp)
