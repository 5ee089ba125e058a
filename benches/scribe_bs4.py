"""The peer: the `scribe` cleaning rules written the way ScribeAgent's pipeline does it,
with BeautifulSoup (lxml parser) and one Python tokenizer call per attribute value.

Used only by the benchmarks, to compare like with like."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

TAGS = set(
    "html body div span p a button input select option optgroup textarea label form fieldset legend "
    "img svg ul ol li dl dt dd table thead tbody tfoot tr th td caption h1 h2 h3 h4 h5 h6 nav header "
    "footer main section article aside details summary dialog iframe strong em b i u small code pre "
    "blockquote time title".split()
)
ATTRS = set(
    "alt aria-role aria-label aria-selected aria-expanded aria-checked data-content placeholder role "
    "type node label name title value href required selected checked disabled id class for".split()
)
EXEMPT = {"title", "alt", "aria-label", "node"}
INTERACTIVE = {"a", "button", "input", "select", "option", "textarea", "label", "img", "iframe"}
WS = re.compile(r"\s+")


def clean(html: bytes | str, encoding) -> str:
    """encoding: a tiktoken Encoding (what ScribeAgent calls once per attribute)."""
    soup = parse_with_ids(html)
    clean_soup(soup, encoding)
    return str(soup)


def parse_with_ids(html: bytes | str) -> BeautifulSoup:
    soup = BeautifulSoup(html, "lxml")
    elements = soup.find_all(True)
    for i, el in enumerate(elements):  # ids in reverse document order
        el.attrs["node"] = str(len(elements) - 1 - i)
    return soup


def clean_soup(soup: BeautifulSoup, encoding, keep: Tag | None = None) -> None:
    """The scribe rules in place; ``keep`` (an action target) is neither unwrapped nor removed."""
    for el in soup.find_all(["script", "style", "noscript", "template"]):
        el.decompose()
    for c in soup.find_all(string=lambda s: isinstance(s, Comment)):
        c.extract()
    if soup.head:
        for el in list(soup.head.children):
            if getattr(el, "name", None) != "title":
                el.extract()
    for el in soup.find_all(True):
        if el.name not in TAGS and el is not keep:
            el.unwrap()
            continue
        kept = {}
        for name, value in el.attrs.items():
            if name not in ATTRS or name.startswith("on"):
                continue
            value = " ".join(value) if isinstance(value, list) else value
            if name not in EXEMPT:
                value = value[:64]
                if name == "class":
                    words = [
                        w
                        for w in value.split()
                        if not (len(w) > 32 and len(w) / max(1, len(encoding.encode_ordinary(w))) < 2)
                    ]
                    if not words:
                        continue
                    value = " ".join(words)
                elif len(value) > 32 and len(value) / max(1, len(encoding.encode_ordinary(value))) < 2:
                    continue
            kept[name] = value
        el.attrs = kept
    for s in soup.find_all(string=True):
        if isinstance(s, NavigableString):
            if not s.strip():
                s.extract()
            else:
                s.replace_with(WS.sub(" ", s))
    for el in reversed(soup.find_all(True)):
        if el is keep:
            continue
        if not el.contents and el.name not in INTERACTIVE and not ({"title", "alt", "aria-label"} & set(el.attrs)):
            el.decompose()
