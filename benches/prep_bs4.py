"""The peer of `pagelens prep`: the same per-step transform written in Python the usual way —
BeautifulSoup (lxml) for parsing, soupsieve for the CSS target, the `scribe` rules of
`scribe_bs4.py`, PyPI tiktoken for every count, chunking before start tags in Python.

Used only by the benchmark, to compare like with like."""

from __future__ import annotations

import re

from scribe_bs4 import clean_soup, parse_with_ids

START = re.compile(r"(?=<[A-Za-z])")


def _find_path(soup, path: str):
    el = soup
    for step in path.strip("/").split("/"):
        tag, _, idx = step.partition("[")
        n = int(idx.rstrip("]") or 1)
        kids = [c for c in el.find_all(tag, recursive=False)]
        if len(kids) < n:
            return None
        el = kids[n - 1]
    return el


def _chunks(html: str, budget: int, enc) -> list[tuple[str, int]]:
    out, cur, cur_tokens = [], [], 0
    for unit in START.split(html):
        if not unit:
            continue
        n = len(enc.encode_ordinary(unit))
        if cur and cur_tokens + n > budget:
            out.append(("".join(cur), cur_tokens))
            cur, cur_tokens = [], 0
        cur.append(unit)
        cur_tokens += n
    if cur:
        out.append(("".join(cur), cur_tokens))
    return out


def transform_workflow(steps: list[dict], enc, budget: int) -> list[dict]:
    examples, guide = [], []
    for number, step in enumerate(steps, start=1):
        soup = parse_with_ids(step["html"])
        target = (
            soup.select_one(step["target_selector"])
            if step.get("target_selector")
            else _find_path(soup, step["target_path"])
        )
        if target is None:
            break
        node = target.attrs["node"]
        clean_soup(soup, enc, keep=target)
        html = str(soup)
        tag = (
            "<"
            + target.name
            + "".join(f' {k}="{v}"' for k, v in target.attrs.items() if k != "node")
            + f' node="{node}">'
        )
        lines = f"{number}.\nDescription: {step.get('description', '')}\nAction: {step['action']}\nNode: {node}\nTarget: {tag}"
        chunks = _chunks(html, budget, enc)
        text, tokens = next((c for c in chunks if f'node="{node}"' in c[0]), chunks[-1])
        prompt = (
            f"Objective: {step['objective']}\nURL: {step['url']}\nObservation: {text}\nStep-by-step guide:\n"
            + "".join(g + "\n" for g in guide)
        )
        examples.append(
            {
                "prompt": prompt,
                "label": lines,
                "raw_tokens": len(enc.encode_ordinary(step["html"])),
                "clean_tokens": sum(t for _, t in chunks),
                "observation_tokens": tokens,
                "prompt_tokens": len(enc.encode_ordinary(prompt)),
                "label_tokens": len(enc.encode_ordinary(lines)),
            }
        )
        guide.append(lines)
    return examples
