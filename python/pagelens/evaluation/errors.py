"""What can stop a score: a task that cannot be scored here, a task whose config is bad, a
setup step not done."""

from __future__ import annotations

from pagelens.errors import PagelensError

__all__ = ["EvaluationSetupError", "NotScored", "TaskError"]


class NotScored(PagelensError, RuntimeError):
    """A score that needs something this run does not have (a site's URL, a live site, a
    grader, a grader reply with a verdict): the task is reported as not scored, never 0 or 1."""


class TaskError(PagelensError, ValueError):
    """A task whose config cannot be scored as written (a ``func:`` expression that is not one
    of WebArena's helpers...): that task's error, named with its id and file; the others are
    still scored."""


class EvaluationSetupError(PagelensError, RuntimeError):
    """A setup step scoring needs was not done (NLTK's Punkt tables, the WebArena-Verified
    library); the message says the command that does it."""
