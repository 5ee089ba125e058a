"""``mcp``: the live browser served to MCP clients."""

from __future__ import annotations

import argparse

from pagelens.cli.common import host_port, positive_int


def _mcp(args: argparse.Namespace) -> int:
    from pagelens.extras import require

    require("mcp", "`pagelens mcp`")  # names the extra before anything starts
    from pagelens.mcp_server import serve

    serve(args.http, tuple(args.allow_host), args.output_dir, args.max_tokens)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve the live browser to MCP clients (stdio, or streamable HTTP)",
        description="An MCP server on the official SDK: navigate, observe (pagelens' text with ids), find, "
        "click, type, select, hover, press, scroll, tabs, wait, screenshot, cleaned HTML. One browser, "
        "tabs shared by every call. Register it in a client as "
        '{"command": "pagelens", "args": ["mcp"]}.',
    )
    mcp.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=host_port,
        help="serve streamable HTTP here instead of stdio (e.g. 127.0.0.1:8931, [::1]:8931)",
    )
    mcp.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="a host pages may go to (repeatable); browser_navigate allows the hosts it is asked to open",
    )
    mcp.add_argument(
        "--output-dir", help="where observations over the budget are written (default: a temporary folder)"
    )
    mcp.add_argument(
        "--max-tokens",
        type=positive_int,
        help="observations up to this many tokens are answered inline, longer ones written to a file "
        "(default: pagelens.mcp_server.MAX_TOKENS, 6,000)",
    )
    mcp.set_defaults(func=_mcp)
