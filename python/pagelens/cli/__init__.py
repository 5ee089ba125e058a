"""The ``pagelens`` command line: a module per command group, each registering its commands;
choices and defaults come from the registries and settings where each concept lives."""

from __future__ import annotations

import argparse
import sys

from pagelens.errors import PagelensError

# In the order `pagelens --help` lists them (imported when the parser is built: `pagelens
# browser` commands, run by a shell agent at every step, import none of them).
GROUP_MODULES = ("pages", "evaluate", "agents", "data", "studies", "serve", "shell")


class _Version(argparse.Action):
    """``--version``: computed only when asked (it starts Chromium to ask its version)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object):
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            help="print the versions of pagelens, its core, Playwright and Chromium, and exit",
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from pagelens.versions import versions

        print("\n".join(f"{k} {v}" for k, v in versions().items()))
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pagelens", description="What an LLM web agent should read.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)
    import importlib

    for name in GROUP_MODULES:
        importlib.import_module(f"pagelens.cli.{name}").register(sub)
    return parser


def command_paths(parser: argparse.ArgumentParser | None = None) -> list[tuple[str, ...]]:
    """Every command the parser has, as the words that name it (``()`` for ``pagelens``
    itself): what the base-install check and the layers test run ``--help`` of."""
    found: list[tuple[str, ...]] = []
    stack: list[tuple[argparse.ArgumentParser, tuple[str, ...]]] = [(parser or build_parser(), ())]
    while stack:
        current, words = stack.pop()
        found.append(words)
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend((sub, (*words, name)) for name, sub in action.choices.items())
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["browser"]:  # a shell agent's step: only what it needs is imported
        from pagelens.cli import shell

        return shell.main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # `pagelens observe | head`: the reader left; not an error.
        sys.stdout = None
        return 0
    except (PagelensError, OSError, ImportError) as e:
        print(f"pagelens: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        # The browser's failures (a page that does not load...) are the user's to fix, not a bug.
        if type(e).__module__.startswith("playwright"):
            print(f"pagelens: error: {str(e).splitlines()[0]}", file=sys.stderr)
            return 2
        raise


__all__ = ["build_parser", "command_paths", "main"]
