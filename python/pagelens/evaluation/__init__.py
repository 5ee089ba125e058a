"""WebArena-style evaluation: task configs, every evaluator per variant (``webarena``,
``agentoccam``, ``verified``, ``strict``), and scoring of saved runs into per-site tables. See
:mod:`pagelens.evaluation.variants` for what each variant reproduces and where they differ."""

from pagelens.evaluation.errors import EvaluationSetupError, NotScored, TaskError
from pagelens.evaluation.grader import Grader
from pagelens.evaluation.harness import (
    Harness,
    RunOutcome,
    TaskScore,
    find_outcomes,
    format_table,
    load_outcome,
    site_table,
)
from pagelens.evaluation.program_html import ProgramHtmlEvaluator
from pagelens.evaluation.strings import StringEvaluator, clean_answer, exact_match, must_include
from pagelens.evaluation.tasks import SiteConfig, TaskConfig, TaskConfigError, load_tasks, packaged_task_file
from pagelens.evaluation.urls import UrlEvaluator, url_match, webarena_url_match
from pagelens.evaluation.variants import ALIASES, VARIANTS, Variant, get_variant

__all__ = [
    "ALIASES",
    "VARIANTS",
    "EvaluationSetupError",
    "Grader",
    "Harness",
    "NotScored",
    "ProgramHtmlEvaluator",
    "RunOutcome",
    "SiteConfig",
    "StringEvaluator",
    "TaskConfig",
    "TaskConfigError",
    "TaskError",
    "TaskScore",
    "UrlEvaluator",
    "Variant",
    "clean_answer",
    "exact_match",
    "find_outcomes",
    "format_table",
    "get_variant",
    "load_outcome",
    "load_tasks",
    "must_include",
    "packaged_task_file",
    "site_table",
    "url_match",
    "webarena_url_match",
]
