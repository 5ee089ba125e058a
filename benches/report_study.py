"""Studies: episodes per minute on MiniWoB++ with 1, 2 and 4 workers, and the time pagelens
adds to an episode beyond the model and the page.

The model is the test suite's scripted AgentOccam model behind a local OpenAI-compatible
server (answers in about a millisecond), so the figures are pagelens and Chromium alone.
"Overhead" is an episode's wall time outside its agent steps (starting the task page,
building the agent, writing the trajectory's end and the report, reading the reward), and
"dispatch" the wall time of the study per episode per worker beyond the episodes' own time.
Both are set against a 2-second-per-step episode of the same number of steps.

    python benches/report_study.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from pagelens.studies import RunOptions, StudySettings, read_results, run_study  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402
from support.scripted import miniwob_model  # noqa: E402

TASKS = ("click-test", "enter-text", "login-user", "choose-list")
SEEDS = tuple(range(4))


def main() -> None:
    server = LLMServer(miniwob_model)
    print(f"{len(TASKS)} MiniWoB++ tasks x {len(SEEDS)} seeds = {len(TASKS) * len(SEEDS)} episodes, scripted model.\n")
    print(
        "| workers | wall s | episodes/min | mean steps | overhead per episode | dispatch per episode "
        "| overhead / 2 s-per-step episode |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    try:
        for workers in (1, 2, 4):
            with tempfile.TemporaryDirectory() as tmp:
                settings = StudySettings(
                    "miniwob", "occam", "scripted", tasks=TASKS, seeds=SEEDS, max_steps=8, base_url=server.base_url
                )
                t0 = time.perf_counter()
                run_study(Path(tmp) / "s", settings, RunOptions(workers=workers, backoff=0.01))
                wall = time.perf_counter() - t0
                results = read_results(Path(tmp) / "s")
            n = len(results)
            assert all(r["success"] for r in results), "the scripted model solves every episode"
            steps = statistics.mean(r["steps"] for r in results)
            overhead = statistics.mean(r["seconds"] - r["step_seconds"] for r in results)
            dispatch = max(0.0, wall * workers / n - statistics.mean(r["seconds"] for r in results))
            share = (overhead + dispatch) / (steps * 2.0)
            print(
                f"| {workers} | {wall:.1f} | {n / wall * 60:.1f} | {steps:.1f} | {overhead:.2f} s | {dispatch:.2f} s "
                f"| {share:.1%} |"
            )
    finally:
        server.close()


if __name__ == "__main__":
    main()
