"""WebArena task configs: loading, validation that names the file, task and field, and site
placeholders replaced across the whole config as WebArena's ``generate_test_data.py`` does.

Sources: WebArena's own task JSON (the 812 tasks of ``test.raw.json``, or one config per file
as in its ``config_files/``); the same with AgentOccam's 81 changed tasks in place
(``agentoccam_tasks.json``, taken from AgentOccam's released file); WebArena-Verified's task
file (read here for its ids, sites and intents; its own library scores it).
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pagelens import _io
from pagelens.errors import ArgumentError, PagelensError

__all__ = [
    "PLACEHOLDERS",
    "WEBARENA_PLACEHOLDERS",
    "ProgramTarget",
    "SiteConfig",
    "TaskConfig",
    "TaskConfigError",
    "load_tasks",
    "packaged_task_file",
]

# WebArena's site placeholders and the site names tasks use.
PLACEHOLDERS = {
    "__SHOPPING__": "shopping",
    "__SHOPPING_ADMIN__": "shopping_admin",
    "__REDDIT__": "reddit",
    "__GITLAB__": "gitlab",
    "__MAP__": "map",
    "__WIKIPEDIA__": "wikipedia",
    "__HOMEPAGE__": "homepage",
}
# The placeholders WebArena's generate_test_data.py replaces (it leaves __HOMEPAGE__ as is).
WEBARENA_PLACEHOLDERS = ("__GITLAB__", "__REDDIT__", "__SHOPPING__", "__SHOPPING_ADMIN__", "__WIKIPEDIA__", "__MAP__")
EVAL_TYPES = ("string_match", "url_match", "program_html")


class TaskConfigError(PagelensError, ValueError):
    """A task config or file that cannot be used; the message names the file, task and field."""


@dataclass(frozen=True)
class ProgramTarget:
    """One program_html check: where to look, what to run, what must be there."""

    url: str  # "last", a URL (placeholders resolved) or "func:helper(...)"
    locator: str  # "" (whole page), a `document...` expression, or "func:helper(...)"
    exact_match: str | None = None
    must_include: tuple[str, ...] | None = None
    prep_actions: tuple[str, ...] = ()
    alternatives: tuple[ProgramTarget, ...] = ()  # rectified configs' "or"


@dataclass(frozen=True)
class TaskConfig:
    task_id: int
    intent: str
    sites: tuple[str, ...]
    start_url: str
    eval_types: tuple[str, ...]
    exact_match: str | None = None
    must_include: tuple[str, ...] | None = None
    fuzzy_match: tuple[str, ...] | str | None = None  # "N/A" marks an unachievable task
    reference_url: str = ""
    url_alternatives: tuple[str, ...] = ()  # rectified configs' eval.or
    url_note: str = "GOLD in PRED"
    program_html: tuple[ProgramTarget, ...] = ()
    # reference_answers' keys in the config's order: WebArena scores them in that order, and
    # an N/A check replaces the score so far.
    reference_order: tuple[str, ...] = ()
    string_note: str = ""
    intent_template: str = ""
    intent_template_id: int | None = None
    require_login: bool = False
    storage_state: str | None = None
    source: str = "webarena"
    where: str = ""  # file and position, for messages: "test.raw.json[12] (task 12)"
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def unachievable(self) -> bool:
        """WebArena marks an unachievable task with the reference "N/A"; WebArena-Verified with
        an expected status other than SUCCESS (NOT_FOUND_ERROR, ACTION_NOT_ALLOWED_ERROR...)."""
        if self.source == "webarena-verified":
            return any(
                ev.get("evaluator") == "AgentResponseEvaluator"
                and ev.get("expected", {}).get("status", "SUCCESS") != "SUCCESS"
                for ev in self.raw["eval"]
            )
        return self.fuzzy_match == "N/A"

    @property
    def site(self) -> str:
        """The site a results table groups the task under ("gitlab+reddit" for several)."""
        return "+".join(self.sites)

    def resolved(self, sites: SiteConfig, placeholders: tuple[str, ...] = WEBARENA_PLACEHOLDERS) -> TaskConfig:
        """The task with ``placeholders`` replaced by the sites' URLs across the whole config
        (references, program_html URLs, locators and required contents alike); placeholders
        without a URL stay as they are (see :meth:`unresolved`)."""
        if self.source != "webarena":
            return self
        text = json.dumps(self.raw, ensure_ascii=False)
        for placeholder in placeholders:
            base = sites.base(placeholder)
            if base is not None:
                text = text.replace(placeholder, base)
        return from_webarena(json.loads(text), self.where)

    def unresolved(self, part: str, placeholders: tuple[str, ...] = WEBARENA_PLACEHOLDERS) -> list[str]:
        """Placeholders still in one part of the eval config (``reference_answers``,
        ``reference_url``, ``program_html``)."""
        ev = self.raw.get("eval") or {}
        pieces = [ev.get(part)]
        if part == "reference_url":
            pieces += [o.get("reference_url") for o in ev.get("or") or [] if isinstance(o, dict)]
        text = json.dumps(pieces)
        return [p for p in placeholders if p in text]


@dataclass
class SiteConfig:
    """Where each WebArena site runs: placeholder -> base URL (``{"__GITLAB__": "http://..."}``,
    or site names: ``{"gitlab": "http://..."}``)."""

    urls: dict[str, str] = field(default_factory=dict)
    # Accounts for checks that read a site's API: {"shopping_admin": {"username", "password"}}.
    accounts: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None) -> SiteConfig:
        if path is None:
            return cls()
        data = read_json(path, "site config")
        if not isinstance(data, dict):
            raise TaskConfigError(f"{path}: a site config is a JSON object")
        accounts = data.pop("accounts", {})
        if not all(isinstance(v, str) for v in data.values()):
            raise TaskConfigError(f"{path}: a site config maps placeholders or site names to URLs")
        if not isinstance(accounts, dict) or not all(
            isinstance(a, dict) and {"username", "password"} <= set(a) for a in accounts.values()
        ):
            raise TaskConfigError(f'{path}: `accounts` maps a site to {{"username", "password"}}')
        return cls(data, accounts)

    def base(self, placeholder: str) -> str | None:
        name = PLACEHOLDERS.get(placeholder)
        url = self.urls.get(placeholder) or (self.urls.get(name) if name else None)
        return url.rstrip("/") if url else None

    def resolve(self, text: str) -> str:
        for placeholder in PLACEHOLDERS:
            if placeholder in text:
                base = self.base(placeholder)
                if base is not None:
                    text = text.replace(placeholder, base)
        return text

    def unresolved(self, text: str) -> list[str]:
        return [p for p in PLACEHOLDERS if p in text and self.base(p) is None]


def _packaged_dataset() -> Path:
    """``webarena_verified/assets/dataset``, found without importing the package: its data is
    all we read, and its import pulls in pinned dependencies (`pip install --no-deps
    webarena-verified` is enough)."""
    spec = importlib.util.find_spec("webarena_verified")
    if spec is None or not spec.submodule_search_locations:
        raise TaskConfigError("the packaged task files need `pip install --no-deps webarena-verified`")
    return Path(next(iter(spec.submodule_search_locations))) / "assets" / "dataset"


def packaged_task_file(name: str = "webarena") -> Path:
    """The task files shipped by PyPI's ``webarena-verified`` (Apache-2.0): ``webarena``
    (WebArena's original 812 tasks) or ``webarena-verified``."""
    files = {"webarena": "test.raw.json", "webarena-verified": "webarena-verified.json"}
    if name not in files:
        raise ArgumentError(f"unknown packaged task file {name!r}; known: {sorted(files)}")
    path = _packaged_dataset() / files[name]
    if not path.is_file():
        raise TaskConfigError(f"webarena-verified has no {files[name]} at {path}")
    return path


def packaged_subsets() -> dict[str, frozenset[int]]:
    """WebArena-Verified's published task subsets, by name (``hard``: the 258 tasks its authors
    kept to cut a run's time by two thirds; ``non-hard``), read from its own data."""
    prefix = "webarena-verified-"
    out: dict[str, frozenset[int]] = {}
    for path in sorted((_packaged_dataset() / "subsets").glob(f"{prefix}*.json")):
        data = read_json(path, "subset file")
        ids = data.get("task_ids") if isinstance(data, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise TaskConfigError(f"{path}: a subset file lists its `task_ids` as integers")
        out[path.stem.removeprefix(prefix)] = frozenset(ids)
    return out


def load_tasks(source: str | os.PathLike[str], agentoccam: bool = False) -> list[TaskConfig]:
    """Tasks from a JSON file (a list or one task), a folder of ``*.json`` configs, or a packaged
    name (``webarena``, ``webarena-verified``). With ``agentoccam``, every task that is exactly
    WebArena's released config is replaced by AgentOccam's version where AgentOccam changed it."""
    if str(source) in ("webarena", "webarena-verified"):
        path = packaged_task_file(str(source))
    else:
        path = Path(source)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    items: list[tuple[str, Any]] = []
    for file in files:
        data = read_json(file, "task file")
        entries = data if isinstance(data, list) else [data]
        items.extend(
            (f"{file.name}[{i}]" if isinstance(data, list) else file.name, item) for i, item in enumerate(entries)
        )
    if not items:
        raise TaskConfigError(f"{path}: holds no tasks")
    replacements = agentoccam_tasks() if agentoccam else {}
    originals = _webarena_originals() if replacements else {}
    tasks = []
    seen: dict[int, str] = {}
    for where, item in items:
        if not isinstance(item, dict):
            raise TaskConfigError(f"{where}: a task is a JSON object, not {type(item).__name__}")
        if isinstance(item.get("eval"), list):
            task = from_verified(item, where)
        else:
            task_id = item.get("task_id")
            # (a task_id of the wrong type is from_webarena's to name, not a lookup's to trip on)
            if isinstance(task_id, int) and task_id in replacements and originals.get(task_id) == item:
                item = replacements[task_id]
            task = from_webarena(item, where)
        if task.task_id in seen:
            raise TaskConfigError(f"{where}: task_id {task.task_id} appears twice (also {seen[task.task_id]})")
        seen[task.task_id] = where
        tasks.append(task)
    return tasks


def read_json(path: str | os.PathLike[str], what: str) -> Any:
    """A JSON file, or a TaskConfigError naming the file and what is wrong with it."""
    return _io.read_json(path, what, TaskConfigError)


def _need(item: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, optional: bool = False) -> Any:
    if key not in item or item[key] is None:
        if optional:
            return None
        raise TaskConfigError(f"{where}: missing field `{key}`")
    value = item[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TaskConfigError(f"{where}: field `{key}` must be {names}, not {type(value).__name__}")
    return value


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskConfigError(f"{where}: field `{key}` must be a list of strings")
    return tuple(value)


def from_webarena(item: dict[str, Any], where: str = "task") -> TaskConfig:
    task_id = _need(item, "task_id", int, where)
    where = f"{where} (task {task_id})"
    intent = _need(item, "intent", str, where)
    sites = _strings(_need(item, "sites", list, where), where, "sites")
    start_url = _need(item, "start_url", str, where)
    ev = _need(item, "eval", dict, where)
    types = _strings(_need(ev, "eval_types", list, where + " eval"), where, "eval.eval_types")
    if not types:
        raise TaskConfigError(f"{where}: field `eval.eval_types` is empty")
    for t in types:
        if t not in EVAL_TYPES:
            raise TaskConfigError(f"{where}: field `eval.eval_types` has unknown type {t!r}; known: {EVAL_TYPES}")
    refs = ev.get("reference_answers") or {}
    if not isinstance(refs, dict):
        raise TaskConfigError(f"{where}: field `eval.reference_answers` must be an object")
    unknown = set(refs) - {"exact_match", "must_include", "fuzzy_match"}
    if unknown:
        raise TaskConfigError(f"{where}: field `eval.reference_answers` has unknown keys {sorted(unknown)}")
    exact = refs.get("exact_match")
    if exact is not None and not isinstance(exact, str):
        raise TaskConfigError(f"{where}: field `eval.reference_answers.exact_match` must be a string")
    must = (
        _strings(refs["must_include"], where, "eval.reference_answers.must_include") if "must_include" in refs else None
    )
    fuzzy_raw = refs.get("fuzzy_match")
    fuzzy: tuple[str, ...] | str | None
    if fuzzy_raw is None:
        fuzzy = None
    elif fuzzy_raw == "N/A":
        fuzzy = "N/A"
    else:
        fuzzy = _strings(fuzzy_raw, where, "eval.reference_answers.fuzzy_match")
    if "string_match" in types and exact is None and must is None and fuzzy is None:
        raise TaskConfigError(f"{where}: string_match needs `eval.reference_answers`")
    reference_url = ev.get("reference_url") or ""
    if not isinstance(reference_url, str):
        raise TaskConfigError(f"{where}: field `eval.reference_url` must be a string")
    if "url_match" in types and not reference_url:
        raise TaskConfigError(f"{where}: url_match needs `eval.reference_url`")
    alternatives = tuple(
        _need(o, "reference_url", str, f"{where} eval.or[{i}]")
        for i, o in enumerate(_objects(ev.get("or"), where, "eval.or"))
    )
    url_note = ev.get("url_note") or "GOLD in PRED"
    if url_note != "GOLD in PRED":
        raise TaskConfigError(f"{where}: field `eval.url_note` {url_note!r} is not a known matching rule")
    program = ev.get("program_html") or []
    if not isinstance(program, list):
        raise TaskConfigError(f"{where}: field `eval.program_html` must be a list")
    targets = tuple(_target(t, f"{where} eval.program_html[{i}]") for i, t in enumerate(program))
    if "program_html" in types and not targets:
        raise TaskConfigError(f"{where}: program_html needs `eval.program_html` targets")
    note = ev.get("string_note") or ""
    if not isinstance(note, str):
        raise TaskConfigError(f"{where}: field `eval.string_note` must be a string")
    return TaskConfig(
        task_id=task_id,
        intent=intent,
        sites=sites,
        start_url=start_url,
        eval_types=types,
        exact_match=exact,
        must_include=must,
        fuzzy_match=fuzzy,
        reference_url=reference_url,
        url_alternatives=alternatives,
        url_note=url_note,
        program_html=targets,
        reference_order=tuple(refs),
        string_note=note,
        intent_template=item.get("intent_template") or "",
        intent_template_id=item.get("intent_template_id"),
        require_login=bool(item.get("require_login")),
        storage_state=item.get("storage_state"),
        source="webarena",
        where=where,
        raw=item,
    )


def _objects(value: Any, where: str, key: str) -> list[dict[str, Any]]:
    """An optional list of objects (``eval.or``, a target's ``or``)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TaskConfigError(f"{where}: field `{key}` must be a list of objects, not {type(value).__name__}")
    return value


def _target(t: Any, where: str) -> ProgramTarget:
    if not isinstance(t, dict):
        raise TaskConfigError(f"{where}: must be an object")
    url = _need(t, "url", str, where)
    locator = t.get("locator", "")
    if not isinstance(locator, str):
        raise TaskConfigError(f"{where}: field `locator` must be a string")
    req = _need(t, "required_contents", dict, where)
    exact = req.get("exact_match")
    must = req.get("must_include")
    if exact is None and must is None:
        raise TaskConfigError(f"{where}: field `required_contents` needs exact_match or must_include")
    if exact is not None and not isinstance(exact, str):
        raise TaskConfigError(f"{where}: field `required_contents.exact_match` must be a string")
    prep = t.get("prep_actions") or []
    return ProgramTarget(
        url=url,
        locator=locator,
        exact_match=exact,
        must_include=_strings(must, where, "required_contents.must_include") if must is not None else None,
        prep_actions=_strings(prep, where, "prep_actions"),
        alternatives=tuple(_target(o, f"{where}.or[{i}]") for i, o in enumerate(_objects(t.get("or"), where, "or"))),
    )


def from_verified(item: dict[str, Any], where: str = "task") -> TaskConfig:
    """A WebArena-Verified task: its id, sites, intent and start URL, with the fields its
    evaluators read checked here, so a bad file names the task and field before scoring
    (WebArena-Verified's own library does the scoring; see :mod:`pagelens.evaluation.verified`)."""
    task_id = _need(item, "task_id", int, where)
    where = f"{where} (task {task_id})"
    intent = _need(item, "intent", str, where)
    sites = _strings(_need(item, "sites", list, where), where, "sites")
    starts = _strings(_need(item, "start_urls", list, where), where, "start_urls")
    kinds: list[str] = []
    for i, ev in enumerate(item["eval"]):
        at = f"{where} eval[{i}]"
        if not isinstance(ev, dict):
            raise TaskConfigError(f"{at}: an evaluator is an object, not {type(ev).__name__}")
        kind = _need(ev, "evaluator", str, at)
        expected = _need(ev, "expected", dict, at)
        if kind == "AgentResponseEvaluator":
            for key in ("task_type", "status"):
                if key in expected and not isinstance(expected[key], str):
                    raise TaskConfigError(f"{at}: field `expected.{key}` must be a string")
            data = expected.get("retrieved_data")
            if data is not None and not isinstance(data, (list, str, int, float, bool)):
                raise TaskConfigError(
                    f"{at}: field `expected.retrieved_data` must be a list, a string, a number or null"
                )
        elif kind == "NetworkEventEvaluator":
            url = expected.get("url")
            if not (isinstance(url, str) or (isinstance(url, list) and url and all(isinstance(u, str) for u in url))):
                raise TaskConfigError(
                    f"{at}: field `expected.url` must be a URL string or a list of them, not {type(url).__name__}"
                )
        else:
            raise TaskConfigError(f"{at}: unknown evaluator {kind!r}")
        kinds.append(kind)
    return TaskConfig(
        task_id=task_id,
        intent=intent,
        sites=sites,
        start_url=starts[0] if starts else "",
        eval_types=tuple(dict.fromkeys(kinds)),
        intent_template=item.get("intent_template") or "",
        intent_template_id=item.get("intent_template_id"),
        source="webarena-verified",
        where=where,
        raw=item,
    )


# -- AgentOccam's task file --------------------------------------------------------------------


def agentoccam_tasks() -> dict[int, dict[str, Any]]:
    """The tasks AgentOccam's released task file changes, as released (see the file's header:
    repository, commit, licence): task id -> config."""
    text = resources.files("pagelens.evaluation").joinpath("agentoccam_tasks.json").read_text()
    return {int(k): v for k, v in json.loads(text)["tasks"].items()}


def _webarena_originals() -> dict[int, dict[str, Any]]:
    """WebArena's released configs by id (to replace only tasks exactly as WebArena wrote them)."""
    try:
        path = packaged_task_file("webarena")
    except TaskConfigError:
        return {}
    return {t["task_id"]: t for t in read_json(path, "task file")}
