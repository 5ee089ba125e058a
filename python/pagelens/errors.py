"""The one family of errors pagelens raises on bad input or a missing setup step.

Every exception the package raises for something a caller can fix (a malformed payload, an
unknown option, a task file with a wrong field, an action a model wrote badly) derives from
:class:`PagelensError`, so a caller (the CLI among them) catches the family and nothing else.
"""

from __future__ import annotations

__all__ = ["PagelensError"]


class PagelensError(Exception):
    """Base of every error pagelens raises on bad input or a missing setup step."""
