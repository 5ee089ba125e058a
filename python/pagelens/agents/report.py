"""A self-contained HTML report of a trajectory: per step the page, the model's reasoning and
the action with its outcome; the plan tree; screenshots when the run took them."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from pagelens._io import write_atomically
from pagelens.agents.planning import PlanTree
from pagelens.agents.trajectory import RunHeader, load_trajectory

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: 1.6em 0 .4em; }
.ok { color: #176f2c; } .failed { color: #b3261e; }
pre { background: #f6f6f6; padding: .8em; overflow-x: auto; white-space: pre-wrap; font-size: 12px; }
dt { font-weight: 600; margin-top: .4em; } dd { margin-left: 1.2em; white-space: pre-wrap; }
.action { font-family: monospace; background: #eef3ff; padding: .1em .4em; border-radius: 3px; }
img { max-width: 100%; border: 1px solid #ccc; } table { border-collapse: collapse; }
td, th { border: 1px solid #ddd; padding: .2em .6em; text-align: left; }
"""


def _e(text: object) -> str:
    return html.escape("" if text is None else str(text))


def write_report(trajectory: str | Path, out: str | Path) -> Path:
    trajectory, out = Path(trajectory), Path(out)
    run = load_trajectory(trajectory)
    header, steps, end = run.header or RunHeader(), run.steps, run.end
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(header.task)}</title>"
        f"<style>{_STYLE}</style></head><body>"
    ]
    parts.append(f"<h1>{_e(header.task)}</h1><table>")
    for key, value in (
        ("url", header.url),
        ("agent", header.agent),
        ("model", header.model),
        ("task_id", header.task_id),
    ):
        parts.append(f"<tr><th>{key}</th><td>{_e(value)}</td></tr>")
    if end:
        parts.append(
            f"<tr><th>answer</th><td>{_e(end.answer)}</td></tr>"
            f"<tr><th>final URL</th><td>{_e(end.final_url)}</td></tr>"
            f"<tr><th>ended</th><td>{_e(end.reason)} after {_e(end.steps)} steps</td></tr>"
        )
    else:
        parts.append("<tr><th>status</th><td>unfinished (no end record)</td></tr>")
    tokens = sum(s.token_count() for s in steps)
    parts.append(f"<tr><th>tokens</th><td>{tokens:,}</td></tr></table>")
    state = steps[-1].state if steps else {}
    if isinstance(state, dict) and "plans" in state:
        parts.append("<h2>Plan tree</h2><pre>" + _e(PlanTree.from_json(state["plans"]).render()) + "</pre>")
    if isinstance(state, dict) and state.get("stack"):
        parts.append(
            "<h2>Policy stack at the end</h2><pre>" + _e(" > ".join(f["policy"] for f in state["stack"])) + "</pre>"
        )
    for s in steps:
        cls = "ok" if s.ok else "failed"
        outcome = "done" if s.ok else f"failed: {s.failure}"
        parts.append(
            f"<h2>Step {s.step}: <span class='action'>{_e(s.action)}</span> "
            f"<span class='{cls}'>{_e(outcome)}</span></h2>"
        )
        parts.append(f"<div>{_e(s.title)} &lt;{_e(s.url)}&gt;</div><dl>")
        for name, text in s.sections.items():
            parts.append(f"<dt>{_e(name.replace('_', ' ').capitalize())}</dt><dd>{_e(text)}</dd>")
        for error in s.invalid:
            parts.append(f"<dt>Invalid action shown back</dt><dd>{_e(error)}</dd>")
        if s.judge:
            parts.append(
                f"<dt>Judge</dt><dd>candidates: {_e('; '.join(map(str, s.candidates)))}\n"
                f"selected: {_e(s.judge.get('selected'))}</dd>"
            )
        if s.meta.get("policy"):
            parts.append(f"<dt>Policy</dt><dd>{_e(s.meta['policy'])}</dd>")
        parts.append("</dl>")
        if s.screenshot:
            shot = trajectory.parent / s.screenshot
            if shot.is_file():
                data = base64.b64encode(shot.read_bytes()).decode()
                parts.append(f"<img alt='step {s.step}' src='data:image/png;base64,{data}'>")
        parts.append(
            f"<details><summary>Observation ({len(s.observation)} characters)</summary>"
            f"<pre>{_e(s.observation)}</pre></details>"
        )
    parts.append("</body></html>")
    write_atomically(out, "\n".join(parts))
    return out
