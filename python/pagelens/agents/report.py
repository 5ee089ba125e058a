"""A self-contained HTML report of a trajectory, a step viewer: for every step the page as the
model saw it (its screenshot, with the element the action went to outlined), the
observation text, the model's reasoning and reply, the action and what came of it; the plan
tree; navigable step by step (links, and the arrow keys)."""

from __future__ import annotations

import base64
import html
import struct
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.agents.planning import PlanTree
from pagelens.agents.trajectory import RunHeader, StepRecord, load_trajectory

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: .4em 0; }
.ok { color: #176f2c; } .failed { color: #b3261e; } .ended { color: #5a4a00; }
pre { background: #f6f6f6; padding: .8em; overflow-x: auto; white-space: pre-wrap; font-size: 12px; }
dt { font-weight: 600; margin-top: .4em; } dd { margin-left: 1.2em; white-space: pre-wrap; }
.action { font-family: monospace; background: #eef3ff; padding: .1em .4em; border-radius: 3px; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: .2em .6em; text-align: left; }
.step { border-top: 2px solid #ccd; padding-top: .6em; margin-top: 1.6em; }
.stepnav { display: flex; gap: 1em; font-size: 13px; margin-bottom: .3em; }
.cols { display: flex; gap: 1.2em; align-items: flex-start; }
.cols > .picture { flex: 0 1 auto; max-width: 60%; } .cols > .text { flex: 1 1 0; min-width: 20em; }
.shot { border: 1px solid #ccc; max-width: 100%; height: auto; display: block; }
pre.observation { max-height: 40em; overflow-y: auto; }
#index a { margin-right: .5em; font-family: monospace; }
"""

# Left and right arrows go to the previous and next step.
_KEYS = """
document.addEventListener('keydown', e => {
  if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
  const steps = [...document.querySelectorAll('section.step')];
  if (!steps.length) return;
  const at = steps.findIndex(s => '#' + s.id === location.hash);
  const to = e.key === 'ArrowRight' ? Math.min(at + 1, steps.length - 1) : Math.max(at - 1, 0);
  location.hash = steps[to].id;
});
"""


def _e(text: object) -> str:
    return html.escape("" if text is None else str(text))


def _png_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's header, or None for anything else."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return (width, height) if width and height else None


# A picture narrower than this is shown twice its size (MiniWoB++'s 160-pixel task at 320).
_ENLARGE_BELOW = 400


def _box(value: object) -> tuple[float, float, float, float] | None:
    if isinstance(value, list) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
        return (float(value[0]), float(value[1]), float(value[2]), float(value[3]))
    return None


def _screenshot(path: Path, box: object, region: object, step: int, content: object = None) -> str:
    """The step's picture as inline SVG at 1× (2× when small), with the acted element's box
    (viewport coordinates) outlined where it is on the picture (``region``: the part of the
    viewport the picture shows; None: all of it). ``content``: the page's content in the
    viewport, for a picture that shows more (a step with no element to outline): only that part
    is shown, as a step's picture cut to its element and the content is."""
    data = path.read_bytes()
    size = _png_size(data)
    if size is None:
        return f"<p>(step {step}: {_e(path.name)} is not a PNG)</p>"
    width, height = size
    href = "data:image/png;base64," + base64.b64encode(data).decode()
    origin = _box(region) or (0.0, 0.0, float(width), float(height))
    # The picture's pixels per CSS pixel of the viewport (a device scale factor above 1).
    scale = width / origin[2] if origin[2] > 0 else 1.0
    outline = ""
    target = _box(box)
    if target is not None:
        x, y = (target[0] - origin[0]) * scale, (target[1] - origin[1]) * scale
        w, h = max(target[2] * scale, 2), max(target[3] * scale, 2)
        outline = (
            f"<rect class='target' x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{h:.1f}' "
            "fill='none' stroke='#e0218a' stroke-width='3'/>"
        )
    view = (0.0, 0.0, float(width), float(height))
    shown_width = origin[2]
    within = _box(content)
    if target is None and within is not None and within[2] > 0 and within[3] > 0:
        view = ((within[0] - origin[0]) * scale, (within[1] - origin[1]) * scale, within[2] * scale, within[3] * scale)
        shown_width = within[2]
    shown = shown_width * (2 if shown_width < _ENLARGE_BELOW else 1)
    box_text = " ".join(f"{v:.1f}".rstrip("0").rstrip(".") for v in view)
    return (
        f"<svg class='shot' role='img' aria-label='the page at step {step}' viewBox='{box_text}' "
        f"width='{shown:.0f}' xmlns='http://www.w3.org/2000/svg'>"
        f"<image href='{href}' width='{width}' height='{height}'/>{outline}</svg>"
    )


def _inside(folder: Path, name: str) -> Path | None:
    """``folder / name`` when it stays in ``folder`` (links resolved), else None: a trajectory
    names its screenshots relative to its own folder, and a report embeds nothing else (an
    absolute path or ``../`` would put any PNG of the machine into the page)."""
    try:
        base = folder.resolve()
        path = (folder / name).resolve()
    except (OSError, ValueError):
        return None
    return path if path.is_relative_to(base) and path != base else None


def _outcome(s: StepRecord, success: bool | None) -> tuple[str, str]:
    """(class, words) of what came of a step: an action done or failed; the step that ended the
    run says it ended, and how the run was scored when it was (a stop is no success by itself)."""
    if not s.ok:
        return "failed", f"failed: {s.failure}"
    if s.answer is not None:
        words = f"ended the run, answering {s.answer!r}"
        if success is None:
            return "ended", words
        return ("ok", words + ": scored a success") if success else ("failed", words + ": scored a failure")
    return "ok", "done"


def _step(s: StepRecord, index: int, count: int, folder: Path, success: bool | None = None) -> str:
    """Step ``index + 1`` of ``count``: every number a person reads counts from 1 (the anchors
    too: ``#step-1`` is the first step)."""
    number = index + 1
    cls, outcome = _outcome(s, success)
    prev = f"<a href='#step-{number - 1}'>&larr; step {number - 1}</a>" if number > 1 else "<span></span>"
    nxt = f"<a href='#step-{number + 1}'>step {number + 1} &rarr;</a>" if number < count else "<span></span>"
    parts = [
        f"<section class='step' id='step-{number}'>",
        f"<div class='stepnav'>{prev}<span>step {number} of {count}</span>{nxt}</div>",
        f"<h2>Step {number}: <span class='action'>{_e(s.action)}</span> <span class='{cls}'>{_e(outcome)}</span></h2>",
        f"<div>{_e(s.title)} &lt;{_e(s.url)}&gt;</div>",
        "<div class='cols'>",
    ]
    shot = _inside(folder, s.screenshot) if s.screenshot else None
    if shot is not None and shot.is_file():
        picture = _screenshot(shot, s.target_box, s.screenshot_box, number, s.content_box)
        parts.append(f"<div class='picture'>{picture}</div>")
    elif s.screenshot and shot is None:
        parts.append(f"<p>(step {number}: the screenshot path {_e(str(s.screenshot))} is outside the run's folder)</p>")
    parts.append("<div class='text'><dl>")
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
    if s.responses:
        parts.append(f"<dt>Model reply</dt><dd><pre class='reply'>{_e(s.responses[-1])}</pre></dd>")
    parts.append("</dl>")
    # Beside the picture, not below it: what the model read is what the picture is checked against.
    parts.append(
        f"<details open><summary>Observation ({len(s.observation)} characters)</summary>"
        f"<pre class='observation'>{_e(s.observation)}</pre></details></div></div></section>"
    )
    return "".join(parts)


def write_report(trajectory: str | Path, out: str | Path, outcome: dict[str, Any] | None = None) -> Path:
    """The report of ``trajectory`` at ``out``. ``outcome``: how the run was scored (a study's
    reward and success, shown in the header)."""
    trajectory, out = Path(trajectory), Path(out)
    run = load_trajectory(trajectory)
    header, steps, end = run.header or RunHeader(), run.steps, run.end
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(header.task)}</title>"
        f"<style>{_STYLE}</style></head><body>"
    ]
    parts.append(f"<h1>{_e(header.task)}</h1><table id='summary'>")
    shown = (("url", header.url), ("agent", header.agent), ("model", header.model), ("task_id", header.task_id))
    for key, value in shown:
        parts.append(f"<tr><th>{key}</th><td>{_e(value)}</td></tr>")
    if outcome is not None:
        success = outcome.get("success")
        cls = "ok" if success else "failed"
        parts.append(
            f"<tr><th>reward</th><td class='{cls}' id='reward'>{_e(outcome.get('reward'))} "
            f"({'success' if success else 'failure'})</td></tr>"
        )
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
    if steps:
        links = "".join(f"<a href='#step-{k}'>{k}</a>" for k in range(1, len(steps) + 1))
        parts.append(f"<p id='index'>Steps: {links}</p>")
    state = steps[-1].state if steps else {}
    if isinstance(state, dict) and "plans" in state:
        parts.append("<h2>Plan tree</h2><pre>" + _e(PlanTree.from_json(state["plans"]).render()) + "</pre>")
    if isinstance(state, dict) and state.get("stack"):
        parts.append(
            "<h2>Policy stack at the end</h2><pre>" + _e(" > ".join(f["policy"] for f in state["stack"])) + "</pre>"
        )
    success = outcome.get("success") if outcome is not None else None
    scored = bool(success) if success is not None else None
    parts.extend(_step(s, k, len(steps), trajectory.parent, scored) for k, s in enumerate(steps))
    parts.append(f"<script>{_KEYS}</script>")
    parts.append("</body></html>")
    write_atomically(out, "\n".join(parts))
    return out
