"""The tools of an agent's browser session, in one table: each tool's name (the coroutine of that
name in ``operations.py`` carries it out; the MCP server offers it as a tool of that name), what
it may do (read only, read the caller's files, offered only on a capability), and the shell
command that calls it (``pagelens browser``'s parser, its help and its guide are built from this
table). It imports nothing heavy: a shell command reads it before it does anything else.

Adding a tool and its command: an entry here and its coroutine in ``operations.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pagelens.settle import AFTER_ACTION_MS, SETTLE_MS_HELP


@dataclass(frozen=True)
class Arg:
    """One argument of a shell command, as argparse takes it (``names``: a positional's name or
    a flag's spellings; ``options``: ``nargs``, ``choices``, ``metavar``, ``type`` — the name of
    a converter in ``pagelens.cli.types`` — or ``default``), and what it gives the tool."""

    names: tuple[str, ...]
    help: str | None = None
    param: str | None = None
    """The tool's parameter it fills (None: the command itself reads it)."""
    value: Any = None
    """For a flag: the value it passes when given (a flag without one is the command's own)."""
    values: dict[str, Any] | None = None
    """For a choice: the value each choice passes."""
    tool: str | None = None
    """Given, the command calls this tool instead of its own (``snapshot --find`` finds)."""
    path: bool = False
    """A file path (or paths): passed absolute, as the daemon has another working directory."""
    switch: bool = False
    """A flag that takes no value (one that passes a ``value`` is one too)."""
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def flag(self) -> bool:
        return self.names[0].startswith("-")

    @property
    def is_switch(self) -> bool:
        return self.flag and (self.switch or self.value is not None)

    @property
    def dest(self) -> str:
        return self.names[0].lstrip("-").replace("-", "_") if self.flag else self.names[0]


@dataclass(frozen=True)
class Command:
    """A ``pagelens browser`` command: its name, the line its help and the guide show, its
    arguments; ``starts``: it starts the session's browser when none runs."""

    name: str
    help: str
    args: tuple[Arg, ...] = ()
    starts: bool = False

    def usage(self) -> str:
        """How it is written: ``click ID [--double] [--right]``."""
        words = [self.name]
        for a in self.args:
            if a.flag:
                metavar = "" if a.is_switch else " " + a.options.get("metavar", a.dest.upper())
                words.append(f"[{a.names[0]}{metavar}]")
            else:
                word = (
                    "|".join(a.options["choices"])
                    if "choices" in a.options
                    else a.options.get("metavar", a.dest.upper())
                )
                nargs = str(a.options.get("nargs", ""))
                words.append({"?": f"[{word}]", "*": f"[{word}...]", "+": f"{word}..."}.get(nargs, word))
        return " ".join(words)


@dataclass(frozen=True)
class Tool:
    """A tool of the session: its name (its operation's and its MCP tool's), whether it only
    reads, whether it reads files the caller names (a front that knows the client's folders
    tells the session first), the capability it is offered on (``--caps``), its shell command."""

    name: str
    command: Command | None = None
    readonly: bool = False
    reads_files: bool = False
    capability: str | None = None


_ID = Arg(("id",), param="ref")

TOOLS: tuple[Tool, ...] = (
    Tool(
        "browser_navigate",
        Command(
            "open",
            "open a URL (starting the session's browser)",
            (
                Arg(("url",), param="url"),
                Arg(
                    ("--allow-host",),
                    "a host pages may go to (repeatable)",
                    options={"action": "append", "type": "host_entry", "default": [], "metavar": "HOST"},
                ),
                Arg(
                    ("--allow-file",),
                    "a directory file: URLs may open (repeatable)",
                    options={"action": "append", "default": [], "metavar": "DIR"},
                ),
                Arg(("--headed",), "show the browser window", switch=True),
                Arg(
                    ("--idle-timeout",),
                    "end the session after this long without a command (default 1800)",
                    options={"type": "positive_float", "default": 1800, "metavar": "SECONDS"},
                ),
                Arg(
                    ("--output-dir",),
                    "where snapshots over the budget and downloaded files are written",
                    options={"metavar": "DIR"},
                ),
                Arg(
                    ("--settle-ms",),
                    SETTLE_MS_HELP,
                    options={"type": "non_negative_float", "default": AFTER_ACTION_MS, "metavar": "MS"},
                ),
            ),
            starts=True,
        ),
    ),
    Tool("browser_navigate_back", Command("back", "go back in the tab's history")),
    Tool("browser_navigate_forward", Command("forward", "go forward in the tab's history")),
    Tool(
        "browser_snapshot",
        Command(
            "snapshot",
            "print the page (ids in brackets)",
            (
                Arg(("--interactive", "-i"), "only the lines with ids", switch=True),
                Arg(
                    ("--find",),
                    "the lines that contain TEXT, with their ancestors",
                    param="pattern",
                    tool="browser_find",
                    options={"metavar": "TEXT"},
                ),
                Arg(("--subtree",), "only this element's part of the page", param="ref", options={"metavar": "ID"}),
                Arg(
                    ("--max-tokens",),
                    "cut to N tokens",
                    param="max_tokens",
                    tool="browser_observe",
                    options={"type": "positive_int", "metavar": "N"},
                ),
                Arg(
                    ("--full",),
                    "the whole page, however long",
                    param="max_tokens",
                    value=10**9,
                    tool="browser_observe",
                ),
                Arg(
                    ("--part",),
                    "a long page's Nth part (its answer says how many)",
                    param="part",
                    options={"type": "positive_int", "metavar": "N"},
                ),
            ),
        ),
        readonly=True,
    ),
    Tool("browser_observe", readonly=True),
    Tool("browser_find", readonly=True),
    Tool("browser_html", readonly=True),
    Tool(
        "browser_click",
        Command(
            "click",
            "click an element",
            (
                _ID,
                Arg(("--double",), "a double click", param="doubleClick", value=True),
                Arg(("--right",), "with the right button", param="button", value="right"),
            ),
        ),
    ),
    Tool(
        "browser_type",
        Command(
            "type",
            "replace a field's text",
            (
                _ID,
                Arg(("text",), param="text"),
                Arg(("--submit",), "press Enter after", param="submit", value=True),
                Arg(("--slowly",), "one key at a time", param="slowly", value=True),
            ),
        ),
    ),
    Tool("browser_fill_form"),
    Tool(
        "browser_select_option",
        Command(
            "select",
            "choose options of a drop-down (by label or value)",
            (_ID, Arg(("option",), param="values", options={"nargs": "+"})),
        ),
    ),
    Tool("browser_hover", Command("hover", "move the mouse over an element", (_ID,))),
    Tool("browser_drag"),
    Tool(
        "browser_press_key",
        Command(
            "press", "press keys on the focused element (Enter, ArrowDown, Control+a)", (Arg(("keys",), param="key"),)
        ),
    ),
    Tool(
        "browser_scroll",
        Command(
            "scroll",
            "scroll the page (or a scrollable element) a screen",
            (
                Arg(("direction",), param="direction", options={"choices": ("up", "down")}),
                Arg(("id",), param="ref", options={"nargs": "?"}),
            ),
        ),
    ),
    Tool(
        "browser_wait_for",
        Command(
            "wait",
            "wait for text to appear (or --gone, or --seconds)",
            (
                Arg(("text",), param="text", options={"nargs": "?"}),
                Arg(("--gone",), "wait for this text to go", param="textGone", options={"metavar": "TEXT"}),
                Arg(
                    ("--seconds",),
                    "wait this long (at most 30)",
                    param="time",
                    options={"type": "non_negative_float", "metavar": "S"},
                ),
                Arg(
                    ("--timeout",),
                    "wait for the text at most this long (30)",
                    param="timeout",
                    options={"type": "positive_float", "metavar": "S"},
                ),
            ),
        ),
    ),
    Tool(
        "browser_tabs",
        Command(
            "tabs",
            "list the tabs (list), open one (new [URL]), switch to one (select N), close one (close [N])",
            (
                Arg(("action",), options={"nargs": "?", "choices": ("list", "new", "select", "close")}),
                Arg(("rest",), options={"nargs": "*", "metavar": "URL|N"}),
            ),
        ),
    ),
    Tool(
        "browser_handle_dialog",
        Command(
            "dialog",
            "answer the dialog the page opened",
            (
                Arg(
                    ("answer",),
                    param="accept",
                    values={"accept": True, "dismiss": False},
                    options={"choices": ("accept", "dismiss")},
                ),
                Arg(("text",), "a prompt's answer", param="promptText", options={"nargs": "?"}),
            ),
        ),
    ),
    Tool(
        "browser_file_upload",
        Command(
            "upload",
            "give files to the file chooser a click opened",
            (Arg(("files",), param="paths", path=True, options={"nargs": "*"}),),
        ),
        reads_files=True,
    ),
    Tool(
        "browser_take_screenshot",
        Command(
            "screenshot",
            "save a picture of the page",
            (
                Arg(("file",)),
                Arg(
                    ("--ids",),
                    "outline the elements with ids and write the ids on them",
                    param="with_ids",
                    value=True,
                ),
                Arg(("--full-page",), "the whole page, not the viewport", param="fullPage", value=True),
            ),
        ),
        readonly=True,
    ),
    Tool("browser_console_messages", readonly=True),
    Tool("browser_network_requests", readonly=True),
    Tool("browser_resize"),
    Tool("browser_close"),
    Tool("browser_evaluate", capability="evaluate"),
)
"""Every tool, in the order the MCP server lists them."""

SESSION_COMMANDS: tuple[Command, ...] = (
    Command(
        "state",
        "save the cookies and storage to FILE, or load them from it (and open URL)",
        (
            Arg(("action",), options={"choices": ("save", "load")}),
            Arg(("file",)),
            Arg(("url",), "(load) the page to open with the state", options={"nargs": "?"}),
        ),
    ),
    Command("close", "close the session's browser", (Arg(("--all",), "every session", switch=True),)),
    Command("sessions", "list the open sessions"),
    Command("guide", "print a guide for an agent's system prompt"),
)
"""The shell's commands that no tool carries out: the session's own (its daemon, its files)."""

TOOL_NAMES: dict[str, Tool] = {t.name: t for t in TOOLS}


def commands() -> tuple[Command, ...]:
    """Every ``pagelens browser`` command, in the order its help lists them."""
    return (*(t.command for t in TOOLS if t.command is not None), *SESSION_COMMANDS)
