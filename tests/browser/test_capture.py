"""pagelens' own capture (``source="dom"``, run in an isolated world of the page) on real
Chromium: roles and names by WAI-ARIA, HTML-AAM and accname 1.2 (facts written from the specs
and the Web Platform Tests' accname/ and html-aam/ expectations, Chromium's own tree read beside
them), ids that stay with their element, a page that patches everything it can, the cases a
page script cannot read, and agreement with Chromium's tree on local and corpus pages."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings

from pagelens.browser import BrowserEnv
from pagelens.browser.devtools import cdp
from pagelens.browser.frames import fetch_tree
from support.reference import INTERACTIVE, normalize
from support.strategies import dom_fragments

# case -> (role, name, properties that must hold); None: the element is no node of the tree.
FACTS: dict[str, tuple[str, str, dict] | None] = {
    "header-top": ("banner", "", {}),
    "header-in-article": ("sectionheader", "", {}),  # html-aam: header scoped to sectioning content
    "aside-in-article": ("generic", "", {}),  # html-aam: an unnamed aside in an article is no landmark
    "aside-in-article-named": ("complementary", "Related", {}),
    "footer-in-article": ("sectionfooter", "", {}),
    "aside-in-main": ("complementary", "", {}),
    "footer-top": ("contentinfo", "", {}),
    # Scoped by an ancestor in the flat tree (across a shadow root, through a slot) that is a
    # sectioning element under its own role or has a sectioning role; role=region does not scope.
    "header-in-role-region": ("banner", "", {}),
    "header-in-section-generic": ("banner", "", {}),
    "aside-in-section-generic": ("complementary", "", {}),
    "header-in-shadow-article": ("sectionheader", "", {}),
    "header-slotted-into-article": ("sectionheader", "", {}),
    # A thead/tbody/tfoot is a row group when something makes it one (focus, a global aria-*,
    # a click listener); menu and dir are lists.
    "thead-focusable": ("rowgroup", "", {}),
    "tbody-labelled": ("rowgroup", "Prices", {}),
    "tfoot-listened": ("rowgroup", "", {}),
    "dir": ("list", "", {}),
    "li-in-dir": ("listitem", "", {}),
    "labelledby-two": ("button", "Hello World", {}),
    "labelledby-self": ("button", "Delete file.txt", {}),  # accname: a node naming itself lends aria-label
    "labelledby-hidden": ("button", "Secret name", {}),  # hidden but referenced
    "labelledby-chain": ("textbox", "first", {}),  # labelledby is not followed twice
    "hidden-descendant": ("button", "Visible", {}),
    "aria-hidden-descendant": ("link", "Go", {}),
    "label-with-textbox": ("checkbox", "Flash the screen 3 times", {}),  # embedded control: its value
    "label-with-select": ("checkbox", "Show 10 rows", {}),  # embedded select: its chosen option
    "label-with-range": ("checkbox", "Volume 7 level", {}),  # embedded range: its value
    # A label whose words name a shown checkbox or radio, holding nothing else, is no node (as in
    # Chromium: its words are read once, as the control's name); any other label is LabelText.
    "label-of-checkbox": None,
    "label-around-radio": None,
    "radio-in-label": ("radio", "Express", {}),
    "label-with-link": ("LabelText", "", {}),
    "label-of-textbox": ("LabelText", "", {}),
    "label-of-unseen-checkbox": ("LabelText", "", {}),
    "label-not-the-name": ("LabelText", "", {}),
    "named-by-labels-own-label": ("checkbox", "Keep me signed in", {}),  # accname: the label's own name
    "canvas-button": ("button", "Canvas button", {}),  # a canvas' fallback content is read in its place
    "title-only": ("button", "Close", {}),
    "placeholder-only": ("textbox", "Search site", {}),
    "submit-default": ("button", "Submit", {}),
    "reset-default": ("button", "Reset", {}),
    "image-button": ("button", "Send", {}),
    "link-image": ("link", "Logo", {}),
    "link-svg": ("link", "Home icon", {}),
    # Words on either side of an element laid out in a box of its own (CSS display, not its tag:
    # a block span, flex items) are set apart; inline neighbours run together.
    "link-block-span": ("link", "Sleep well Sleep Inc", {}),
    "link-flex": ("link", "One Two", {}),
    "link-inline-spans": ("link", "HelloWorld", {}),  # an svg lends its <title>, though it takes no name from contents
    "img-empty-alt": None,  # alt="": presentational
    "aria-label-link": ("link", "Home page", {}),
    "blocks-in-link": ("link", "Line Two", {}),
    "role-button": ("button", "Press me", {}),
    "css-before": ("button", "Menu", {}),  # pseudo-element content counts
    # An element's own generated content is part of its name from contents, joined without a
    # space (accname 2F.ii): before, after, both; a content's alternative text (after "/") in
    # its place (set apart, as Chromium does); a rule inside @media counts; so does one in a
    # sheet of another origin, which a page script cannot read.
    "pseudo-before": ("button", "beforelabel", {}),
    "pseudo-after": ("link", "labelafter", {}),
    "pseudo-both": ("heading", "beforelabelafter", {"level": 3}),
    "pseudo-alt": ("link", "label alt after", {}),
    "pseudo-in-media": ("link", "Docs (new window)", {}),
    "pseudo-other-origin": ("link", "Far (far)", {}),
    "pseudo-selector-list": ("link", "Listed !", {}),  # the second selector of a list, a descendant one
    "pseudo-escaped-class": ("link", "First one", {}),  # a class written with an escape
    # A string's escapes as CSS reads them: "\a" a line break (white space), "\2192" an arrow.
    "pseudo-escaped-newline": ("link", "Wrap", {}),
    "pseudo-escaped-code-point": ("link", "Next →", {}),
    "pseudo-wordless": ("link", "Clear", {}),  # a clearfix's content: ""
    "pseudo-wordless-overridden": ("link", "Both (words)", {}),  # a rule with words wins the cascade
    "pseudo-attr": ("link", "Attr noted", {}),  # attr(): the attribute's words
    "pseudo-label": ("textbox", "Your name*", {}),  # a label's own generated content
    "pseudo-block": ("button", "New arrivals", {}),  # a pseudo-element in a box of its own is set apart
    "pseudo-inline-block": ("link", "Search beta", {}),
    "pseudo-nested": ("link", "Nest (nested)", {}),  # a nested rule (`& a::after`): its selector is relative
    "pseudo-nested-implicit": ("link", "> Deeper (nested)", {}),  # nested without `&` too
    "uppercase": ("link", "SHOUT", {}),  # the text as shown
    "th-in-thead": ("columnheader", "Name", {}),
    "th-scope-row": ("rowheader", "Ann", {}),
    "td": ("cell", "31", {}),
    "presentation-table": None,
    "fieldset-disabled": ("textbox", "Inside", {"disabled": True}),
    "mixed": ("checkbox", "All", {"checked": "mixed"}),
    "pressed": ("button", "Bold", {"pressed": "true"}),
    "summary-closed": ("DisclosureTriangle", "More", {"expanded": False}),
    "details-content": None,  # closed <details>
    "summary-open": ("DisclosureTriangle", "Less", {"expanded": True}),
    # Accname's recursion: a descendant made visible inside an invisible one is read; a
    # referenced element with no text lends its title, a field naming itself its value.
    "name-visible-in-invisible": ("button", "Shown again", {}),
    "labelledby-title": ("button", "Tooltip name", {}),
    "labelledby-self-field": ("textbox", "Amount 12", {}),
    "td-in-grid": ("gridcell", "Cell of a grid", {}),
    "none-with-global-aria": ("generic", "Still named", {}),  # a global ARIA attribute overrides role=none
    "summary-loose": ("generic", "", {}),  # only a details element's first summary discloses it
    "embedded-combobox": ("checkbox", "Size medium", {}),  # a select-only combobox's choice is its text
    "inert-button": None,
    "visible-in-hidden": ("button", "Shown", {}),
    "in-display-contents": ("button", "Contents", {}),
    "select": ("combobox", "", {}),
    "aria-heading": ("heading", "Level four", {"level": 4}),
    "required": ("textbox", "Must", {"required": True}),
    "readonly": ("textbox", "Fixed", {"readonly": True}),
    "nav": ("navigation", "", {}),
    "section-unnamed": ("generic", "", {}),
    "section-named": ("region", "Named section", {}),
    "li-in-menu": ("generic", "", {}),
    "li-in-list": ("listitem", "", {}),
    "textarea": ("textbox", "Notes", {}),
    # Held-out cases after the WPT's accname/ and html-aam/ suites: a hidden legend or caption
    # names nothing (html-aam#533), the first shown one or the title does; HTML-AAM's groups;
    # Chromium's roles for date and time fields; an input button without a value says its
    # title; aria-labeledby (misspelled) is read, the right spelling winning; a node one part
    # of a name referenced is not read again in it; a slot's aria-label is no word of a name.
    "hidden-legend": ("group", "Shown legend", {}),
    "hidden-caption": ("table", "Table title", {}),
    "address": ("group", "Contact", {}),
    "hgroup": ("group", "", {}),
    "dfn": ("term", "Lexeme", {}),
    "input-date": ("Date", "Start", {}),
    "input-datetime": ("DateTime", "Meet", {}),
    "input-time": ("InputTime", "Wake", {}),
    "input-button-title": ("button", "Tip only", {}),
    "labeledby-misspelled": ("link", "Spelled", {}),
    "labelledby-beats-misspelled": ("link", "Spelled", {}),
    "referenced-once": ("heading", "pic two three", {}),
    "slot-aria-label": ("button", "before slotted after", {}),
    # An image map's areas with an address are links inside the image (no box of their own);
    # an exclusive accordion's summary has Chromium's own role.
    "area-rect": ("link", "West", {}),
    "area-circle": ("link", "East", {}),
    "area-no-href": None,
    "summary-grouped": ("DisclosureTriangleGrouped", "Grouped", {"expanded": False}),
    # A custom element's own semantics through ElementInternals (read by the page-world hook:
    # no other script can); an attribute the element has wins, as in Chromium.
    "internals-button": ("button", "Custom press", {}),
    "internals-checkbox": ("checkbox", "Send news", {}),
    "internals-attribute-wins": ("link", "Attribute says link", {}),
}

_CASE_IDS = """Array.from(document.querySelectorAll('[data-case]'), el => [el.dataset.case, __pagelens.idOf(el)]).concat(
  Array.from(document.querySelectorAll('[data-shadow-cases]'), host => Array.from(
    host.shadowRoot.querySelectorAll('[data-case]'), el => [el.dataset.case, __pagelens.idOf(el)])).flat())"""


def in_capture_world(env: BrowserEnv, expression: str):
    """Evaluates in the capture's isolated world of the main frame (where its registry is)."""

    async def go(aenv):
        session = await aenv.sessions_for(aenv.page).main()
        frame_id = (await cdp(session, "Page.getFrameTree"))["frameTree"]["frame"]["id"]
        context = await aenv._capture.world(session, frame_id, 30)
        reply = await cdp(
            session, "Runtime.evaluate", {"expression": expression, "contextId": context, "returnByValue": True}
        )
        assert "exceptionDetails" not in reply, reply
        return reply["result"]["value"]

    return env.run(go)


def chromium_reading(env: BrowserEnv, case: str) -> tuple[str, str] | None:
    """Chromium's own role and name of a case element (its accessibility tree)."""

    async def go(aenv):
        session = await aenv.sessions_for(aenv.page).main()
        # The whole DOM, open shadow trees included, then the case's element by its attribute.
        doc = await cdp(session, "DOM.getDocument", {"depth": -1, "pierce": True})
        stack, backend = [doc["root"]], None
        while stack and backend is None:
            node = stack.pop()
            attributes = node.get("attributes", [])
            if dict(zip(attributes[::2], attributes[1::2], strict=True)).get("data-case") == case:
                backend = node["backendNodeId"]
            stack.extend(node.get("children", []) + node.get("shadowRoots", []))
        nodes = (
            await cdp(session, "Accessibility.getPartialAXTree", {"backendNodeId": backend, "fetchRelatives": False})
        )["nodes"]
        node = nodes[0] if nodes else None
        if node is None or node.get("ignored"):
            return None
        return node["role"]["value"], normalize(str(node.get("name", {}).get("value", "")))

    return env.run(go)


@pytest.fixture(scope="module")
def names(browser, site):
    browser.config.source = "dom"
    obs = browser.reset(site.url("site/capture-names.html"))
    ids = dict(in_capture_world(browser, _CASE_IDS))
    return obs, ids


@pytest.mark.parametrize("case", sorted(FACTS))
def test_roles_names_and_states_by_the_specs(names, case):
    obs, ids = names
    fact = FACTS[case]
    element_id = ids[case]
    if fact is None:
        assert element_id not in obs.tree or not obs.tree.node(element_id).rendered, case
        return
    role, name, props = fact
    assert element_id in obs.tree, f"{case}: no node"
    node = obs.tree.node(element_id)
    assert (node.role, normalize(node.name)) == (role, name), case
    for key, value in props.items():
        assert node.properties.get(key) == value, (case, node.properties)


def test_chromium_agrees_on_most_facts(browser, names):
    """Chromium's own tree beside the facts: where both read the element, they agree on almost
    every case (a disagreement is listed; the facts come from the specs, not from Chromium)."""
    obs, ids = names
    agree, disagree = 0, []
    for case, fact in FACTS.items():
        if fact is None:
            continue
        theirs = chromium_reading(browser, case)
        if theirs == (fact[0], fact[1]):
            agree += 1
        else:
            disagree.append((case, theirs))
    assert agree >= len([f for f in FACTS.values() if f]) - 3, disagree


def test_a_label_naming_a_checkbox_is_read_once(names):
    """The words of a label that names a checkbox or radio appear once, as its name; a label that
    holds more (a link) or names something else stays, words and all."""
    obs, _ = names
    for once in ("Remember me", "Express"):
        assert len(re.findall(rf"\b{once}\b", obs.text)) == 1, (once, obs.text)
    assert "terms" in obs.text and "City" in obs.text and "Not its name" in obs.text


def test_hidden_text_is_not_read(names):
    obs, _ = names
    for hidden in ("Hidden words", "Inside details", "Inert", "Gone", "Layout table"):
        assert hidden not in obs.text
    assert "Shown details" in obs.text and "Shown" in obs.text
    # Contents never shown: a supported video's fallback, a gauge's words (Chromium reads none).
    for unshown in ("Video fallback words", "Video fallback link", "Progress fallback words", "Meter fallback words"):
        assert unshown not in obs.text
    # Contents not rendered: content-visibility: hidden, hidden="until-found" (Chromium reads none).
    for skipped in ("Until found words", "Skipped contents words", "and more"):
        assert skipped not in obs.text
    assert "Canvas words" in obs.text


# Text as it is shown (white space, case), from every way a style reaches it: a class, a rule
# in @media, @layer, @supports, a nested or descendant or attribute rule, an escaped class, an
# inline style, the user agent's own (listing, xmp), an animation (a rule's, a script's), a
# custom property, a sheet of another origin, a shadow tree's own rules (::slotted, :host, open
# or closed, its own elements'); inherited through elements that have no style of their own,
# undone by a rule nearer the text.
TEXT_STYLES = {
    "class": "DEEP WORDS",
    "media": "media words",
    "nested": "Nested Rule Words",
    "layer": "layered    spaces",
    "inline": "inline    style",
    "listing": "listing    spaces",
    "xmp": "xmp    spaces",
    "descendant": "DESCENDANT RULE WORDS",
    "attribute": "ATTRIBUTE RULE WORDS",
    "escaped-class": "ESCAPED CLASS WORDS",
    "animation": "ANIMATED WORDS",
    "kept-lines": "KEPT\nLINES",
    "undone": "Undone Words",
    "custom-property": "custom    property",
    "script-animation": "SCRIPT ANIMATED WORDS",
    "other-origin-class": "FAR WORDS",
    "other-origin-rule": "far    spaces",
    "slotted": "SLOTTED WORDS",
    "host": "host    spaces",
    "shadow-own": "inner shadow words",
    "closed-host": "Closed Shadow Words",
}


def _static_texts(obs) -> list[str]:
    """The names of an observation's text rows, in order."""
    return [n.name for n in map(obs.tree.node, obs.tree.ids()) if n.role == "StaticText"]


@pytest.fixture(scope="module")
def styled_texts(browser, site):
    """The page's texts read twice: first, and again (whole) once pagelens has read the sheet its
    script cannot (a reading that knows every rule must read no differently)."""
    browser.config.source = "dom"
    first = browser.reset(site.url("site/capture-text-styles.html"))

    async def sheets_read(aenv):
        assert aenv._capture._learning is not None
        await aenv._capture._learning
        await aenv.page.evaluate("document.body.classList.toggle('read-whole')")

    browser.run(sheets_read)
    again = browser.observe()
    return [_static_texts(obs) for obs in (first, again)]


@pytest.mark.parametrize("case", sorted(TEXT_STYLES))
def test_text_is_read_as_it_is_shown(styled_texts, case):
    for texts in styled_texts:
        assert any(TEXT_STYLES[case] in t for t in texts), texts


def test_text_styled_by_a_closed_shadow_root_is_read_as_shown(browser, site):
    """A closed shadow root declared in the HTML is seen by no world but the page's parser, yet
    its `:host` and `::slotted` rules set the case and white space of light-DOM text; on a page
    with no rule of its own (where nothing else would make a reader read styles): read as shown."""
    browser.config.source = "dom"
    for obs in (browser.reset(site.url("site/closed-shadow-text.html")), browser.observe()):
        texts = _static_texts(obs)
        assert "DECLARED HOST WORDS" in texts and "slotted    spaces" in texts and "plain words" in texts, texts


def test_blocks_part_words_and_layout_tables_are_no_tables(names):
    """A block that is no node (hidden by visibility, presentational) still parts the text on
    either side, as in Chromium's tree; a presentational table's cells are no Markdown table."""
    obs, _ = names
    assert "Shown in hidden blockAfter block" not in obs.text and "After block" in obs.text
    assert "| Layout | Cell B |" not in obs.text and "Cell B" in obs.text


def _observed_after(browser, site, script):
    """The capture's observation of a plain local page after ``script`` (a JS function run in
    the page's own world) added the case to it."""
    browser.config.source = "dom"
    browser.reset(site.url("site/second.html"), observe=False)

    async def run(aenv):
        await aenv.page.evaluate(script)

    browser.run(run)
    return browser.observe()


def test_an_icon_fonts_glyph_is_no_word_of_a_name(browser, site):
    """A private-use character an icon font draws (`.icon::before { content: "\\e900" }`) is
    left out of a name: it reads as an escape to a model and says nothing (Chromium keeps it)."""
    obs = _observed_after(
        browser,
        site,
        """() => { const s = document.createElement('style');
           s.textContent = '.glyph::before { content: "\\\\e900"; } .glyph::after { content: " \\\\f101 more"; }';
           document.head.append(s); const a = document.createElement('a'); a.href = '#s';
           a.className = 'glyph'; a.textContent = 'Settings'; document.body.append(a); }""",
    )
    link = next(i for i in obs.ids if obs.tree.node(i).role == "link" and "Settings" in obs.tree.node(i).name)
    assert normalize(obs.tree.node(link).name) == "Settings more", obs.tree.node(link).name


def test_generated_content_from_a_shadow_trees_own_sheet(browser, site):
    """A shadow tree's sheet may give content to elements outside it: its host (`:host::before`)
    and what is slotted into it (`::slotted(a)::after`). Those sheets are not among the
    document's, so such elements are asked whatever the document's sheets say."""
    obs = _observed_after(
        browser,
        site,
        """() => {
          const close = document.createElement('pc-close');
          close.setAttribute('role', 'button');
          close.tabIndex = 0;
          close.attachShadow({ mode: 'open' }).innerHTML =
            '<style>:host::before { content: "Close"; }</style><slot></slot>';
          const pager = document.createElement('pc-pager');
          pager.innerHTML = '<a href="#n">Next</a>';
          pager.attachShadow({ mode: 'open' }).innerHTML =
            '<style>::slotted(a)::after { content: " page"; }</style><slot></slot>';
          document.body.append(close, pager);
        }""",
    )
    names = {(obs.tree.node(i).role, normalize(obs.tree.node(i).name)) for i in obs.ids}
    assert ("button", "Close") in names, names
    assert ("link", "Next page") in names, names


def test_a_descendants_title_names_what_has_no_text(browser, site):
    """Name from contents computes each descendant's text alternative from step 2 on, so a
    descendant that gives no text gives its title (accname 2I): an icon link `<a><i title=
    "Twitter"></i></a>` is "Twitter". Chromium leaves it unnamed (its mistake per the spec, noted
    in benches/README.md); a descendant with text gives its text, not its title."""
    obs = _observed_after(
        browser,
        site,
        """() => document.body.insertAdjacentHTML('beforeend',
             '<a href="#t"><i class="icon" title="Twitter"></i></a>' +
             '<a href="#r"><abbr title="Really Simple Syndication">RSS</abbr></a>' +
             '<button><span title="Close"><span></span></span> dialog</button>')""",
    )
    names = {(obs.tree.node(i).role, normalize(obs.tree.node(i).name)) for i in obs.ids}
    assert {("link", "Twitter"), ("link", "RSS"), ("button", "Close dialog")} <= names, names


def test_a_tables_spanning_cells_keep_its_columns_aligned(browser, site):
    """The capture says which cells span columns or rows (colspan, rowspan), and the Markdown
    table leaves the cells they cover empty: a total under its column, not under the one before."""
    obs = _observed_after(
        browser,
        site,
        """() => document.body.insertAdjacentHTML('beforeend',
             '<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>' +
             '<tr><td rowspan="2">Pens</td><td>2</td><td>$4</td></tr><tr><td>1</td><td>$3</td></tr>' +
             '<tr><td colspan="2">Total</td><td>$7</td></tr></table>')""",
    )
    lines = [line.strip() for line in obs.text.splitlines()]
    start = lines.index("| Item | Qty | Price |")
    assert lines[start : start + 5] == [
        "| Item | Qty | Price |",
        "| --- | --- | --- |",
        "| Pens | 2 | $4 |",
        "|  | 1 | $3 |",
        "| Total |  | $7 |",
    ]


def test_a_password_is_read_as_its_dots(names):
    """A password field's value is its dots, as in Chromium's tree: the secret a login typed
    (or a saved state filled) never reaches what a model reads."""
    obs, ids = names
    assert obs.tree.node(ids["password"]).value == "\u2022" * 7
    assert "hunter2" not in obs.text


def test_an_unnamed_link_has_a_hint_from_its_dom(names):
    """A link around an image without alt has no name; the capture gives it the hint its DOM
    offers (the image's file name), as the AX source does from Chromium's DOM snapshot."""
    obs, ids = names
    node = obs.tree.node(ids["unnamed-image-link"])
    assert (node.role, node.name, node.hint) == ("link", "", "cart-icon")
    assert "hint: 'cart-icon'" in obs.text


def test_a_colour_and_a_file_input_say_their_value(names):
    obs, ids = names
    assert obs.tree.node(ids["color"]).value == "#ff0000"
    assert obs.tree.node(ids["file"]).value == "No file chosen"  # Chromium's words


def test_ids_stay_with_their_element_and_new_ones_are_marked(browser, site):
    browser.config.source = "dom"
    first = browser.reset(site.url("site/menu.html"))
    before = {first.tree.node(i).name: i for i in first.ids}
    step = browser.step(f"click [{next(i for n, i in before.items() if 'Menu' in n or 'menu' in n.lower())}]")
    assert step.ok, step.error
    after = step.observation
    for name, element_id in before.items():
        if element_id in after.tree:
            assert after.tree.node(element_id).name == name  # the same element, the same id
    new = re.findall(r"\*\[(\d+)\]", after.text)
    assert new and all(int(i) not in before.values() for i in new)


HOSTILE = """
<title>Hostile</title>
<script>
  // Everything a page could patch to steer a script that reads it from the page's own world.
  const lie = () => "forged";
  Element.prototype.getAttribute = function () { return "forged"; };
  Element.prototype.hasAttribute = () => true;
  Element.prototype.checkVisibility = () => false;
  Object.defineProperty(Node.prototype, "childNodes", { get() { return []; } });
  Object.defineProperty(Node.prototype, "textContent", { get: lie });
  Object.defineProperty(Text.prototype, "data", { get: lie });
  Object.defineProperty(Element.prototype, "localName", { get: lie });
  window.getComputedStyle = () => ({ display: "none", visibility: "hidden" });
  window.WeakMap = function () { throw new Error("no"); };
  window.Map = function () { throw new Error("no"); };
  Array.prototype.push = function () { throw new Error("no"); };
  JSON.stringify = lie;
  Array.prototype[Symbol.iterator] = function* () { yield "forged"; };
  Object.defineProperty(globalThis, "__pagelens", { value: { capture: lie } });
</script>
"""

PLAIN = """<h1>Real heading</h1><p>Body text <a href="#x">a link</a></p><button>Act</button>
<input aria-label="Field" value="typed"><select><option>A</option><option selected>B</option></select>
<int-press>Custom press</int-press> <div id="card">A card</div>
<script>customElements.get("int-press") || customElements.define("int-press", class extends HTMLElement {
  constructor() { super(); const i = this.attachInternals(); i.role = "button"; i.ariaPressed = "true"; }
});
document.getElementById("card").addEventListener("click", () => {});</script>"""


def test_a_page_that_patches_everything_reads_the_same(browser, site):
    browser.config.source = "dom"

    async def load(aenv, html):
        await aenv.page.set_content(html)

    browser.reset(site.url("site/second.html"), observe=False)
    browser.run(lambda aenv: load(aenv, "<title>Hostile</title>" + PLAIN))
    honest = browser.observe()
    browser.run(lambda aenv: load(aenv, HOSTILE + PLAIN))
    hostile = browser.observe()
    assert hostile.notes == []  # read by the capture, no fallback
    # (The same document, rewritten: what the second read shows is new to it, hence marks.)
    assert re.sub(r"\*?\[\d+\]", "[]", hostile.text) == re.sub(r"\*?\[\d+\]", "[]", honest.text)
    assert "forged" not in hostile.text and "Real heading" in hostile.text
    # Written with document.open() (set_content), which erases the document's listeners: the
    # page-world hook listens again, so what it notes (ElementInternals, click listeners) is told.
    assert re.search(r"button \*?\[\d+\] 'Custom press' \[pressed: true\]", hostile.text), hostile.text
    assert re.search(r"clickable \*?\[\d+\] 'A card'", hostile.text), hostile.text


def test_a_page_that_removes_the_hook_only_hides_its_own_clickables(browser, site):
    browser.config.source = "dom"
    obs = browser.reset(site.url("site/clickable.html"))
    with_hook = len(obs.tree.clickable_ids)

    async def unhook(aenv):
        # A fresh addEventListener from a new frame, and new listeners through it.
        await aenv.page.evaluate(
            """() => { const f = document.createElement('iframe'); document.body.append(f);
               const add = f.contentWindow.EventTarget.prototype.addEventListener;
               EventTarget.prototype.addEventListener = add;
               const d = document.createElement('div'); d.textContent = 'Late clickable';
               document.body.append(d); d.addEventListener('click', () => {}); f.remove(); }"""
        )

    browser.run(unhook)
    after = browser.observe()
    assert "Late clickable" in after.text  # still read; only not marked clickable
    assert len(after.tree.clickable_ids) >= with_hook  # the others keep theirs


def test_a_closed_shadow_root_falls_back_to_chromiums_tree(browser, site):
    browser.config.source = "dom"
    browser.reset(site.url("site/second.html"), observe=False)

    async def closed(aenv):
        await aenv.page.evaluate(
            """() => { const host = document.createElement('div'); document.body.append(host);
               const root = host.attachShadow({mode: 'closed'});
               root.innerHTML = '<button>Inside closed root</button>'; }"""
        )

    browser.run(closed)
    obs = browser.observe()
    assert "Inside closed root" in obs.text
    assert any("closed shadow roots" in n for n in obs.notes), obs.notes


async def _accessibility_work(aenv, frames) -> int:
    """Chromium's accessibility work while each of ``frames`` changes and renders a frame: the
    trace events of its "accessibility" category, which only a renderer whose accessibility is
    on makes (every frame of such a page updates Chromium's tree as well)."""
    chromium = aenv.context.browser
    await chromium.start_tracing(categories=["accessibility"])
    try:
        for frame in frames:
            await frame.evaluate(
                """() => new Promise((done) => { document.body.append(document.createElement('p'));
                   requestAnimationFrame(() => setTimeout(done)); })"""
            )
    finally:
        trace = await chromium.stop_tracing()
    return sum(e.get("cat") == "accessibility" for e in json.loads(trace)["traceEvents"])


def test_a_reading_of_chromiums_tree_in_its_stead_leaves_its_accessibility_off(browser, site):
    """The AX tree read where the capture cannot (a closed shadow root) turns Chromium's
    accessibility off again after it, so the page's later rendering frames do not update
    Chromium's tree; a reading that keeps it on (the AX source's) shows the work measured."""
    browser.config.source = "dom"
    browser.reset(site.url("site/second.html"), observe=False)

    async def closed(aenv):
        await aenv.page.evaluate(
            """() => { const host = document.createElement('div'); document.body.append(host);
               host.attachShadow({mode: 'closed'}).innerHTML = '<button>Inside closed root</button>'; }"""
        )

    browser.run(closed)
    obs = browser.observe()
    assert any("closed shadow roots" in n for n in obs.notes), obs.notes
    assert browser.run(lambda aenv: _accessibility_work(aenv, [aenv.page])) == 0

    async def kept_on(aenv):
        await fetch_tree(aenv.sessions_for(aenv.page), include_frames=False, clickables=False)
        return await _accessibility_work(aenv, [aenv.page])

    assert browser.run(kept_on) > 0


def test_open_shadow_roots_and_slots_are_read(browser, site):
    browser.config.source = "dom"
    browser.reset(site.url("site/second.html"), observe=False)

    async def shadow(aenv):
        await aenv.page.evaluate(
            """() => { const host = document.createElement('div'); host.innerHTML = '<span slot=s>Slotted text</span>';
               document.body.append(host);
               const root = host.attachShadow({mode: 'open'});
               root.innerHTML = '<button>Shadow button</button><slot name=s></slot>'; }"""
        )

    browser.run(shadow)
    obs = browser.observe()
    assert re.search(r"button \[\d+\] 'Shadow button'", obs.text) and "Slotted text" in obs.text
    assert obs.notes == []


def test_deep_and_huge_pages_never_stall_or_crash(browser, site):
    browser.config.source = "dom"
    browser.reset(site.url("site/second.html"), observe=False)

    async def build(aenv):
        await aenv.page.evaluate(
            """() => { let el = document.body;
               // 5,000 levels (display: contents, so that Chromium's own layout, which a block
               // this deep crashes, has no boxes for them; the DOM is as deep).
               for (let i = 0; i < 5000; i++) { const d = document.createElement('div'); d.style.display = 'contents'; el.append(d); el = d; }
               el.textContent = 'Bottom of the well';
               const list = document.createElement('ul');
               for (let i = 0; i < 20000; i++) { const li = document.createElement('li'); li.textContent = 'row ' + i; list.append(li); }
               document.body.append(list);
               const odd = document.createElement('p'); odd.textContent = 'odd \\ud800 text \\ufeff end'; document.body.append(odd); }"""
        )

    browser.run(build)
    obs = browser.observe()
    assert obs.notes == [] or all("accessibility tree" not in n for n in obs.notes)
    assert "row 19999" in obs.text and "Bottom of the well" in obs.text
    assert "odd \ufffd text" in obs.text


def test_an_unknown_reader_is_refused_not_read_as_chromiums_tree():
    """Any source but "dom" used to read Chromium's tree without a word (the CLI passed its URL
    there): a config names one of the two readers, given whole or as an override."""
    import threading

    from pagelens import ArgumentError
    from pagelens.browser import BrowserConfig, BrowserEnv

    threads = threading.active_count()
    with pytest.raises(ArgumentError, match="source is 'dom' or 'ax', not 'AX'"):
        BrowserEnv(source="AX")
    with pytest.raises(ArgumentError, match="not 'http://x/'"):
        BrowserConfig(source="http://x/")  # type: ignore[arg-type]
    assert threading.active_count() == threads  # a refused config starts no browser thread


def test_the_ax_source_stays_selectable(browser, site):
    browser.config.source = "ax"
    try:
        obs = browser.reset(site.url("site/clickable.html"))
        assert "snapshot" in obs.timings_ms and "capture" not in obs.timings_ms
        assert re.search(r"clickable \[\d+\] 'Open the panel'", obs.text)
    finally:
        browser.config.source = "dom"


# Chromium's own controls inside a field or a player (a date field's spin buttons and picker
# button, a video's play button): its user-agent shadow DOM, not the page's elements; an agent
# acts on the field itself.
_BROWSER_CONTROLS = {"Date", "DateTime", "InputTime", "Video", "Audio"}


def _actionables(tree):
    out = []
    for i in tree.ids():
        node = tree.node(i)
        if node.role in INTERACTIVE and not node.ignored and node.backend_dom_node_id is not None:
            up = node.parent
            while up is not None and tree.node(up).role not in _BROWSER_CONTROLS:
                up = tree.node(up).parent
            if up is None:
                out.append(node)
    return out


@pytest.mark.parametrize(
    "path",
    [
        "site/form.html",
        "site/clickable.html",
        "site/menu.html",
        "site/capture-names.html",
        "corpus/ars-1/",
        "corpus/wikipedia-2/",
    ],
)
def test_roles_and_names_agree_with_chromium_on_actionables(browser, site, path):
    """Every actionable element of Chromium's tree is in the capture, with Chromium's role and
    name (whitespace normalised), on local and corpus pages."""
    browser.config.source = "dom"
    obs = browser.reset(site.url(path))

    async def chromium(aenv):
        return await fetch_tree(aenv.sessions_for(aenv.page), include_frames=False, clickables=False)

    ax = browser.run(chromium).tree
    actionable = _actionables(ax)
    backend = [n.backend_dom_node_id for n in actionable]
    mapping = {}

    async def registry(aenv):
        session = await aenv.sessions_for(aenv.page).main()
        frame_id = (await cdp(session, "Page.getFrameTree"))["frameTree"]["frame"]["id"]
        context = await aenv._capture.world(session, frame_id, 30)

        async def id_of(b):
            obj = await cdp(session, "DOM.resolveNode", {"backendNodeId": b, "executionContextId": context})
            reply = await cdp(
                session,
                "Runtime.callFunctionOn",
                {
                    "objectId": obj["object"]["objectId"],
                    "functionDeclaration": "function(){return __pagelens.idOf(this)}",
                    "returnByValue": True,
                },
            )
            return b, reply["result"]["value"]

        # Asked 200 at a time, not one round trip after another (wikipedia-2: 66 s in the suite).
        for start in range(0, len(backend), 200):
            mapping.update(await asyncio.gather(*(id_of(b) for b in backend[start : start + 200])))

    browser.run(registry)
    wrong = []
    for node in actionable:
        mine = mapping.get(node.backend_dom_node_id)
        if mine not in obs.tree:
            wrong.append(("missing", node.role, node.name))
            continue
        ours = obs.tree.node(mine)
        if ours.role != node.role or normalize(ours.name) != normalize(node.name):
            wrong.append((node.role, node.name, ours.role, ours.name))
    assert len(wrong) <= len(actionable) // 100, wrong


def test_no_id_ever_names_two_elements_across_documents(browser, site):
    """A new document's registry starts above every id given so far: an id the agent kept
    from the page before is unknown on the new one (refused), never another element."""
    browser.config.source = "dom"
    first = browser.reset(site.url("site/second.html"))
    link = next(i for i in first.ids if first.tree.node(i).role == "link")
    moved = browser.step(f"click [{link}]")
    assert moved.ok and moved.observation.url != first.url
    assert not set(first.tree.ids()) & set(moved.observation.tree.ids())
    stale = browser.step(f"click [{link}]")
    assert not stale.ok and f"[{link}]" in stale.error


def test_a_frame_the_capture_cannot_read_is_read_from_chromiums_tree(browser, site, monkeypatch):
    """A frame of another origin whose own pass fails (no world, an error) is read from
    Chromium's tree for that frame alone, said in the notes, and its elements act; no renderer
    is left with Chromium's accessibility on after that reading."""
    from pagelens.browser.capture import InPageCapture

    walk = InPageCapture.walk

    async def failing_in_frames(self, sessions, record, *args, **kwargs):
        if record.parent_id is not None:
            raise RuntimeError("no world in this frame")
        return await walk(self, sessions, record, *args, **kwargs)

    monkeypatch.setattr(InPageCapture, "walk", failing_in_frames)
    browser.config.source = "dom"
    obs = browser.reset(site.url("site/frames.html"))
    assert "Text inside the cross-site frame" in obs.text and "Child button" in obs.text
    assert any("read from Chromium's accessibility tree" in n and "no world" in n for n in obs.notes), obs.notes
    assert browser.run(lambda aenv: _accessibility_work(aenv, aenv.page.frames)) == 0
    cross = next(i for i in obs.ids if obs.tree.node(i).name == "Cross button")
    clicked = browser.step(f"click [{cross}]")
    assert clicked.ok, clicked.error
    assert "cross clicked" in clicked.observation.text


def _read_by_both(browser, site, body: str):
    """``body`` as a page, read by pagelens' capture and by Chromium's tree: (ours, theirs)."""
    browser.reset(site.url("site/second.html"), observe=False)

    async def load(aenv):
        await aenv.page.set_content(f"<title>Generated</title><body>{body}</body>")

    browser.run(load)
    browser.config.source = "ax"
    try:
        theirs = browser.observe()
    finally:
        browser.config.source = "dom"
    return browser.observe(), theirs


# Inert words in names, as Chromium 156 reads them (each checked against its tree below): none
# of an inert subtree count, by contents or by reference (its alternative texts neither), but a
# referenced node's own aria-label, alt, value and title do, and so do an inert label's words;
# a part with no box is read as a hidden one (Chromium's inertness lives in the layout).
INERT_NAMES = [
    # Found by the generated DOMs below: ids written twice, the first one inert.
    (
        '<div><div inert><span id="l-2">alpha</span><button aria-labelledby="l-2">x</button></div>'
        '<div><span id="l-2">alpha</span><button aria-labelledby="l-2">x</button></div></div>',
        [("button", "x")],
    ),
    ("<div inert><span id=a>alpha</span></div><button aria-labelledby=a>x</button>", [("button", "x")]),
    ("<span inert id=a>alpha</span><button aria-labelledby=a>x</button>", [("button", "x")]),
    (
        '<div inert><span id=a>alpha</span></div><button aria-labelledby="a b">x</button><span id=b>beta</span>',
        [("button", "beta")],
    ),
    ("<div inert><span id=a>alpha</span></div><input aria-labelledby=a>", [("textbox", "")]),
    ("<span id=a>alpha <span inert>gone</span></span><button aria-labelledby=a>x</button>", [("button", "alpha")]),
    ("<button>x <span inert>gone</span></button>", [("button", "x")]),
    ("<button>x <span inert aria-label=L>gone</span></button>", [("button", "x")]),
    ("<button>x <img inert alt=pic></button>", [("button", "x")]),
    (
        "<div inert><span id=a><b aria-label=L>alpha</b></span></div><button aria-labelledby=a>x</button>",
        [("button", "x")],
    ),
    (
        '<div inert><span id=a aria-label="lab">alpha</span></div><button aria-labelledby=a>x</button>',
        [("button", "lab")],
    ),
    ("<div inert><span id=a title=T>alpha</span></div><button aria-labelledby=a>x</button>", [("button", "T")]),
    ("<div inert><img id=a alt=pic></div><button aria-labelledby=a>x</button>", [("button", "pic")]),
    ("<div inert><input id=a value=val></div><button aria-labelledby=a>x</button>", [("button", "val")]),
    (
        "<div inert><span id=a>alpha<span hidden>h</span></span></div><button aria-labelledby=a>x</button>",
        [("button", "h")],
    ),
    ("<div inert><label for=i>Name</label></div><input id=i>", [("textbox", "Name")]),
    # An inert subtree inside a shadow tree (the light tree has none), and one shadow tree in.
    (
        '<div><template shadowrootmode="open"><button>x <span inert>gone</span></button></template></div>',
        [("button", "x")],
    ),
    (
        '<div><template shadowrootmode="open"><div inert><span id=a>alpha</span></div>'
        "<button aria-labelledby=a>x</button></template></div>",
        [("button", "x")],
    ),
    (
        '<div><template shadowrootmode="open"><button>x <span><template shadowrootmode="open">'
        "<b inert>gone</b> y</template></span></button></template></div>",
        [("button", "x y")],
    ),
    # A shadow tree's top-level text and a slotted text count below an inert element, an element
    # there does not.
    (
        '<div><template shadowrootmode="open"><button>x <span inert><span><template shadowrootmode="open">'
        "kept</template></span></span></button></template></div>",
        [("button", "x kept")],
    ),
    ('<button>x <span inert><template shadowrootmode="open">kept</template></span></button>', [("button", "x kept")]),
    (
        '<button>x <span inert><span><template shadowrootmode="open"><b>gone</b> kept</template>'
        "unslotted</span></span></button>",
        [("button", "x kept")],
    ),
    (
        '<button>x <span inert><span><template shadowrootmode="open"><slot></slot></template>kept'
        "<b>gone</b></span></span></button>",
        [("button", "x kept")],
    ),
    (
        '<button>x <span><template shadowrootmode="open"><i inert><slot></slot></i></template>kept</span></button>',
        [("button", "x kept")],
    ),
]


@pytest.mark.parametrize(("body", "names"), INERT_NAMES)
def test_inert_words_are_no_part_of_a_name(browser, site, body, names):
    ours, theirs = _read_by_both(browser, site, body)
    for obs in (ours, theirs):
        assert sorted((obs.tree.node(i).role, normalize(obs.tree.node(i).name)) for i in obs.ids) == names, obs.text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=dom_fragments())
def test_generated_doms_read_alike_through_both_sources(browser, site, body):
    """Generated DOMs (nesting, hidden parts, labels, lists, tables, details, shadow roots):
    the capture reads them without a fallback, prints every id once, and gives every action
    target of Chromium's tree an id with Chromium's role and name."""
    ours, theirs = _read_by_both(browser, site, body)
    assert ours.notes == [], ours.notes
    printed = [int(i) for i in re.findall(r"(?<!\\)\[(\d+)\]", ours.text)]
    assert len(printed) == len(set(printed)) and set(printed) <= set(ours.tree.ids())
    mine = sorted((ours.tree.node(i).role, normalize(ours.tree.node(i).name)) for i in ours.ids)
    chromium = sorted((theirs.tree.node(i).role, normalize(theirs.tree.node(i).name)) for i in theirs.ids)
    assert mine == chromium, (body, ours.text, theirs.text)


def test_clickables_reported_once_count_at_every_later_observation(browser, site):
    """The hook tells the capture of each element once it is in the document, and the capture
    keeps it: an element given a listener after the first observation, and one given a listener
    before it was inserted, are clickable at the next observation and every one after."""
    browser.config.source = "dom"
    first = browser.reset(site.url("site/second.html"))
    before = len(first.tree.clickable_ids)

    async def add(aenv):
        await aenv.page.evaluate(
            """() => { const a = document.createElement('div'); a.textContent = 'Late listener';
               document.body.append(a); a.addEventListener('click', () => {});
               const b = document.createElement('div'); b.textContent = 'Listener before insert';
               b.addEventListener('click', () => {}); window.__later = b; }"""
        )

    browser.run(add)
    second = browser.observe()
    assert re.search(r"clickable \*?\[\d+\] 'Late listener'", second.text), second.text
    assert "Listener before insert" not in second.text

    async def insert(aenv):
        await aenv.page.evaluate("() => document.body.append(window.__later)")

    browser.run(insert)
    for _ in range(2):  # told once, kept after
        obs = browser.observe()
        assert re.search(r"clickable \*?\[\d+\] 'Late listener'", obs.text)
        assert re.search(r"clickable \*?\[\d+\] 'Listener before insert'", obs.text)
        assert len(obs.tree.clickable_ids) == before + 2


def test_an_action_reuses_pagelens_world_and_a_stale_context_runs_nothing(browser, site, monkeypatch):
    # An action's registry calls (resolve, point, the quiet window) use the world's context kept
    # from the observation: no Page.createIsolatedWorld round trip each. A kept id that names
    # another context (as after a cross-process navigation) must run nothing there.
    from pagelens.browser import capture as capture_module

    browser.config.source = "dom"
    first = browser.reset(site.url("site/menu.html"))
    target = next(i for i in first.ids if first.tree.node(i).name == "Open menu")
    worlds: list[str] = []
    real_cdp = capture_module.cdp

    async def counted(session, method, params=None, timeout=60.0):
        if method == "Page.createIsolatedWorld":
            worlds.append(params["worldName"])
        return await real_cdp(session, method, params, timeout)

    monkeypatch.setattr(capture_module, "cdp", counted)
    step = browser.step(f"click [{target}]")
    assert step.ok, step.error
    assert "Rename" in step.observation.text  # the menu opened: the click landed
    assert worlds == []

    async def plant(aenv):
        # Another world of the same frame with a lookalike capture that would steer the click.
        session, frame_id = await aenv._main_frame(aenv.page)
        made = await real_cdp(session, "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": "impostor"})
        other = made["executionContextId"]
        lure = (
            "globalThis.__pagelens = new Proxy({}, { get: () => () => "
            "{ document.title = 'steered'; return document.querySelector('a'); } })"
        )
        await real_cdp(session, "Runtime.evaluate", {"expression": lure, "contextId": other})
        for key in list(aenv._capture._contexts):
            aenv._capture._contexts[key] = other

    second = browser.observe()
    more = next(i for i in second.ids if second.tree.node(i).name == "More actions")
    browser.run(plant)
    step = browser.step(f"click [{more}]")
    assert step.ok, step.error
    assert "Archive" in step.observation.text  # the right element was clicked
    title = browser.run(lambda aenv: aenv.page.title())
    assert title == "Menu and dialog"


def test_an_areas_box_is_its_shape_on_the_image_that_uses_its_map(browser, site):
    """Outlines on a screenshot and clicks use an area's shape on its image (it has no box)."""
    browser.config.source = "dom"
    browser.reset(site.url("site/capture-names.html"))
    image, west, east = in_capture_world(
        browser,
        """(() => {
          const img = document.querySelector('img[usemap="#cn-map"]');
          const r = img.getBoundingClientRect();
          const id = (c) => __pagelens.idOf(document.querySelector(`[data-case="${c}"]`));
          const box = (c) => __pagelens.boxes([id(c)])[0].slice(1);
          return [[r.x, r.y], box("area-rect"), box("area-circle")];
        })()""",
    )
    x, y = image
    assert west == [x, y, 20, 20]  # rect 0,0,20,20
    assert east == [x + 22, y + 2, 16, 16]  # circle 30,10 radius 8


def test_a_custom_elements_internals_states_are_read_afresh_after_an_action(browser, site):
    """What ElementInternals say is told at every pass: a custom checkbox ticked off by a click
    reads unchecked in the observation after it, as in Chromium's tree."""
    browser.config.source = "dom"
    obs = browser.reset(site.url("site/capture-names.html"))
    found = re.search(r"checkbox \[(\d+)\] 'Send news' \[checked: true\]", obs.text)
    assert found, obs.text
    result = browser.step(f"click [{found.group(1)}]")
    assert result.ok, result.error
    assert f"checkbox [{found.group(1)}] 'Send news' [checked: false]" in result.observation.text


def test_a_modal_dialog_leaves_the_rest_of_its_document_out(browser, site):
    """What a modal dialog makes inert is no node (Chromium's tree leaves it out too, and it
    cannot be clicked): only the dialog is read, wherever it sits (in light DOM slotted into a
    shadow tree as well); a dialog shown without being modal leaves the page as it is."""
    behind = ("Behind the dialog", "Text behind", "a link behind", "Open plain", "Slotted behind", "Shadow behind",
              "Frame behind", "After everything")  # fmt: skip

    def page_evaluate(expression):
        async def go(aenv):
            await aenv.page.evaluate(expression)

        browser.run(go)

    browser.config.source = "dom"
    obs = browser.reset(site.url("site/modal.html"))
    assert all(text in obs.text for text in behind), obs.text
    page_evaluate("document.getElementById('nonmodal').show()")
    obs = browser.observe()
    assert all(text in obs.text for text in behind) and "Inside the non-modal dialog" in obs.text, obs.text
    for dialog, inside in (("plain", "Inside the plain dialog"), ("slotted", "Inside the slotted dialog")):
        page_evaluate(f"document.getElementById('nonmodal').close(); document.getElementById('{dialog}').showModal()")
        for source in ("dom", "ax"):
            browser.config.source = source
            obs = browser.observe()
            assert inside in obs.text, (source, obs.text)
            assert not [text for text in behind if text in obs.text], (source, obs.text)
            assert "Inside the non-modal dialog" not in obs.text
        browser.config.source = "dom"
        page_evaluate(f"document.getElementById('{dialog}').close()")
    obs = browser.observe()
    assert all(text in obs.text for text in behind), obs.text


def test_an_editor_is_one_target_whose_words_are_its_value(browser, site):
    """A contenteditable element (a rich-text box, a chat composer) is a place to type: its
    host has an id and its text as its value, as Chromium gives it (a generic with a value,
    clickable in its DOM snapshot), its words read once and no name made of them; what is
    typed into it is its value at the next observation. Both sources read it alike."""
    script = """() => {
      const add = (html) => document.body.insertAdjacentHTML('beforeend', html);
      add('<div contenteditable id=rich><p>First para</p><p>Second <b>bold</b></p></div>');
      add('<div contenteditable="plaintext-only" id=plain>Plain words</div>');
      add('<div contenteditable id=mixed><span contenteditable=false>Fixed chip</span> tail words</div>');
      add('<div contenteditable=false>Not an editor</div>');
      // A rich-text editor in a frame of its own (TinyMCE's, CKEditor's): its body is the host.
      add('<iframe srcdoc="<body contenteditable><p>Framed body</p></body>"></iframe>');
      return new Promise((done) => document.querySelector('iframe').addEventListener('load', done));
    }"""
    for source in ("dom", "ax"):
        obs = _observed_after(browser, site, script)
        if source == "ax":
            browser.config.source = "ax"
            obs = browser.observe()
        try:
            hosts = {}
            for i in obs.ids:
                node = obs.tree.node(i)
                value = str(node.value or "")
                for key, words in (
                    ("rich", "First para"),
                    ("plain", "Plain words"),
                    ("mixed", "tail words"),
                    ("framed", "Framed body"),
                ):
                    if words in value:
                        hosts[key] = i
            assert set(hosts) == {"rich", "plain", "mixed", "framed"}, (source, obs.text)
            for key, i in hosts.items():
                assert normalize(obs.tree.node(i).name) == "", (source, key, obs.text)
            assert normalize(str(obs.tree.node(hosts["mixed"]).value)) == "Fixed chip tail words"
            for words in ("First para", "Plain words", "tail words", "Framed body"):
                assert obs.text.count(words) == 1, (source, words, obs.text)
            assert re.search(rf"clickable \[{hosts['plain']}\] value: 'Plain words'", obs.text), (source, obs.text)
            assert "Not an editor" in obs.text
            step = browser.step(f"type [{hosts['plain']}] [Typed here]")
            assert step.ok, step.error
            assert f"clickable [{hosts['plain']}] value: 'Typed here'" in step.observation.text, step.observation.text
            step = browser.step(f"type [{hosts['framed']}] [Typed in the frame]")
            assert step.ok, step.error
            assert f"clickable [{hosts['framed']}] value: 'Typed in the frame'" in step.observation.text
        finally:
            browser.config.source = "dom"


def test_a_label_standing_in_for_a_control_not_shown_is_a_target_with_its_state(browser, site):
    """Switches and option pills drawn by CSS over a hidden checkbox or radio (`display: none`,
    `hidden`, `visibility: hidden`): the label is what a person clicks. It is a target with
    the control's state (Chromium's DOM snapshot marks such a label clickable, so the AX
    source gives it an id too); a click on it sets the control, and the next observation says
    so. A label of a control that is shown stays words, the control the target."""
    script = """() => document.body.insertAdjacentHTML('beforeend', `
      <input type=checkbox id=sw1 style="display:none"><label for=sw1>Notifications</label>
      <input type=radio name=size id=s1 hidden><label for=s1>Small size</label>
      <input type=radio name=size id=s2 hidden checked><label for=s2>Large size</label>
      <label for=sw2>Subscribe</label><input type=checkbox id=sw2 style="visibility:hidden">
      <input type=checkbox id=sw3 hidden disabled><label for=sw3>Locked</label>
      <label for=shown>Shown box</label><input type=checkbox id=shown>`)"""
    for source in ("dom", "ax"):
        obs = _observed_after(browser, site, script)
        browser.config.source = source
        try:
            obs = browser.observe()
            # A disabled control's label: Chromium's snapshot leaves it unmarked; pagelens' capture
            # shows it as a target that says it is disabled (as a disabled button is).
            words_of_targets = ("Notifications", "Small size", "Large size", "Subscribe")
            for words in (*words_of_targets, "Locked") if source == "dom" else words_of_targets:
                assert re.search(rf"LabelText \[\d+\] '{words}'", obs.text), (source, words, obs.text)
            assert not re.search(r"LabelText \[\d+\] 'Shown box'", obs.text) or source == "ax", obs.text
            assert re.search(r"checkbox \[\d+\] 'Shown box'", obs.text), obs.text
            if source == "dom":
                assert "'Notifications' [checked: false]" in obs.text and "'Large size' [checked: true]" in obs.text
                assert re.search(r"'Locked' \[checked: false\] \[disabled\]|'Locked'.*disabled", obs.text), obs.text
            for words in ("Notifications", "Small size"):
                label = int(re.search(rf"LabelText \[(\d+)\] '{words}'", obs.text).group(1))
                step = browser.step(f"click [{label}]")
                assert step.ok, step.error
                obs = step.observation
            checked = _in_page(browser, "[sw1.checked, s1.checked, s2.checked].join()")
            assert checked == "true,true,false", (source, checked)
            if source == "dom":
                assert "'Notifications' [checked: true]" in obs.text and "'Small size' [checked: true]" in obs.text
                assert "'Large size' [checked: false]" in obs.text, obs.text
        finally:
            browser.config.source = "dom"


def _in_page(browser, expression):
    async def run(aenv):
        return await aenv.page.evaluate(expression)

    return browser.run(run)


@pytest.mark.parametrize("origin", ["same", "other"])
def test_what_a_page_points_at_under_a_delegated_listener_is_a_target(browser, site, origin):
    """React and Vue listen for clicks on a root far above what they make clickable, so no
    element of a card list carries a listener (Chromium's snapshot marks the root alone). The
    page's own mark is the pointer cursor its style gives them: the outermost element of such a
    run (not one inside a link or a button, not one a later rule takes the pointer from) is a
    target, and clicking it reaches the page's handler. So it is where the rules come from a
    sheet of another origin (a CDN's), which no script of the page can read."""
    sheet = site.url("site/pointer-rules.css", host="localhost" if origin == "other" else "127.0.0.1")
    obs = _observed_after(
        browser,
        site,
        """async () => {
          const link = document.createElement('link');
          link.rel = 'stylesheet';
          link.href = 'SHEET_URL';
          const loaded = new Promise((done, failed) => { link.onload = done; link.onerror = failed; });
          document.head.append(link);
          await loaded;
          const root = document.createElement('div');
          root.innerHTML = `<div class=card data-n=1><span class=inner>First card</span></div>
            <div class=card data-n=2><b>Second card</b></div>
            <div class=row data-n=3>A row</div>
            <div style="cursor: pointer" data-n=4>Inline pointer</div>
            <div class="muted off" data-n=5>Pointer taken back</div>
            <div data-n=6>Plain words</div>
            <nav><a href="#n" data-n=7><span class=card>Card in a link</span></a></nav>
            <div class=bar data-n=8><span onclick="">Reply</span> <span onclick="">Forward</span></div>
            <div class=card data-n=9><button>Share</button> Open the story</div>
            <p id=opened>nothing opened</p>`;
          document.body.append(root);
          root.addEventListener('click', (e) => {
            const hit = e.target.closest('[data-n]');
            if (hit) document.getElementById('opened').textContent = 'opened ' + hit.dataset.n;
          });
        }""".replace("SHEET_URL", sheet),
    )
    for words in ("First card", "Second card", "A row", "Inline pointer"):
        assert re.search(rf"clickable \[\d+\] '{words}'", obs.text), (words, obs.text)
    for words in ("Pointer taken back", "Plain words"):
        assert re.search(rf"^\t*text '{words}'", obs.text, re.M), (words, obs.text)
    assert (
        re.search(r"link \[\d+\] 'Card in a link'", obs.text)
        and "clickable [" not in obs.text.split("Card in a link")[0].splitlines()[-1]
    )
    assert obs.text.count("First card") == 1, obs.text  # the inner span is no target of its own
    # A pointer bar whose every word is a target's inside it (spans with their own listeners)
    # only wraps them: no target of its own. One with words of its own beside a button is one.
    lines = obs.text.splitlines()
    reply = next(i for i, line in enumerate(lines) if re.search(r"clickable \[\d+\] 'Reply'", line))
    assert not re.fullmatch(r"\t*clickable \[\d+\]", lines[reply - 1]), obs.text
    assert re.search(r"clickable \[\d+\] 'Forward'", obs.text), obs.text
    share = next(i for i, line in enumerate(lines) if re.search(r"button \[\d+\] 'Share'", line))
    assert re.fullmatch(r"\t*clickable \[\d+\]", lines[share - 1]) and "Open the story" in lines[share + 1], obs.text
    second = int(re.search(r"clickable \[(\d+)\] 'Second card'", obs.text).group(1))
    step = browser.step(f"click [{second}]")
    assert step.ok and "opened 2" in step.observation.text, step.observation.text


def test_what_a_shadow_trees_own_sheet_points_at_is_a_target(browser, site):
    """A web component's own sheet gives its items the pointer cursor, and a listener far above
    (on the body) handles their clicks: the outermost pointer element inside the shadow tree is a
    target, as one in the document is, and so is a host its own tree points at (`:host`); the
    words beside them stay text."""
    obs = _observed_after(
        browser,
        site,
        """() => {
          const host = document.createElement('div');
          host.attachShadow({ mode: 'open' }).innerHTML =
            `<style>.item { cursor: pointer }</style><div class=item data-n=1><span>Shadow card</span></div>
             <div>Plain shadow words</div>`;
          document.body.append(host);
          // A host its own tree points at: the document's rules say nothing of it.
          const chip = document.createElement('span');
          chip.dataset.n = '2';
          chip.attachShadow({ mode: 'open' }).innerHTML = `<style>:host { cursor: pointer }</style><b>Host chip</b>`;
          document.body.append(chip);
          const opened = document.createElement('p');
          opened.textContent = 'nothing opened';
          document.body.append(opened);
          document.body.addEventListener('click', (e) => {
            const hit = e.composedPath().find((n) => n.dataset && n.dataset.n);
            if (hit) opened.textContent = 'opened ' + hit.dataset.n;
          });
        }""",
    )
    assert re.search(r"clickable \[\d+\] 'Shadow card'", obs.text), obs.text
    assert re.search(r"^\t*text 'Plain shadow words'", obs.text, re.M), obs.text
    card = int(re.search(r"clickable \[(\d+)\] 'Shadow card'", obs.text).group(1))
    step = browser.step(f"click [{card}]")
    assert step.ok and "opened 1" in step.observation.text, step.observation.text
    chip = int(re.search(r"clickable \[(\d+)\] 'Host chip'", step.observation.text).group(1))
    step = browser.step(f"click [{chip}]")
    assert step.ok and "opened 2" in step.observation.text, step.observation.text


def test_a_page_that_patches_every_built_in_the_hook_uses_keeps_its_ids(browser, site):
    """hook.js lives in the page's world, where a page's script may patch any prototype after it
    is installed: every built-in it calls is taken at install time, so elements made clickable
    after the patches (a listener, an onclick, a pointer listener) still get their ids, and a custom
    element's ElementInternals semantics are still told."""
    browser.reset(site.url("site/patched-builtins.html"))
    text = browser.observe().text
    for words in ("Script button A", "Script button B", "Script button C"):
        assert re.search(rf"clickable \[\d+\] '{words}'", text), text
    assert re.search(r"button \[\d+\] 'Internals button'", text), text
