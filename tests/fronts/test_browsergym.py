"""pagelens inside BrowserGym: its observation as occam text with BrowserGym's bids, pagelens
actions as BrowserGym's action strings, on BrowserGym's own environments (browsergym-core and
browsergym-miniwob 0.14.3, installed without their dependencies beside our Playwright; the
task pages from the `miniwob` wheel; Debian's Chromium for both of BrowserGym's browsers)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens.actions import ActionError
from pagelens.browsergym import SCROLL_PIXELS, bid_tree, occam_text, to_action
from support.miniwob_policy import next_action

TASKS = [
    "click-test",
    "click-button",
    "click-link",
    "focus-text",
    "enter-text",
    "choose-list",
    "click-checkboxes",
    "use-spinner",  # keys: a press goes to the focused element's bid in BrowserGym's default set
    "navigate-tree",  # files are list items a script listens on: ids from the observation's DOM snapshot
]


@pytest.mark.parametrize("seed", [7, 11])
@pytest.mark.parametrize("task", TASKS)
def test_a_policy_reading_only_pagelens_text_solves_miniwob_inside_browsergym(browsergym, task, seed):
    """BrowserGym's loop with its default action set: its env observes and acts; the policy
    reads only the goal and `occam_text(obs)` and answers pagelens actions, turned into
    BrowserGym's by `to_action` in the environment's own action set.

    BrowserGym's actions give Playwright a fixed 500 ms (its action functions' own timeout): on
    a busy machine a click can outlast it though nothing was wrong with the action, so an
    episode that met that timeout is run once more from the same seed; any other error fails."""
    env = browsergym.make(f"browsergym/miniwob.{task}")
    try:
        for attempt in (0, 1):
            obs, _ = env.reset(seed=seed)
            action_set = env.unwrapped.action_mapping  # the environment's own set (BrowserGym's default)
            timed_out = False
            for _ in range(14):
                text = occam_text(obs)
                assert "[" in text, text
                answer = next_action(obs["goal"], text, focused=obs["focused_element_bid"])
                obs, reward, terminated, truncated, _ = env.step(to_action(answer, obs, action_set=action_set))
                error = obs["last_action_error"]
                timed_out = attempt == 0 and error.startswith("TimeoutError:") and "Timeout 500ms exceeded" in error
                if timed_out:
                    break
                assert not error, error
                if terminated or truncated:
                    break
            if not timed_out:
                break
        assert terminated and reward == 1.0, (reward, occam_text(obs))
    finally:
        env.close()


def test_browsergym_own_text_gives_a_miniwob_link_no_bid_and_pagelens_does(browsergym):
    """MiniWoB++'s links are <span>s with a click handler: BrowserGym's flattened tree prints
    their text with no bid, so a text-only policy cannot click one; pagelens marks the element
    clickable (DOMSnapshot's isClickable in BrowserGym's own dom_object) with its bid."""
    from browsergym.utils.obs import flatten_axtree_to_str

    env = browsergym.make("browsergym/miniwob.click-link")
    try:
        obs, _ = env.reset(seed=3)
        word = re.fullmatch(r'Click on the link "(.+)"\.', obs["goal"]).group(1)
        flat = flatten_axtree_to_str(obs["axtree_object"])
        assert not re.search(rf"\[\w+\] \w+ '{re.escape(word)}'", flat), flat
        text = occam_text(obs)
        bid = re.search(rf"clickable \[(\w+)\] '{re.escape(word)}'", text).group(1)
        obs, reward, terminated, _, _ = env.step(to_action(f"click [{bid}]"))
        assert terminated and reward == 1.0
    finally:
        env.close()


def test_frames_keep_their_bids_and_actions_reach_them(browsergym, site):
    """BrowserGym merges the frames' trees with node ids unique only per frame; their elements
    print with the frame-lettered bids (`[a5]`, `[aa4]`), nested under their Iframe, and an
    action on one reaches the element in the frame."""
    env = browsergym.make(
        "browsergym/openended", task_kwargs={"start_url": site.url("site/frames.html")}, wait_for_user_message=False
    )
    try:
        obs, _ = env.reset()
        text = occam_text(obs)
        child = re.search(r"\n(\t+)button \[([a-z]+\d+)\] 'Child button'", text)
        grandchild = re.search(r"\n(\t+)link \[([a-z]{2,}\d+)\] 'Grandchild link'", text)
        assert child and grandchild, text
        assert len(grandchild.group(1)) > len(child.group(1)) > 1  # inside the frames
        main = re.search(r"button \[(\d+)\] 'Main button'", text)
        assert main, text
        obs, *_ = env.step(to_action(f"click [{child.group(2)}]", obs))
        assert not obs["last_action_error"] and obs["open_pages_titles"][0] == "child clicked"
    finally:
        env.close()


def test_a_tree_widgets_items_in_closed_folders_get_ids_once_shown(browsergym, site):
    """An ARIA tree whose folders open on a click (one listener on the tree, none on the rows),
    two levels deep: each level's items have bids in pagelens' text once their folder opens, and
    a click on the deepest file reaches it — in BrowserGym's own loop."""
    env = browsergym.make(
        "browsergym/openended",
        task_kwargs={"start_url": site.url("site/tree-widget.html")},
        wait_for_user_message=False,
    )
    try:
        obs, _ = env.reset()
        for name in ("Documents", "Archive", "Old report.pdf"):
            text = occam_text(obs)
            item = re.search(rf"treeitem \[(\w+)\] '{re.escape(name)}'", text)
            assert item, (name, text)
            obs, *_ = env.step(to_action(f"click [{item.group(1)}]", obs))
            assert not obs["last_action_error"], obs["last_action_error"]
        assert "picked Old report.pdf" in occam_text(obs)
    finally:
        env.close()


# -- the bridge on its own: BrowserGym's observation and action strings as data -------------


def _node(node_id, role, name="", parent=None, children=(), bid=None, backend=None, **extra):
    node = {"nodeId": node_id, "role": {"value": role}, "name": {"value": name}, "childIds": list(children)}
    if parent is not None:
        node["parentId"] = parent
    if bid is not None:
        node["browsergym_id"] = bid
    if backend is not None:
        node["backendDOMNodeId"] = backend
    node.update(extra)
    return node


def test_frames_whose_node_ids_collide_are_kept_apart():
    """Two frames' trees reuse node ids 1-3 (each renderer numbers its own): the iframe's
    child is the frame's root, the rest stays in its own frame."""
    nodes = [
        _node("1", "RootWebArea", "Top", children=["2", "3"], backend=1),
        _node("2", "button", "Top button", parent="1", bid="4", backend=2),
        _node("3", "Iframe", "", parent="1", children=["1"], bid="a", backend=3),
        _node("1", "RootWebArea", "Inner", children=["2"], backend=1, frameId="F"),
        _node("2", "button", "Inner button", parent="1", children=["3"], bid="a0", backend=2),
        _node("3", "StaticText", "Inner button", parent="2", backend=4),
    ]
    text = occam_text({"axtree_object": {"nodes": nodes}})
    assert text == (
        "RootWebArea 'Top'\n\tbutton [4] 'Top button'\n\tIframe [a]\n\t\tRootWebArea 'Inner'\n"
        "\t\t\tbutton [a0] 'Inner button'"
    ), text


def test_an_element_without_a_bid_shows_no_id_and_clickables_come_from_the_observation():
    nodes = [
        _node("1", "RootWebArea", "Page", children=["2", "3", "5"], backend=1),
        _node("2", "button", "Custom", parent="1", backend=2),  # a custom element: no bid
        _node("3", "generic", "", parent="1", children=["4"], bid="7", backend=3),
        _node("4", "StaticText", "Open", parent="3", backend=4),
        _node("5", "link", "Docs", parent="1", bid="8", backend=5),
    ]
    obs = {"axtree_object": {"nodes": nodes}, "extra_element_properties": {"7": {"clickable": True}}}
    assert occam_text(obs) == "RootWebArea 'Page'\n\tbutton 'Custom'\n\tclickable [7] 'Open'\n\tlink [8] 'Docs'"
    tree, labels = bid_tree(obs)
    assert sorted(v for v in labels.values() if v) == ["7", "8"]
    assert "[... " in occam_text(obs, max_tokens=12)


@pytest.mark.parametrize(
    "action,expected",
    [
        ("click [12]", "click('12')"),
        ("Action: click [a12]", "click('a12')"),
        ("click *[aB3]", "click('aB3')"),
        ("hover [7]", "hover('7')"),
        ("type [12] [blue shoes] [0]", "fill('12', 'blue shoes')"),
        ("type [a3] [it's [x]] [1]", "fill('a3', \"it's [x]\")\npress('a3', 'Enter')"),
        ("type [3] [see [a9] here] [0]", "fill('3', 'see [a9] here')"),
        ("scroll [down]", f"scroll(0, {SCROLL_PIXELS})"),
        ("scroll [up]", f"scroll(0, {-SCROLL_PIXELS})"),
        ("goto [http://x.test/a]", "goto('http://x.test/a')"),
        ("go_back", "go_back()"),
        ("go_forward", "go_forward()"),
        ("new_tab", "new_tab()"),
        ("close_tab", "tab_close()"),
        ("tab_focus [1]", "tab_focus(1)"),
        ("noop", "noop()"),
        ("stop [$12.99]", "send_msg_to_user('$12.99')"),
        ("stop [N/A: the shop has no such order]", "report_infeasible('the shop has no such order')"),
    ],
)
def test_pagelens_actions_as_browsergym_action_strings(action, expected):
    assert to_action(action) == expected


def test_a_key_press_is_written_in_the_callers_action_set():
    """BrowserGym's default set (chat, infeas, bid, nav, tab) has no keyboard_press: a key goes
    to the focused element's bid with press(); a set with the coord subset may use
    keyboard_press; a set without the function an action needs refuses it, naming it."""
    from browsergym.core.action.highlevel import HighLevelActionSet

    focused = {"focused_element_bid": "a5"}
    assert to_action("press [Control+a]", focused) == "press('a5', 'Control+a')"
    assert to_action("press [Enter]", focused, action_set=HighLevelActionSet()) == "press('a5', 'Enter')"
    with pytest.raises(ActionError, match="no element has focus"):
        to_action("press [ArrowUp]", {"focused_element_bid": ""})
    assert to_action("press [ArrowUp]", {}, action_set=["bid", "coord"]) == "keyboard_press('ArrowUp')"
    assert to_action("press [ArrowUp]", focused, action_set=["coord"]) == "keyboard_press('ArrowUp')"
    bid_only = HighLevelActionSet(subsets=["bid"], multiaction=False)
    assert to_action("hover [3]", action_set=bid_only) == "hover('3')"
    with pytest.raises(ActionError, match=r"goto\(\), which this action set does not have"):
        to_action("goto [http://x.test/]", action_set=bid_only)
    with pytest.raises(ActionError, match="two BrowserGym actions"):  # the set's own multiaction
        to_action("type [3] [x] [1]", action_set=bid_only)
    with pytest.raises(ActionError, match="send_msg_to_user"):
        to_action("stop [done]", action_set=["bid"])
    # Every function the table names is BrowserGym's own, in its subset.
    from browsergym.core.action.highlevel import ACTION_SUBSETS

    from pagelens.browsergym import BROWSERGYM_SUBSETS, DEFAULT_SUBSETS

    for subset, names in BROWSERGYM_SUBSETS.items():
        assert set(names) == {f.__name__ for f in ACTION_SUBSETS[subset]}, subset
    default = set(HighLevelActionSet().action_set)
    assert default == {f for s in DEFAULT_SUBSETS for f in BROWSERGYM_SUBSETS[s]} | {"noop"}


def test_a_native_drop_down_option_is_selected_not_clicked():
    nodes = [
        _node("1", "RootWebArea", "Form", children=["2"], backend=1),
        _node("2", "combobox", "", parent="1", children=["3"], bid="13", backend=2),
        _node("3", "MenuListPopup", "", parent="2", children=["4", "5"], backend=3),
        _node("4", "option", "Kazakhstan", parent="3", bid="14", backend=4),
        _node("5", "option", "Norfolk Island", parent="3", bid="15", backend=5),
    ]
    obs = {"axtree_object": {"nodes": nodes}}
    assert "options: [14] 'Kazakhstan'; [15] 'Norfolk Island'" in occam_text(obs)
    assert to_action("click [15]", obs) == "select_option('13', 'Norfolk Island')"
    assert to_action("click [15]") == "click('15')"  # without the observation: a click


@pytest.mark.parametrize(
    "action,message",
    [
        ("note [the price is $3]", "changes the agent"),
        ("go_home", "no BrowserGym counterpart"),
        ("click [12", "closing bracket"),
        ("dance [3]", "unknown action"),
    ],
)
def test_actions_browsergym_cannot_take_are_refused(action, message):
    with pytest.raises(ActionError, match=message):
        to_action(action)
    with pytest.raises(ActionError, match="two BrowserGym actions"):
        to_action("type [3] [x] [1]", multiaction=False)


def test_a_malformed_observation_is_refused_with_what_is_missing():
    from pagelens.errors import PagelensError

    for bad in ({}, {"axtree_object": None}, {"axtree_object": {"nodes": 3}}, "text"):
        with pytest.raises(PagelensError, match="axtree_object|observation is a dict"):
            occam_text(bad)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["1000000000000000000", "100000000000000001", "[a1]", "a12", "7", " ", "x", "[b3]"]), max_size=8
    )
)
def test_typed_text_is_never_altered(pieces):
    """A letter bid stands in as a large number while pagelens' parser reads the action; the
    text the model typed is never changed by putting the bids back, whatever numbers it holds."""
    text = "".join(pieces).strip()
    if not text or text.startswith("[") or text.endswith("]"):
        return
    assert to_action(f"type [a1] [{text}] [0]") == f"fill('a1', {text!r})"


JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4), st.floats(allow_nan=True)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def odd_observations(draw) -> object:
    """BrowserGym observations with any field of any shape: the real ones' keys, odd values."""
    node = st.fixed_dictionaries(
        {},
        optional={
            "nodeId": st.one_of(st.text(max_size=2), st.integers(0, 4), JSONISH),
            "parentId": st.one_of(st.text(max_size=2), JSONISH),
            "childIds": st.one_of(st.lists(st.text(max_size=2), max_size=3), JSONISH),
            "role": st.one_of(
                st.fixed_dictionaries({"value": st.sampled_from(["option", "MenuListPopup", "combobox"])}), JSONISH
            ),
            "name": st.one_of(st.fixed_dictionaries({"value": JSONISH}), JSONISH),
            "browsergym_id": st.one_of(st.text(max_size=3), JSONISH),
            "backendDOMNodeId": JSONISH,
            "properties": JSONISH,
        },
    )
    nodes = st.lists(st.one_of(node, JSONISH), max_size=5)
    return draw(
        st.one_of(
            JSONISH,
            st.fixed_dictionaries(
                {"axtree_object": st.one_of(st.fixed_dictionaries({"nodes": nodes}), JSONISH)},
                optional={"dom_object": JSONISH, "extra_element_properties": JSONISH},
            ),
        )
    )


@settings(max_examples=400, deadline=None)
@given(odd_observations(), st.sampled_from(["click [a1]", "click [1]", "type [2] [x] [0]"]))
def test_odd_observations_are_refused_with_a_pagelens_error(obs, action):
    """Whatever shape an observation's fields have, the bridge reads it or raises one
    PagelensError naming what is wrong: never a TypeError or AttributeError from inside."""
    from pagelens.errors import PagelensError

    try:
        occam_text(obs)  # type: ignore[arg-type]
    except PagelensError:
        pass
    try:
        to_action(action, obs)  # type: ignore[arg-type]
    except PagelensError:
        pass
