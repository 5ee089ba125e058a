"""Malformed HTML of any kind gives a result (or DomError for non-text), never a crash or hang."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagelens


def test_unclosed_and_misnested_tags():
    dom = pagelens.Dom.parse("<div><p>one<b>two<i>three</b>four</p><table><td>x<tr>y")
    html = dom.clean().html()
    for word in ("one", "two", "three", "four", "x", "y"):
        assert word in html


def test_deep_nesting_is_flattened_not_slow():
    dom = pagelens.Dom.parse("<div>" * 100_000 + "deep text" + "</div>" * 100_000)
    assert dom.flattened_tags == 100_000 - (1024 - 2)  # <html> and <body> are two of the 1,024
    assert "deep text" in dom.html()
    assert "deep text" in dom.clean().html()


def test_formatting_elements_waiting_to_be_reopened_are_capped():
    # The tree builder reopens every waiting formatting element before each paragraph's text:
    # 1,000 different <b>s, then 40,000 paragraphs, built 40 million elements. Past 24 waiting
    # (the core's MAX_FORMATTING), a formatting start tag is dropped and its content kept.
    cap, paragraphs = 24, 40_000
    html = "<p>" + "".join(f"<b id={i}>" for i in range(1000)) + "</p>" + "<p>x</p>" * paragraphs
    dom = pagelens.Dom.parse(html)
    assert dom.flattened_tags == 1000 - cap
    assert len(dom) <= (cap + 2) * paragraphs
    assert dom.html().count(">x</b>") == paragraphs
    # Below the cap, nothing changes: nested formatting reopened in each paragraph.
    nested = pagelens.Dom.parse("<p><b><i><u>a</p><p>b</p><p>c").html()
    assert nested.count("<u node=") == 3


def test_end_tags_that_close_nothing_cannot_nest_past_the_limit():
    # `</a>` does not close the `<b>` before it: the `b`s nest one in another though the tags
    # open and close as many. Counted from the tags alone they never reached the limit, and the
    # tree builder's scans of its deepening stack made 20,000 of them take 0.65 s (quadratic).
    n = 200_000
    dom = pagelens.Dom.parse("<a>" * 30 + "<p>" + "<b>x</a>y" * n)
    assert dom.flattened_tags > n - 1024
    assert re.sub(r"<[^>]*>", "", dom.html()) == "xy" * n  # the text, all of it, in order


def test_a_tag_with_many_attributes_is_read_in_linear_time():
    # Duplicates used to be found by scanning the tag's attributes for each one (as
    # html5ever's tokenizer does): 400,000 of them took hours. The first of a name is kept.
    n = 400_000
    attrs = " ".join(f"a{i}={i}" for i in range(n))
    dom = pagelens.Dom.parse(f"<div {attrs} a7=dup>x</div><body {attrs} extra=1 a9=dup>")
    html = dom.html()
    assert 'a7="7"' in html and "dup" not in html
    assert html.count('a399999="399999"') == 2  # the div's, and the body's merged in
    assert html.count('extra="1"') == 1


def test_content_moved_out_of_a_table_is_placed_in_linear_time():
    # Foster parenting inserts before the table, at the end of its parent's children: the
    # place was found by a scan from the front, so 80,000 insertions took 3 s, 300,000 a minute.
    n = 300_000
    html = pagelens.Dom.parse("<table>" + "x<i></i>" * n + "<tr><td>cell").html()
    assert html.count("x<i node=") == n
    assert html.index("x<i node=") < html.index("<table") < html.index("cell")


def test_text_of_many_unwrapped_elements_is_joined_in_linear_time():
    # Cleaning joins the texts of unwrapped elements into one text node; it collapsed the
    # whole text again at each join: 40,000 elements took 4 s, 400,000 would take minutes.
    n = 400_000
    cleaned = pagelens.Dom.parse("<div>" + "<font> ab \n cd </font>" * n + "</div>").clean().html()
    assert cleaned.count(" ab cd") == n and "  " not in cleaned and "\n" not in cleaned


def test_binary_junk_nul_bytes_and_empty():
    junk = bytes(range(256)) * 2000 + b"\x00<p>\x00after nul</p>"
    html = pagelens.Dom.parse(junk).clean().html()
    assert "after nul" in html
    assert pagelens.Dom.parse(b"").html().startswith("<html")
    assert len(pagelens.Dom.parse("")) == 3  # html, head, body


def test_fifty_megabyte_page():
    row = "<tr><td class='c'>cell</td><td><a href='/x'>link</a></td></tr>"
    page = ("<table>" + row * (50_000_000 // len(row)) + "</table>").encode()
    assert len(page) > 49_000_000
    dom = pagelens.Dom.parse(page)
    cleaned = dom.clean()
    assert len(cleaned) > 2_000_000
    chunks = pagelens.chunk(cleaned.html()[:2_000_000], 4000)
    assert chunks and all(c.token_count <= 4000 for c in chunks)


def test_not_text():
    with pytest.raises(pagelens.ArgumentTypeError, match="str, bytes or RawHtml"):  # a TypeError and a PagelensError
        pagelens.Dom.parse(42)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="<>/=\"' abcdivpspantrdl!-&;#x0\u00a0中\n", max_size=300))
def test_generated_html_invariants(html):
    dom = pagelens.Dom.parse(html)
    ids = dom.node_ids()
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    clean = dom.clean()
    for i in clean.node_ids():
        assert clean.element(i).tag == dom.element(i).tag
    out = clean.html()
    assert pagelens.Dom.parse(out, keep_ids=True).clean().html() == out


# -- issue 17: forged ids, oversized start tags, foreign void names, given ids ---------------------


def test_page_text_cannot_forge_node_ids_in_chunks():
    html = (
        '<div><!-- <p node="99"> --><iframe srcdoc="x">&lt;a node="98"&gt;</iframe>'
        '<noscript><b node="97">no</b></noscript><p>ok</p></div>'
    )
    dom = pagelens.Dom.parse(html)
    real = set(dom.node_ids())
    for c in pagelens.chunk(dom.html(), 8, kind="dom"):
        assert set(c.node_ids) <= real, c.node_ids
    assert pagelens.find_chunk(pagelens.chunk(dom.html(), 8), 99) is None


def test_a_documents_chunks_hold_its_elements_where_the_serializer_wrote_them():
    # An SVG `<script>` is an element like any other (its children are elements, its text is
    # escaped); a reader of the markup takes it for a script and misses what is inside, but
    # never reads an id that is not there. A document's own chunks are cut where its tags are.
    dom = pagelens.Dom.parse("<div><svg><script><g></g>a</script></svg><p>x</p></div>")
    assert [i for c in dom.chunks(4) for i in c.node_ids] == dom.node_ids()
    read = [i for c in pagelens.chunk(dom.html(), 4) for i in c.node_ids]
    assert set(read) < set(dom.node_ids()) and read == sorted(read, reverse=True)


@pytest.mark.parametrize(
    "raw",
    [
        # A script left escaped: its `</script>` is text, and so is the tag after it.
        '<script>var s="<!--<script>";</script><i node="96"></script>',
        # End tags that are not one: `</stylex`, `</xmp` run into a name.
        '<style>a</stylex><i node="96"></style>',
        '<xmp>a</xmpx><i node="96"></xmp>',
        "<noembed>a</noembed\r<i node=96></noembed>",
    ],
)
def test_raw_text_cannot_forge_node_ids_in_chunks(raw):
    # The chunker reads a raw-text element's end as the parser does; it used to end it at the
    # first `</name` and read the text after as tags.
    dom = pagelens.Dom.parse(f"<div><p>a</p>{raw}<p>b</p></div>")
    for chunks in (pagelens.chunk(dom.html(), 4), dom.chunks(4)):
        ids = [i for c in chunks for i in c.node_ids]
        assert ids == dom.node_ids() and 96 not in ids


def test_a_start_tag_over_the_budget_keeps_its_id():
    html = '<div><a title="' + "word " * 600 + '">go</a></div>'
    dom = pagelens.Dom.parse(html)
    target = dom.select("a")[0]
    chunks = pagelens.chunk(dom.html(), 30)
    index = pagelens.find_chunk(chunks, target)
    assert index is not None and chunks[index].oversized


def test_foreign_elements_named_like_void_ones_keep_their_children():
    out = pagelens.Dom.parse("<svg><input><a>link</a></input></svg>").html()
    assert ">link</a></input></svg>" in out


def test_given_ids_stay_unique():
    for html in (
        '<p node="5">a</p><p node="5">b</p><p node="5">c</p>',
        '<p node="4294967295">a</p><p>b</p>',
        '<p node="0">a</p><p node="0">b</p>',
    ):
        ids = pagelens.Dom.parse(html, keep_ids=True).node_ids()
        assert len(ids) == len(set(ids)), (html, ids)


# -- output size: a fixed multiple of the input, whatever the input -----------------------------
# Each element costs at most `<tag node="4294967295"></tag>` in the output, and the parser adds
# a bounded number of elements per input tag (html/head/body, tbody/tr around a stray cell),
# so serializing is linear in the input; cleaning only removes.

DOM_GROWTH, DOM_SLACK = 24, 256


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<td>",
                "<tr>",
                "<col>",
                "<p>",
                "<a>",
                "<svg>",
                "<math>",
                "<li>",
                "<option>",
                "<frameset>",
                "<select>",
                "<table>",
                "<i>",
                "<b>",
                "</b>",
                "x",
                "<pre>\n",
                "&amp;",
            ]
        ),
        max_size=400,
    ).map("".join)
)
def test_dom_output_stays_within_a_fixed_multiple_of_its_input(html):
    dom = pagelens.Dom.parse(html)
    bound = DOM_GROWTH * len(html.encode()) + DOM_SLACK
    assert len(dom.html().encode()) <= bound
    for profile in ("scribe", "minimal"):
        assert len(dom.clean(profile=profile).html().encode()) <= bound


def test_from_nodes_maps_each_live_node_and_rejects_what_is_not_a_tree():
    nodes = [
        (-1, 1, "html", [], False),
        (0, 1, "head", [], False),
        (0, 1, "body", [], False),
        (2, 1, "p", ["id", "k", "node", "9"], False),
        (3, 3, "a", [], False),
        (3, 1, "B", [], False),
        (5, 3, "b", [], False),
        (2, 1, "i", [], False),
        (7, 3, "c", [], False),
    ]
    dom, ids = pagelens.Dom.from_nodes(nodes)
    assert ids == [5, 4, 3, 2, None, 1, None, 0, None]  # reverse document order, as a parse numbers them
    assert dom.html() == (
        '<html node="5"><head node="4"></head><body node="3">'
        '<p id="k" node="2">a<b node="1">b</b></p><i node="0">c</i></body></html>'
    )
    assert pagelens.Dom.parse(dom.html()).html() == dom.html()
    with pytest.raises(pagelens.ArgumentTypeError):
        pagelens.Dom.from_nodes(42)  # type: ignore[arg-type]
    with pytest.raises(pagelens.ArgumentTypeError):
        pagelens.Dom.from_nodes([(-1, 1, "p")])  # type: ignore[list-item]
    with pytest.raises(pagelens.ArgumentError):
        pagelens.Dom.from_nodes([(-1, 7, "p", [], False)])
    with pytest.raises(pagelens.DomError, match="does not come before"):
        pagelens.Dom.from_nodes([(0, 1, "p", [], False)])
    with pytest.raises(pagelens.DomError, match="not an element"):
        pagelens.Dom.from_nodes([(-1, 3, "t", [], False), (0, 1, "p", [], False)])


# -- the live DOM built node for node (hardening: a page cannot forge, clone or hide an id) --------

TAGS = [
    "p",
    "b",
    "div",
    "a",
    "script",
    "style",
    "plaintext",
    "textarea",
    "title",
    "xmp",
    "noscript",
    "iframe",
    "template",
    "br",
    "img",
    "svg",
    "math",
    "select",
    "option",
    "table",
    "tr",
    "td",
    "form",
    "pre",
    "A",
    "foreignObject",
    "a b",
    "x<y",
    "",
]
ATTRS = ["node", "NODE", "data-pagelens-node", "DATA-PAGELENS-NODE", "id", "href", 'x"y', "on<x", "node "]
NASTY = st.text(alphabet="<>/!-\"'=& anode0123script", max_size=12) | st.sampled_from(
    [
        '</script><a node="0">x</a>',
        "<!--<script>",
        "-->",
        "--!>",
        '</plaintext><b node="1">',
        "<!-->",
        '"><a node="2">',
        "</style>",
        "<![CDATA[",
        "\n",
    ]
)


@st.composite
def live_trees(draw):
    nodes, elements = [], []
    for i in range(draw(st.integers(0, 40))):
        parent = draw(st.sampled_from([-1, *elements])) if elements else -1
        kind = draw(st.sampled_from([1, 1, 1, 3, 3, 8, 10]))
        if kind == 1:
            attrs = [v for _ in range(draw(st.integers(0, 3))) for v in (draw(st.sampled_from(ATTRS)), draw(NASTY))]
            nodes.append((parent, 1, draw(st.sampled_from(TAGS)), attrs, draw(st.booleans())))
            elements.append(i)
        else:
            nodes.append((parent, kind, draw(NASTY), [], False))
    return nodes


@settings(max_examples=int(__import__("os").environ.get("PAGELENS_HYPOTHESIS_EXAMPLES", 100)), deadline=None)
@given(live_trees())
def test_a_reader_of_the_live_markup_finds_each_element_once_and_nothing_the_page_wrote(nodes):
    """Every element built is written once with its own id, and a reader of the markup (the
    chunker, as ScribeAgent's prompts are cut) finds exactly those ids, in document order:
    no text, attribute or comment of the page reads as an element or an id."""
    dom, ids = pagelens.Dom.from_nodes(nodes)
    given_ids = [i for i in ids if i is not None]
    assert sorted(given_ids) == list(range(len(dom)))  # each kept element once
    assert all(ids[k] is None for k, n in enumerate(nodes) if n[1] != 1)
    html = dom.html()
    read = [i for c in pagelens.chunk(html, 10**9, kind="dom") for i in c.node_ids]
    assert read == list(range(len(dom) - 1, -1, -1)), html


# -- page text never forms a tag or a node id in the HTML a model reads -------------------------

RAW_TEXT = ["iframe", "script", "style", "xmp", "noembed", "noframes", "noscript", "textarea", "title"]
FORGED_MARKUP = st.lists(
    st.sampled_from(
        [
            '<a node="0">Cancel</a>',
            "<b node=1>",
            "</iframe>",
            "</script >",
            "<!--",
            "-->",
            "<script>",
            "&lt;",
            "<",
            ">",
            "&",
            '"',
            'node="7"',
            "x",
            " ",
        ]
    ),
    max_size=8,
).map("".join)
_TAG_ID = re.compile(r'<[A-Za-z][^<>]*\snode="(\d+)"')


def ids_in_markup(html: str) -> list[int]:
    """The ids a reader (or a model) of the markup takes from its tags."""
    return [int(m.group(1)) for m in _TAG_ID.finditer(html)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(RAW_TEXT), FORGED_MARKUP), min_size=1, max_size=4), FORGED_MARKUP)
def test_raw_text_and_comments_cannot_form_a_tag(parts, comment):
    """Whatever a raw-text element (an iframe's fallback, a script, a style...) or a comment
    holds, the written markup has no `<` but our tags': the ids read from it are exactly the
    document's, built from a live DOM (node for node) or parsed from source."""
    live = [(-1, 1, "html", [], False), (0, 1, "body", [], False), (1, 8, comment, [], False)]
    for tag, text in parts:
        live.append((1, 1, tag, [], False))
        live.append((len(live) - 1, 3, text, [], False))
        live.append((1, 1, "a", ["href", "/x"], False))
    dom, ids = pagelens.Dom.from_nodes(live)
    html = dom.html()
    assert sorted(ids_in_markup(html)) == sorted(i for i in ids if i is not None), html
    assert html.count("<") == html.count(">")  # every `<` starts one of our tags, comments or doctype
    # Source markup, where the parser reads raw text as text: the same holds.
    source = f"<!--{comment.replace('-->', '')}-->" + "".join(f"<{t}>{x}</{t}><a>y</a>" for t, x in parts)
    parsed = pagelens.Dom.parse(source)
    written = parsed.html()
    assert ids_in_markup(written) == sorted(ids_in_markup(written), reverse=True)  # reverse document order
    assert set(ids_in_markup(written)) == set(parsed.node_ids()), written
