"""The one family of errors pagelens raises on bad input or a missing setup step.

Every exception the package raises for something a caller can fix (a malformed payload, an
unknown option, a task file with a wrong field, an action a model wrote badly) derives from
:class:`PagelensError`, so a caller (the CLI among them) catches the family and nothing else.
Each also derives from the built-in class that says what kind of mistake it is
(``ValueError``, ``TypeError``, ``KeyError``, ``RuntimeError``).

The base class and the Rust core's exceptions are defined by the extension (so the core can
raise them); so is ``TrajectoryError``, shared by the runner and the evaluator, here; the
others live beside the code that raises them.
"""

from __future__ import annotations

from pagelens._core import (
    ArgumentError,
    ArgumentTypeError,
    AXTreeError,
    DomError,
    NodeNotFoundError,
    PagelensError,
    TokenizerError,
)


def one_line(error: BaseException) -> str:
    """An error as one line for a log or a client: its type and the first line of its message
    (at most 300 characters), for failures that are not the caller's (a bug, a browser gone)."""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
    return f"{type(error).__name__}: {first}"


class InputFileError(PagelensError, ValueError):
    """A file that cannot be read as what it should be (missing, a folder, not UTF-8, not JSON,
    nested too deeply to read); the message names the file and what it was read as."""


class TrajectoryError(InputFileError):
    """A run file that cannot be read or resumed (a bad line before the last, a field of the
    wrong type, a run of another task); the message names the file, line or field."""


__all__ = [
    "AXTreeError",
    "ArgumentError",
    "ArgumentTypeError",
    "DomError",
    "InputFileError",
    "NodeNotFoundError",
    "PagelensError",
    "TokenizerError",
    "TrajectoryError",
    "one_line",
]
