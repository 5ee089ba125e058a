"""Each variant against the peer it reproduces, case for case.

``tests/data/peer_verdicts.json.gz`` holds verdicts recorded by running WebArena's
(``web-arena-x/webarena@f62e0b9``) and AgentOccam's (``amazon-science/AgentOccam@c078ba6``)
own ``evaluators.py`` and ``helper_functions.py`` on answers, URLs, locator values and grader
replies generated from their task configs (perturbed: case, spacing, punctuation, quotes,
numbers, unicode, query order, trailing slashes, ``|OR|``): every case of the issue's classes
(one-character references, ``|OR|``, ``eval.or``) and a random sample of the rest, at most
1,500 per variant and evaluator. See ``docs/evaluation.md`` for the table and how it was made.

The tables below it are facts read from the peers' code, one row per behaviour, in both
directions (what must pass, what must fail), per variant.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import json

import pytest

from pagelens.evaluation import (
    NotScored,
    ProgramHtmlEvaluator,
    SiteConfig,
    StringEvaluator,
    UrlEvaluator,
    load_tasks,
)
from pagelens.evaluation.grader import load_prompt, verdict_correct, verdict_same
from pagelens.evaluation.tasks import from_webarena
from support.paths import DATA as TESTS_DATA

FACTS = json.loads(gzip.decompress((TESTS_DATA / "peer_verdicts.json.gz").read_bytes()))
SITES = SiteConfig({f"__{name}__": url for name, url in FACTS["sites"].items()})
PEERS = ("webarena", "agentoccam")


@pytest.fixture(scope="module")
def tasks():
    return {
        "webarena": {t.task_id: t for t in load_tasks("webarena")},
        "agentoccam": {t.task_id: t for t in load_tasks("webarena", agentoccam=True)},
    }


def disagreements(rows, ours):
    out = []
    for row in rows:
        got = ours(*row[:-1])
        if got != row[-1]:
            out.append((*row, "ours:", got))
    return out


def both_directions(rows):
    verdicts = {row[-1] for row in rows}
    assert 0.0 in verdicts and 1.0 in verdicts, "the recorded cases must hold passes and failures"


# -- recorded peer verdicts -------------------------------------------------------------------------


def string_only(task):
    """The task as the recorded cases were scored: string_match alone, fuzzy_match (a model's
    call, compared separately) left out."""
    raw = copy.deepcopy(task.raw)
    raw["eval"]["reference_answers"].pop("fuzzy_match", None)
    raw["eval"]["eval_types"] = ["string_match"]
    return from_webarena(raw).resolved(SITES)


@pytest.mark.parametrize("variant", PEERS)
def test_string_match_agrees_with_the_peer(variant, tasks):
    rows = FACTS["string_match"][variant]
    assert len(rows) >= 1000
    both_directions(rows)
    evaluator = StringEvaluator(variant)
    configs = {task_id: string_only(tasks[variant][task_id]) for task_id in {r[0] for r in rows}}
    wrong = disagreements(rows, lambda task_id, answer: evaluator.score(configs[task_id], answer))
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("variant", PEERS)
def test_url_match_agrees_with_the_peer(variant, tasks):
    rows = FACTS["url_match"][variant]
    both_directions(rows)
    evaluator = UrlEvaluator(variant)
    wrong = disagreements(rows, lambda task_id, url: evaluator.score(tasks[variant][task_id].resolved(SITES), url))
    assert not wrong, wrong[:5]


class LocatorValue:
    """What program_html reads from a page, without a page: the recorded cases give the value
    the locator returned (or that it threw), and the page's HTML as ``<html>value</html>``.
    A stand-in for Playwright's Page because the peers' verdicts were recorded on values, not
    sites (WebArena's sites cannot run here); the live path is tested in test_evaluation.py."""

    def __init__(self, value):
        self.value = value

    async def goto(self, url, **kwargs):
        pass

    async def content(self):
        return "<html>" + (self.value if isinstance(self.value, str) else "") + "</html>"

    async def evaluate(self, script, *args):
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


def page_value(recorded: str):
    return RuntimeError("no such element") if recorded.startswith("RuntimeError") else json.loads(recorded)


@pytest.mark.parametrize("variant", PEERS)
def test_program_html_agrees_with_the_peer(variant, tasks):
    rows = FACTS["program_html"][variant]
    both_directions(rows)
    evaluator = ProgramHtmlEvaluator(variant, SITES, settle_ms=0)
    final_url = SITES.base("__GITLAB__") + "/final"

    def ours(task_id, value):
        task = tasks[variant][task_id].resolved(SITES)
        return asyncio.run(evaluator.score(task, final_url, LocatorValue(page_value(value)), at_final_url=True))

    wrong = disagreements(rows, ours)
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("variant", PEERS)
def test_grader_prompts_are_the_peers(variant):
    for kind, sent in FACTS["grader"][variant]["prompts"].items():
        ours = load_prompt(f"{variant}_{kind}").format(intent="intent z", reference="ref y", answer="pred x")
        assert ours == sent, kind


@pytest.mark.parametrize("variant", PEERS)
def test_grader_verdicts_are_read_as_the_peers_read_them(variant):
    cases = FACTS["grader"][variant]["cases"]
    assert {c[2] for c in cases} == {0.0, 1.0, None}
    for kind, reply, peer in cases:
        read = verdict_correct if kind == "fuzzy" else verdict_same
        if peer is None:  # the peer's assert stops its run: not scored here
            with pytest.raises(NotScored, match="no verdict"):
                read(reply, variant)
        else:
            assert read(reply, variant) == peer, (kind, reply)


# -- class 1: a one-character must_include is an NLTK token -----------------------------------------

ONE_CHARACTER = [
    # reference, answer, score in every variant (WebArena, AgentOccam and strict alike)
    ("0", "0", 1.0),
    ("0", "There are 0 open issues.", 1.0),
    ("0", "0.", 1.0),
    ("0", "It is 0. It was 0.", 1.0),
    ("6", "6 reviews", 1.0),
    ("6", "'6'", 1.0),
    ("6", "(6)", 1.0),
    ("6", "6%", 1.0),
    ("6", "$6", 1.0),
    ("0", "0.5", 0.0),
    ("0", "10", 0.0),
    ("0", "2020", 0.0),
    ("6", "6,000 reviews", 0.0),
    ("2", "2:00", 0.0),
    ("1", "item-1", 0.0),
    ("6", "6/6", 0.0),
    ("6", "6th", 0.0),
    ("1", "1-2", 0.0),
    ("s", "it's", 0.0),
]


def must_task(*references):
    return from_webarena(
        {
            "task_id": 1,
            "intent": "q",
            "sites": ["gitlab"],
            "start_url": "u",
            "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": list(references)}},
        }
    )


@pytest.mark.parametrize("variant", [*PEERS, "strict"])
@pytest.mark.parametrize("reference,answer,expected", ONE_CHARACTER)
def test_one_character_must_include(variant, reference, answer, expected):
    assert StringEvaluator(variant).score(must_task(reference), answer) == expected


def test_one_character_reference_among_several_is_a_substring():
    # WebArena tokenizes only when the reference is the task's only must_include.
    for variant in (*PEERS, "strict"):
        assert StringEvaluator(variant).score(must_task("0", "x"), "0.5 x") == 1.0


# -- |OR| in must_include, several references ---------------------------------------------------------

OR_CASES = [
    # references, answer, webarena, agentoccam, strict
    (["914km |OR| 914 km"], "914 km", 0.0, 1.0, 1.0),
    (["914km |OR| 914 km"], "914km |OR| 914 km", 1.0, 1.0, 1.0),
    (["914km |OR| 914 km"], "915 km", 0.0, 0.0, 0.0),
    (["a |OR| 6"], "nothing", 0.0, 1.0, 0.0),  # AgentOccam: a one-character alternative always matches
    (["6 |OR| a"], "zzz", 0.0, 1.0, 0.0),
    (["a |OR| 6"], "6", 0.0, 1.0, 1.0),
    (["alpha", "beta"], "alpha only", 0.0, 0.5, 0.0),
    (["alpha", "beta"], "'Alpha and BETA'", 1.0, 1.0, 1.0),
]


@pytest.mark.parametrize("references,answer,webarena,agentoccam,strict", OR_CASES)
def test_or_alternatives_and_several_references(references, answer, webarena, agentoccam, strict):
    task = must_task(*references)
    for variant, expected in (("webarena", webarena), ("agentoccam", agentoccam), ("strict", strict)):
        assert StringEvaluator(variant).score(task, answer) == expected, variant


# -- class 2: placeholders inside program_html required contents ---------------------------------------


@pytest.mark.parametrize("variant", [*PEERS, "strict"])
def test_placeholders_in_required_contents_are_replaced(variant, tasks):
    ids = [552, 553, 554, 555, 562, 563, 564, 565, 566, 681, 682, 683, 684, 685, 686, 687, 688]
    evaluator = ProgramHtmlEvaluator(variant, SITES, settle_ms=0)
    source = tasks["agentoccam" if variant == "strict" else variant]
    for task_id in ids:
        task = source[task_id].resolved(SITES)
        text = json.dumps([t.must_include or t.exact_match for t in task.program_html])
        assert "__" not in text.replace("\\u", ""), (task_id, text[:200])
        assert SITES.base("__REDDIT__") in text or SITES.base("__GITLAB__") in text, task_id
        # A page holding every required content scores 1; an empty one 0.
        everything = " ".join(" ".join(t.must_include or (t.exact_match,)) for t in task.program_html)
        full = asyncio.run(evaluator.score(task, SITES.base("__GITLAB__"), LocatorValue(everything), at_final_url=True))
        empty = asyncio.run(evaluator.score(task, SITES.base("__GITLAB__"), LocatorValue(""), at_final_url=True))
        if all(t.must_include for t in task.program_html):
            assert full == 1.0, task_id
        assert empty == 0.0, task_id


# -- class 3: url_match ---------------------------------------------------------------------------

URL_CASES = [
    # reference, final URL, webarena, agentoccam, strict
    ("http://h/viewed", "http://h/viewedasdf", 1.0, 1.0, 0.0),  # "GOLD in PRED": a substring
    ("http://h/f/nyc", "http://h/f/nyc-cars", 1.0, 1.0, 0.0),
    ("http://h/a", "http://x.h/a", 1.0, 1.0, 0.0),
    ("http://h/viewed", "http://h/viewed/", 1.0, 1.0, 1.0),
    ("http://h/a?x=1&b=", "http://h/a?x=1", 1.0, 1.0, 0.0),  # parse_qs drops the blank value
    ("http://h/x", "HTTP://H/x", 0.0, 1.0, 1.0),  # AgentOccam lower-cases
    ("http://h/a?q=A", "http://h/a?q=a", 0.0, 1.0, 1.0),
    ("http://h/A%20b", "http://h/A b", 0.0, 0.0, 1.0),  # percent-encoding
    ("http://h/a?x=1", "http://h/a/?x=1", 1.0, 1.0, 1.0),
    ("http://h/a/?x=1", "http://h/a?x=1", 0.0, 0.0, 1.0),  # the slash before the query
    ("http://h/a?x=1", "http://h/a?y=2&x=1", 1.0, 1.0, 1.0),
    ("http://h/a?x=1", "http://h/a?x=2", 0.0, 0.0, 0.0),
    ("http://h/a?x=1 |OR| http://h/a?x=2", "http://h/a?x=2", 1.0, 1.0, 1.0),
    ("http://h/a", "http://other/a", 0.0, 0.0, 0.0),
    ("http://h:80/a", "http://h/a", 0.0, 0.0, 0.0),
    ("http://h/a?x=1", "http://h/a?x=1#f", 1.0, 1.0, 1.0),
]


def url_task(reference, alternatives=()):
    ev = {"eval_types": ["url_match"], "reference_url": reference}
    if alternatives:
        ev["or"] = [{"reference_url": a} for a in alternatives]
    return from_webarena({"task_id": 1, "intent": "q", "sites": ["gitlab"], "start_url": "u", "eval": ev})


@pytest.mark.parametrize("reference,final_url,webarena,agentoccam,strict", URL_CASES)
def test_url_match_per_variant(reference, final_url, webarena, agentoccam, strict):
    for variant, expected in (("webarena", webarena), ("agentoccam", agentoccam), ("strict", strict)):
        assert UrlEvaluator(variant).score(url_task(reference), final_url) == expected, variant


def test_url_eval_or_groups():
    task = url_task("http://h/a", ["http://h/b"])
    assert UrlEvaluator("webarena").score(task, "http://h/b") == 0.0  # WebArena never reads eval.or
    assert UrlEvaluator("agentoccam").score(task, "http://h/b") == 1.0
    assert UrlEvaluator("strict").score(task, "http://h/b") == 1.0
    assert UrlEvaluator("agentoccam").score(task, "http://h/c") == 0.0


# -- class 4: AgentOccam's task file --------------------------------------------------------------


def test_agentoccam_task_file_is_theirs(tasks):
    webarena, agentoccam = tasks["webarena"], tasks["agentoccam"]
    changed = {i for i in webarena if webarena[i] != agentoccam[i]}
    assert len(changed) == 81
    assert {707, 708, 709, 786, 418, 644, 528, 529, 530, 531, 532, 679} <= changed
    assert set(range(640, 650)) | set(range(653, 658)) <= changed
    assert agentoccam[707].program_html[0].exact_match == "1/1/22"
    assert webarena[707].program_html[0].exact_match == "1/1/2022"
    assert agentoccam[786].must_include == ("414",) and webarena[786].must_include == ("412",)
    assert agentoccam[679].program_html[0].must_include == ("Complete",)
    assert webarena[363].exact_match == "748m" and agentoccam[363].must_include == ("778m |OR| 778 m",)


# -- class 5: grader verdicts -------------------------------------------------------------------------

FUZZY_REPLIES = [
    # reply, webarena and agentoccam, strict
    ("correct", 1.0, 1.0),
    ("incorrect. (… so it cannot be correct)", 0.0, 0.0),
    ("It is correct, not incorrect", 0.0, 0.0),
    ("The student is partially correct.", 0.0, 0.0),
    ("Explanation: the answer is not incorrect.\nVerdict: correct", 0.0, 1.0),  # strict reads its verdict line
    ("Looks correct at first.\nverdict: incorrect", 0.0, 0.0),
]
UA_REPLIES = [
    ("same", 1.0, 1.0),
    ("Different, although similar", 0.0, 0.0),
    ("not the same: different", 0.0, 0.0),
    ("Not different in spirit.\nVerdict: same", 0.0, 1.0),
]


@pytest.mark.parametrize("reply,peers,strict", FUZZY_REPLIES)
def test_fuzzy_verdicts(reply, peers, strict):
    assert verdict_correct(reply, "webarena") == peers == verdict_correct(reply, "agentoccam")
    assert verdict_correct(reply, "strict") == strict


@pytest.mark.parametrize("reply,peers,strict", UA_REPLIES)
def test_ua_verdicts(reply, peers, strict):
    assert verdict_same(reply, "webarena") == peers == verdict_same(reply, "agentoccam")
    assert verdict_same(reply, "strict") == strict


@pytest.mark.parametrize("variant", [*PEERS, "strict"])
def test_a_reply_without_a_verdict_is_not_scored(variant):
    with pytest.raises(NotScored):
        verdict_correct("I cannot tell.", variant)
    with pytest.raises(NotScored):
        verdict_same("unclear", variant)


# -- a lower-case |or| inside a program_html must_include ----------------------------------------------

HTML_OR_CASES = [
    # required content, page text, webarena, agentoccam, strict
    ("Alpha |or| Beta", "<p>beta</p>", 0.0, 1.0, 1.0),  # AgentOccam's must_include splits it again
    ("Alpha |or| Beta", "<p>Gamma</p>", 0.0, 0.0, 0.0),
    ("Alpha |or| Beta", "<p>alpha |or| beta</p>", 1.0, 1.0, 1.0),
    ("Alpha |OR| Beta", "<p>beta</p>", 1.0, 1.0, 1.0),  # split by every variant before must_include
]


@pytest.mark.parametrize("content,page,webarena,agentoccam,strict", HTML_OR_CASES)
def test_program_html_lower_case_or(content, page, webarena, agentoccam, strict):
    task = from_webarena(
        {
            "task_id": 1,
            "intent": "q",
            "sites": ["gitlab"],
            "start_url": "__GITLAB__",
            "eval": {
                "eval_types": ["program_html"],
                "program_html": [{"url": "last", "locator": "", "required_contents": {"must_include": [content]}}],
            },
        }
    ).resolved(SITES)
    final_url = SITES.base("__GITLAB__") + "/final"
    for variant, expected in (("webarena", webarena), ("agentoccam", agentoccam), ("strict", strict)):
        evaluator = ProgramHtmlEvaluator(variant, SITES, settle_ms=0)
        got = asyncio.run(evaluator.score(task, final_url, LocatorValue(page), at_final_url=True))
        assert got == expected, variant
