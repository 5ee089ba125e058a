"""The action parser: tolerant of how models write actions, strict about what it accepts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens.actions import ACTION_SPACES, Action, ActionError, parse_action

WRITTEN = [
    ("click [12]", Action("click", 12)),
    ("click [ 12 ]", Action("click", 12)),
    ('click ["12"]', Action("click", 12)),
    ("click [id=12]", Action("click", 12)),
    ("click [12] to open the menu", Action("click", 12)),
    # The observation's new-element mark, copied with the id (outside or inside the brackets).
    ("click *[12]", Action("click", 12)),
    ("click [*12]", Action("click", 12)),
    ("type *[7] [blue] [0]", Action("type", 7, "blue", False)),
    ("```click [1234]```", Action("click", 1234)),
    ("```\nclick [7]\n```", Action("click", 7)),
    ("In summary, the next action I will perform is ```click [1234]```", Action("click", 1234)),
    ("REASON: the button is there\nACTION: click [9]", Action("click", 9)),
    ("**Action:** hover [3]", Action("hover", 3)),
    ("type [5] [hello world] [0]", Action("type", 5, "hello world", False)),
    ("type [5] [hello world]", Action("type", 5, "hello world", True)),  # Enter by default
    ("type [5] [hello] [press_enter_after=1]", Action("type", 5, "hello", True)),
    ('type [5] ["quoted text"] [0]', Action("type", 5, "quoted text", False)),
    ("type [5] [a [b] c] [0]", Action("type", 5, "a [b] c", False)),
    ('type [5] [say "hi"] [1]', Action("type", 5, 'say "hi"', True)),
    ("stop [The answer is 42]", Action("stop", None, "The answer is 42")),
    ("stop [a [nested] answer] then done", Action("stop", None, "a [nested] answer")),
    ("stop [N/A]", Action("stop", None, "N/A")),
    ("stop []", Action("stop", None, "")),
    ("note [price: $10]", Action("note", None, "price: $10")),
    ("branch [0] [Find the order list]", Action("branch", 0, "Find the order list")),
    ("prune [2] [the search found nothing]", Action("prune", 2, "the search found nothing")),
    ("scroll [down]", Action("scroll", None, "down")),
    ("scroll [direction=up]", Action("scroll", None, "up")),
    ("press [Control+a]", Action("press", None, "Control+a")),
    ("goto [http://example.com/a?b=1]", Action("goto", None, "http://example.com/a?b=1")),
    ("tab_focus [1]", Action("tab_focus", 1)),
    ("new_tab", Action("new_tab")),
    ("close_tab", Action("close_tab")),
    ("go_back", Action("go_back")),
    ("go_forward", Action("go_forward")),
    ("go_home", Action("go_home")),
    ("noop", Action("noop")),
    ("CLICK [4]", Action("click", 4)),
]


@pytest.mark.parametrize("raw,expected", WRITTEN)
def test_what_models_write(raw, expected):
    assert parse_action(raw) == expected


REFUSED = [
    ("", "empty action"),
    ("   \n ", "empty action"),
    ("fly [3]", "unknown action 'fly'"),
    ("click", "needs its arguments in brackets"),
    ("click [abc]", "numeric element id"),
    ("click [-3]", "numeric element id"),
    ("type [3]", "needs [id] [text]"),
    ("type [x] [hello]", "numeric element id"),
    ("type [3] [hello] [press_enter_after=2]", "press_enter_after is 0 or 1"),
    ("scroll [left]", "[up] or [down]"),
    ("press []", "needs a key combination"),
    ("goto []", "needs a URL"),
    ("tab_focus [first]", "numeric tab index"),
    ("branch [1] []", "non-empty intent"),
    ("stop [unclosed", "closing bracket"),
    ("I think I should look around first.", "unknown action 'I'"),
]


@pytest.mark.parametrize("raw,message", REFUSED)
def test_refused_with_a_message_for_the_model(raw, message):
    with pytest.raises(ActionError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_action(raw)


def test_action_spaces():
    assert parse_action("click [3]", "occam").kind == "click"
    with pytest.raises(ActionError, match="not available here"):
        parse_action("scroll [down]", "occam")
    with pytest.raises(ActionError, match="not available here"):
        parse_action("branch [0] [x]", "webarena")
    assert ACTION_SPACES["occam"] < ACTION_SPACES["all"]
    assert ACTION_SPACES["webarena"] < ACTION_SPACES["all"]
    with pytest.raises(ValueError, match="unknown action space"):
        parse_action("click [1]", "nope")


def test_not_text():
    with pytest.raises(ActionError, match="is text"):
        parse_action(None)  # type: ignore[arg-type]


# Text a model may type: any printable characters but newlines, without surrounding quotes
# and not ending in what reads as a press-enter flag.
free_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n\r\x85\u2028\u2029"),
    max_size=40,
).filter(lambda s: s == s.strip() and (len(s) < 2 or s[0] + s[-1] not in ('""', "''", "``", "“”", "‘’")))

actions = st.one_of(
    st.builds(Action, st.sampled_from(["click", "hover"]), st.integers(0, 10**9)),
    st.builds(lambda i, t, e: Action("type", i, t, e), st.integers(0, 10**9), free_text, st.booleans()),
    st.builds(lambda t: Action("stop", None, t), free_text),
    st.builds(lambda t: Action("note", None, t), free_text),
    st.builds(lambda i, t: Action("branch", i, t), st.integers(0, 999), free_text.filter(str.strip)),
    st.builds(lambda d: Action("scroll", None, d), st.sampled_from(["up", "down"])),
    st.builds(lambda i: Action("tab_focus", i), st.integers(0, 99)),
    st.sampled_from([Action(k) for k in ("new_tab", "close_tab", "go_back", "go_forward", "go_home", "noop")]),
)


@settings(max_examples=400, deadline=None)
@given(actions)
def test_canonical_form_round_trips(action):
    # `type`'s text may itself end in "] [0": the flag written after it still wins.
    assert parse_action(str(action)) == action


@settings(max_examples=200, deadline=None)
@given(actions, st.sampled_from(["```{}```", "Action: {}", "```\n{}\n```", "Reason: x.\nAction: {}"]))
def test_wrappers_do_not_change_the_action(action, wrapper):
    assert parse_action(wrapper.format(action)) == action


# -- one action table: the parser, the executor, the agents and the prompts agree ------------------


def example(spec):
    values = {"id": "[3]", "int": "[1]", "text": "[hello there]", "flag": "[0]", "dir": "[down]", "keys": "[Enter]"}
    return " ".join([spec.name, *(values[a] for a in spec.args)])


def test_every_action_of_the_table_parses_and_round_trips():
    from pagelens.actions import ACTIONS

    for name, spec in ACTIONS.items():
        action = parse_action(example(spec), "all")
        assert action.kind == name and action.acts_on_element == spec.on_element and action.internal == spec.internal
        assert parse_action(str(action), "all") == action


def test_every_action_is_carried_out_by_the_browser_or_has_a_meaning():
    """A page action has the executor's handler; an internal one has an effect the shared
    piece applies (and the executor refuses it: it never reaches the page)."""
    import asyncio
    import inspect

    from pagelens.actions import ACTIONS, Internal, internal_outcome
    from pagelens.browser.execute import Executor

    executor = Executor(tabs=None, resolver=None, config=None)  # type: ignore[arg-type]  # only its methods are looked at
    for name, spec in ACTIONS.items():
        action = parse_action(example(spec), "all")
        if spec.internal:
            assert not hasattr(executor, "_" + name), name
            with pytest.raises(ActionError, match="changes the agent"):
                asyncio.run(executor.run(action))
            assert isinstance(internal_outcome(action), Internal), name
        else:
            assert internal_outcome(action) is None, name
            params = list(inspect.signature(executor.handler(name)).parameters)
            assert params == (["element", "action"] if spec.on_element else ["action"]), name


def test_internal_actions_mean_what_the_table_says_unless_the_agent_says_otherwise():
    from pagelens.actions import Internal, internal_outcome

    stop, note, branch = parse_action("stop [42]"), parse_action("note [n]"), parse_action("branch [0] [x]")
    assert internal_outcome(stop) == Internal(True, done=True, answer="42")
    assert internal_outcome(note) == Internal(True, note="n")
    assert internal_outcome(branch) == Internal(True)  # the browser alone has no plans to change

    class Planless:
        pass

    refused = internal_outcome(branch, Planless())
    assert refused is not None and not refused.ok and "keeps no plans" in (refused.error or "")

    class Returns:
        def on_answer(self, action, url):
            return Internal(True, note=f"returned {action.text} at {url}")

    assert internal_outcome(stop, Returns(), "http://x/") == Internal(True, note="returned 42 at http://x/")


def test_prompts_list_exactly_the_allowed_actions():
    from pagelens.actions import ACTIONS, describe_actions
    from pagelens.agents.occam import OccamConfig

    for config in (
        OccamConfig(),
        OccamConfig(action_space="webarena"),
        OccamConfig(planning=False),
        OccamConfig(scrolling=True),
    ):
        allowed = config.allowed()
        lines = describe_actions(allowed).splitlines()
        described = {line.split(" ")[0].rstrip(":") for line in lines}
        assert described == {n for n in allowed if ACTIONS[n].prompt}
        for line in lines:  # the usage each line shows is an action the parser accepts here
            usage = line.split(":")[0].replace("[up|down]", "[down]").replace("[press_enter_after=0|1]", "[1]")
            usage = usage.replace("[keys]", "[Enter]").replace("[index]", "[0]").replace("[url]", "[http://x/]")
            usage = usage.replace("[id]", "[4]").replace("[text]", "[t]").replace("[answer]", "[a]")
            assert parse_action(usage, allowed).kind in allowed, line
        for name in ACTIONS.keys() - allowed:
            with pytest.raises(ActionError):
                parse_action(example(ACTIONS[name]), allowed)


# -- hostile text: any string is an Action or an ActionError, in linear time ---------------------

PARTS = [
    "click",
    "type",
    "stop",
    "hover",
    "tab_focus",
    "branch",
    "Action:",
    "**",
    "[",
    "]",
    "[12",
    "12]",
    " ",
    "\n",
    "```",
    "'",
    '"',
    "press_enter_after=",
    "0",
    "1",
    "x",
    "  ",
    "\t",
    "-",
    ":",
    "next action",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PARTS), max_size=40))
def test_any_text_is_an_action_or_an_action_error(parts):
    try:
        action = parse_action("".join(parts), "all")
    except ActionError:
        return
    assert isinstance(action, Action)
    assert parse_action(str(action), "all") == action


@pytest.mark.parametrize(
    "raw",
    [
        "click [",
        "Action: hover [12",
        "tab_focus [",
        "click [" + "9" * 5000 + "]",
        "type [3] [x" + "] [" * 5000,
        "action" + " " * 50_000 + "x",
        "type [1] [a] [" + " " * 50_000 + "x]",
        "```" * 20_000,
        "[" * 50_000,
        "stop [" + "]" * 50_000,
        "Action:" + " " * 50_000,
    ],
)
def test_hostile_text_is_refused_quickly(raw):
    import time

    started = time.perf_counter()
    try:
        parse_action(raw, "all")
    except ActionError:
        pass
    assert time.perf_counter() - started < 1.0, raw[:40]
