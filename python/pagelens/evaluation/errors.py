"""Why a task could not be scored (it is then reported as not scored, never as 0 or 1)."""


class NotScored(RuntimeError):
    """A score that needs something this run does not have: a site's URL, a live site, a grader."""
