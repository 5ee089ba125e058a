"""The trajectory's typed records: what the runner writes, the one reader gives back, field for
field; records written by hand or by an older pagelens read with defaults; a field of the
wrong type is named with its record."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagelens.agents.trajectory import (
    EndRecord,
    RunHeader,
    StepRecord,
    TrajectoryWriter,
    _kinds,
    load_trajectory,
    read_trajectory,
)
from pagelens.errors import TrajectoryError

text = st.text(max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
extras = st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in {"type"}), json_values, max_size=3)

headers = st.builds(
    RunHeader,
    task=text,
    task_id=st.none() | st.integers(0, 10**6),
    url=text,
    har=st.none() | text,
    agent=text,
    model=st.none() | text,
    config=st.dictionaries(text, json_values, max_size=3),
    started=st.floats(0, 2e9),
    extra=extras,
)
steps = st.builds(
    StepRecord,
    step=st.integers(0, 100),
    url=text,
    observation=text,
    dialogs=st.lists(text, max_size=2),
    action=st.none() | text,
    sections=st.dictionaries(text, text, max_size=2),
    highlights=st.lists(st.integers(0, 10**6), max_size=3),
    invalid=st.lists(text, max_size=2),
    error=st.none() | text,
    tokens=st.fixed_dictionaries({"prompt": st.integers(0, 10**6), "completion": st.integers(0, 10**6)}),
    result=st.fixed_dictionaries({"ok": st.booleans(), "error": st.none() | text}),
    answer=st.none() | text,
    final_url=st.none() | text,
    timing=st.fixed_dictionaries({"model_s": st.floats(0, 100), "total_s": st.floats(0, 100)}),
    state=st.dictionaries(text, json_values, max_size=3),
    screenshot=st.none() | text,
)
ends = st.builds(
    EndRecord,
    answer=st.none() | text,
    final_url=st.none() | text,
    steps=st.integers(0, 100),
    reason=st.sampled_from(["stop", "max_steps", "task_done", "no_valid_action"]),
    task_id=st.none() | st.integers(0, 10**6),
    usage=st.dictionaries(text, st.integers(0, 100), max_size=2),
)


def _known_keys_filtered(record):
    """Extra keys that name a field of the record would be read back as that field."""
    known = set(_kinds(type(record))) | {"extra"}
    record.extra = {k: v for k, v in record.extra.items() if k not in known}
    return record


@settings(max_examples=60, deadline=None)
@given(header=headers, body=st.lists(steps, max_size=4), end=st.none() | ends)
def test_what_is_written_is_read_back_field_for_field(tmp_path_factory, header, body, end):
    path = tmp_path_factory.mktemp("t") / "trajectory.jsonl"
    header = _known_keys_filtered(header)
    writer = TrajectoryWriter(path)
    for record in (header, *body, *([end] if end else [])):
        writer.write(record)
    run = load_trajectory(path)
    assert run.header == header and run.steps == body and run.end == end and not run.torn_tail
    assert [r["type"] for r in read_trajectory(path)] == ["run"] + ["step"] * len(body) + (["end"] if end else [])
    # What the evaluation scores: the end's answer, else the last step's that gave one.
    given_answers = [s.answer for s in body if s.answer is not None]
    expected = end.answer if end and end.answer is not None else (given_answers[-1] if given_answers else None)
    assert run.answer == expected


def test_hand_written_records_read_with_defaults_and_keep_their_extras(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"task_id": 3, "seed": 7}\n{"type": "step", "action": "stop [yes]", "answer": "yes"}\n'
        '{"type": "note", "anything": 1}\n'
    )
    run = load_trajectory(path)
    assert run.header == RunHeader(task_id=3, extra={"seed": 7})
    assert run.steps == [StepRecord(action="stop [yes]", answer="yes")] and run.end is None
    assert run.task_id == 3 and run.answer == "yes" and not run.steps[0].ok


@pytest.mark.parametrize(
    ("line", "field", "kind"),
    [
        ('{"type": "end", "answer": 12}', "answer", "a string"),
        ('{"type": "step", "step": true}', "step", "int"),
        ('{"type": "step", "result": []}', "result", "an object"),
        ('{"type": "end", "task_id": "4"}', "task_id", "int"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_with_its_record(tmp_path, line, field, kind):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"type": "run", "task": "t"}) + "\n" + line + "\n")
    with pytest.raises(TrajectoryError, match=f"record 2: field `{field}` must be {kind}"):
        load_trajectory(path)


def test_a_report_embeds_only_screenshots_in_the_runs_folder(tmp_path):
    """A trajectory's `screenshot` names a file beside it; an absolute path or `../` would put
    any PNG of the machine into the report: those are named, never embedded."""
    import base64
    import struct
    import zlib

    from pagelens.agents.report import write_report

    def png(shade: int) -> bytes:
        row = b"\x00" + bytes([shade, shade, shade]) * 2

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

        ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(row * 2)) + chunk(b"IEND", b"")
        )

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "step-000.png").write_bytes(png(10))
    secret = tmp_path / "secret.png"
    secret.write_bytes(png(200))
    steps = [
        {"type": "run", "task": "t", "url": "http://a.test/", "agent": "occam"},
        *(
            {
                "type": "step",
                "step": i,
                "url": "http://a.test/",
                "action": "noop",
                "result": {"ok": True, "error": None},
                "observation": "x",
                "screenshot": shot,
            }
            for i, shot in enumerate(["step-000.png", "../secret.png", str(secret), "/etc/passwd"])
        ),
    ]
    trajectory = run_dir / "trajectory.jsonl"
    trajectory.write_text("".join(json.dumps(s) + "\n" for s in steps))
    html = write_report(trajectory, tmp_path / "report.html").read_text()
    assert base64.b64encode(png(10)).decode() in html
    assert base64.b64encode(png(200)).decode() not in html
    assert html.count("is outside the run's folder") == 3


def test_the_step_viewer_as_a_person_reads_it(tmp_path):
    """The viewer opened in a headless Chromium and read as a person reads it: steps counted
    from 1 everywhere (headings, the step bar, the index, the anchors); a run that stopped with
    an answer scored a failure does not read as a green "done"; a step with no element to
    outline shows the page's content, not the whole viewport around it (its picture
    screenshotted from the viewer: mostly the page's red content)."""
    import asyncio
    import io

    from PIL import Image
    from playwright.async_api import async_playwright

    from pagelens.agents.report import write_report
    from pagelens.browser.launch import LaunchOptions

    def png(size: tuple[int, int], content: tuple[int, int, int, int] | None) -> bytes:
        picture = Image.new("RGB", size, (200, 200, 200))
        if content is not None:
            x, y, w, h = content
            picture.paste((220, 0, 0), (x, y, x + w, y + h))
        out = io.BytesIO()
        picture.save(out, "PNG")
        return out.getvalue()

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # Step 1: a click, pictured cut to its element and the content (340x240 of the viewport).
    (run_dir / "step-000.png").write_bytes(png((340, 240), (20, 20, 300, 200)))
    # Step 2: the agent stopped: the picture is the whole 800x600 viewport the model read.
    (run_dir / "step-001.png").write_bytes(png((800, 600), (100, 50, 300, 200)))
    step = {"type": "step", "url": "http://a.test/", "observation": "x", "result": {"ok": True, "error": None}}
    records = [
        {"type": "run", "task": "find the report", "url": "http://a.test/", "agent": "occam"},
        {
            **step,
            "step": 0,
            "action": "click [3]",
            "screenshot": "step-000.png",
            "target_box": [120, 60, 80, 30],
            "screenshot_box": [80, 30, 340, 240],
        },
        {
            **step,
            "step": 1,
            "action": "stop [N/A]",
            "answer": "N/A",
            "screenshot": "step-001.png",
            "content_box": [90, 40, 320, 220],
        },
        {"type": "end", "reason": "stop", "answer": "N/A", "steps": 2},
    ]
    trajectory = run_dir / "trajectory.jsonl"
    trajectory.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = write_report(trajectory, run_dir / "report.html", {"reward": 0.0, "success": False})

    async def look() -> dict:
        async with async_playwright() as p:
            chromium = await p.chromium.launch(**LaunchOptions().playwright_kwargs())
            page = await chromium.new_page(viewport={"width": 1300, "height": 900})
            await page.goto(report.as_uri())
            seen = {
                "headings": await page.locator("section.step h2").all_inner_texts(),
                "bars": await page.locator(".stepnav").all_inner_texts(),
                "index": await page.locator("#index a").all_inner_texts(),
                "anchors": await page.locator("section.step").evaluate_all("s => s.map(e => e.id)"),
                "stop_colour": await page.locator("section.step")
                .nth(1)
                .locator("h2 span")
                .nth(1)
                .evaluate("e => getComputedStyle(e).color"),
                "stop_width": await page.locator("section.step")
                .nth(1)
                .locator("svg.shot")
                .evaluate("e => e.getBoundingClientRect().width"),
            }
            await page.keyboard.press("ArrowRight")
            await page.wait_for_function("location.hash === '#step-1'")
            picture = await page.locator("section.step").nth(1).locator("svg.shot").screenshot()
            await page.screenshot(path=str(tmp_path / "viewer.png"))
            await chromium.close()
            return {**seen, "picture": picture}

    seen = asyncio.run(look())
    assert [h.split(":")[0] for h in seen["headings"]] == ["Step 1", "Step 2"]
    assert (
        "step 1 of 2" in seen["bars"][0] and "step 2 of 2" in seen["bars"][1] and "step 0" not in " ".join(seen["bars"])
    )
    assert seen["index"] == ["1", "2"] and seen["anchors"] == ["step-1", "step-2"]
    assert "done" not in seen["headings"][1] and "scored a failure" in seen["headings"][1]
    assert seen["stop_colour"] == "rgb(179, 38, 30)"  # the failure's red, not the success's green
    assert 640 <= seen["stop_width"] <= 642  # the 320-pixel content shown twice its size (and a 1-pixel border)
    shot = Image.open(io.BytesIO(seen["picture"])).convert("RGB")
    red = sum(1 for r, g, b in shot.getdata() if r > 180 and g < 60 and b < 60)
    assert red / (shot.width * shot.height) > 0.6  # the content fills it (the whole viewport: 12%)
    assert (tmp_path / "viewer.png").stat().st_size > 10_000
