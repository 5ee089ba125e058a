"""Studies: an agent evaluated on a whole benchmark (MiniWoB++, WebArena, WebArena-Verified),
tasks x seeds, on worker processes or Ray actors with one browser each; resumable, with
faults contained, a budget, and a report.

    from pagelens.studies import StudySettings, RunOptions, run_study
    settings = StudySettings("miniwob", "occam", "gpt-4o", tasks=("click-test", "login-user"), seeds=(0, 1, 2))
    summary = run_study("studies/occam", settings, RunOptions(workers=4))
"""

from pagelens.rates import wilson
from pagelens.studies.engines import StudyStopped, run_study
from pagelens.studies.report import compare, format_comparison, write_report
from pagelens.studies.settings import EpisodeSpec, RunOptions, StudyMismatch, StudySettings, parse_seeds
from pagelens.studies.store import EpisodeResult, read_results

__all__ = [
    "EpisodeResult",
    "EpisodeSpec",
    "RunOptions",
    "StudyMismatch",
    "StudySettings",
    "StudyStopped",
    "compare",
    "format_comparison",
    "parse_seeds",
    "read_results",
    "run_study",
    "wilson",
    "write_report",
]
