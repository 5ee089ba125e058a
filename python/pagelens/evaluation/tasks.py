"""WebArena task configs: loading, validation that names the bad field, site placeholders.

Two sources are read: WebArena's own task JSON (the 812 tasks of ``test.raw.json``, or one
config per file as in its ``config_files/``), and WebArena-Verified's task file, whose
evaluators are mapped onto the same fields (see :func:`from_verified`).
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "PLACEHOLDERS",
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
EVAL_TYPES = ("string_match", "url_match", "program_html")


class TaskConfigError(ValueError):
    """A task config that cannot be used; the message names the task and the field."""


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
    string_note: str = ""
    intent_template: str = ""
    intent_template_id: int | None = None
    require_login: bool = False
    storage_state: str | None = None
    source: str = "webarena"
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def unachievable(self) -> bool:
        return self.fuzzy_match == "N/A"

    @property
    def site(self) -> str:
        """The site a results table groups the task under ("gitlab+reddit" for several)."""
        return "+".join(self.sites)


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
        data = json.loads(Path(path).read_text())
        if not isinstance(data, dict):
            raise TaskConfigError(f"{path}: a site config is a JSON object")
        accounts = data.pop("accounts", {})
        if not all(isinstance(v, str) for v in data.values()):
            raise TaskConfigError(f"{path}: a site config maps placeholders or site names to URLs")
        if not isinstance(accounts, dict) or not all(
            isinstance(a, dict) and {"username", "password"} <= set(a) for a in accounts.values()
        ):
            raise TaskConfigError(f"{path}: `accounts` maps a site to {{\"username\", \"password\"}}")
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


def packaged_task_file(name: str = "webarena") -> Path:
    """The task files shipped by PyPI's ``webarena-verified`` (Apache-2.0): ``webarena``
    (WebArena's original 812 tasks) or ``webarena-verified``."""
    files = {"webarena": "test.raw.json", "webarena-verified": "webarena-verified.json"}
    if name not in files:
        raise ValueError(f"unknown packaged task file {name!r}; known: {sorted(files)}")
    # Found without importing the package: its data is all we read, and its import pulls in
    # pinned dependencies (`pip install --no-deps webarena-verified` is enough).
    spec = importlib.util.find_spec("webarena_verified")
    if spec is None or not spec.submodule_search_locations:
        raise TaskConfigError("the packaged task files need `pip install --no-deps webarena-verified`")
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / "dataset" / files[name]
    if not path.is_file():
        raise TaskConfigError(f"webarena-verified has no {files[name]} at {path}")
    return path


def load_tasks(source: str | os.PathLike[str], rectified: bool = False) -> list[TaskConfig]:
    """Tasks from a JSON file (a list or one task), a folder of ``*.json`` configs, or a packaged
    name (``webarena``, ``webarena-verified``). ``rectified`` applies AgentOccam's task fixes."""
    if str(source) in ("webarena", "webarena-verified"):
        path = packaged_task_file(str(source))
    else:
        path = Path(source)
    if path.is_dir():
        items: list[Any] = []
        for file in sorted(path.glob("*.json")):
            data = _read_json(file)
            items.extend(data if isinstance(data, list) else [data])
    else:
        data = _read_json(path)
        items = data if isinstance(data, list) else [data]
    tasks = []
    seen: set[int] = set()
    for index, item in enumerate(items):
        where = f"{path.name}[{index}]"
        if not isinstance(item, dict):
            raise TaskConfigError(f"{where}: a task is a JSON object, not {type(item).__name__}")
        if isinstance(item.get("eval"), list):
            task = from_verified(item, where)
        else:
            if rectified:
                item = apply_rectifications(item)
            task = from_webarena(item, where)
        if task.task_id in seen:
            raise TaskConfigError(f"{where}: task_id {task.task_id} appears twice")
        seen.add(task.task_id)
        tasks.append(task)
    return tasks


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise TaskConfigError(f"no such task file: {path}") from None
    except json.JSONDecodeError as e:
        raise TaskConfigError(f"{path}: not JSON: {e}") from None


def _need(item: dict, key: str, kind: type | tuple[type, ...], where: str, optional: bool = False) -> Any:
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


def from_webarena(item: dict, where: str = "task") -> TaskConfig:
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
    must = _strings(refs["must_include"], where, "eval.reference_answers.must_include") if "must_include" in refs else None
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
    alternatives = tuple(_need(o, "reference_url", str, where + " eval.or") for o in ev.get("or", []) or [])
    url_note = ev.get("url_note") or "GOLD in PRED"
    if url_note != "GOLD in PRED":
        raise TaskConfigError(f"{where}: field `eval.url_note` {url_note!r} is not a known matching rule")
    program = ev.get("program_html") or []
    if not isinstance(program, list):
        raise TaskConfigError(f"{where}: field `eval.program_html` must be a list")
    targets = tuple(_target(t, f"{where} eval.program_html[{i}]") for i, t in enumerate(program))
    if "program_html" in types and not targets:
        raise TaskConfigError(f"{where}: program_html needs `eval.program_html` targets")
    return TaskConfig(
        task_id=task_id, intent=intent, sites=sites, start_url=start_url, eval_types=types,
        exact_match=exact, must_include=must, fuzzy_match=fuzzy, reference_url=reference_url,
        url_alternatives=alternatives, url_note=url_note, program_html=targets,
        string_note=ev.get("string_note") or "", intent_template=item.get("intent_template") or "",
        intent_template_id=item.get("intent_template_id"), require_login=bool(item.get("require_login")),
        storage_state=item.get("storage_state"), source="webarena", raw=item,
    )


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
        url=url, locator=locator, exact_match=exact,
        must_include=_strings(must, where, "required_contents.must_include") if must is not None else None,
        prep_actions=_strings(prep, where, "prep_actions"),
        alternatives=tuple(_target(o, f"{where}.or[{i}]") for i, o in enumerate(t.get("or") or [])),
    )


def from_verified(item: dict, where: str = "task") -> TaskConfig:
    """A WebArena-Verified task in the same shape.

    ``AgentResponseEvaluator``: a ``retrieve`` task's ``retrieved_data`` become must_include
    references (every item must be in the answer); a non-SUCCESS ``status`` (NOT_FOUND_ERROR...)
    makes the task unachievable (answer "N/A" or a reason). ``NetworkEventEvaluator``'s URLs
    become url_match alternatives on the final URL (Verified checks recorded network events,
    which a saved trajectory does not hold).
    """
    task_id = _need(item, "task_id", int, where)
    where = f"{where} (task {task_id})"
    intent = _need(item, "intent", str, where)
    sites = _strings(_need(item, "sites", list, where), where, "sites")
    starts = _strings(_need(item, "start_urls", list, where), where, "start_urls")
    types: list[str] = []
    must = fuzzy = None
    urls: list[str] = []
    for i, ev in enumerate(item["eval"]):
        kind = _need(ev, "evaluator", str, f"{where} eval[{i}]")
        expected = _need(ev, "expected", dict, f"{where} eval[{i}]")
        if kind == "AgentResponseEvaluator":
            status = expected.get("status", "SUCCESS")
            if status != "SUCCESS":
                fuzzy = "N/A"
                types.append("string_match")
            elif expected.get("task_type") == "retrieve":
                data = expected.get("retrieved_data") or []
                must = tuple(json.dumps(d) if not isinstance(d, str) else d for d in data)
                if must:
                    types.append("string_match")
        elif kind == "NetworkEventEvaluator":
            url = expected.get("url")
            urls.extend([url] if isinstance(url, str) else list(url or []))
            if urls and "url_match" not in types:
                types.append("url_match")
        else:
            raise TaskConfigError(f"{where} eval[{i}]: unknown evaluator {kind!r}")
    if not types:
        types.append("string_match")
        fuzzy = fuzzy or None
    return TaskConfig(
        task_id=task_id, intent=intent, sites=sites, start_url=starts[0] if starts else "",
        eval_types=tuple(dict.fromkeys(types)), must_include=must, fuzzy_match=fuzzy,
        reference_url=" |OR| ".join(urls), intent_template=item.get("intent_template") or "",
        intent_template_id=item.get("intent_template_id"), source="webarena-verified", raw=item,
    )


# -- AgentOccam's rectifications ---------------------------------------------------------------

def rectifications() -> dict[int, dict[str, Any]]:
    """Task fixes from AgentOccam's appendix E (the ones its text states in full): task id ->
    {dotted field: new value}. See ``rectified_tasks.json`` for the source of each."""
    text = resources.files("pagelens.evaluation").joinpath("rectified_tasks.json").read_text()
    data = json.loads(text)
    return {int(k): v for k, v in data["tasks"].items()}


def apply_rectifications(item: dict) -> dict:
    patch = rectifications().get(item.get("task_id"))  # type: ignore[arg-type]
    if not patch:
        return item
    item = copy.deepcopy(item)
    for dotted, value in patch.items():
        if dotted.startswith("#"):
            continue  # a note
        node = item
        *parents, last = dotted.split(".")
        for key in parents:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return item
