"""The Benchmark protocol (issue: one home per concept): a fourth benchmark, defined here and
nowhere in pagelens.studies, plugs into `pagelens study run` (worker processes, real Chromium,
a scripted model over real HTTP): its tasks listed, each resolved once by the dispatcher, its
site's reset run before a task that changes it, its episodes run and scored in the worker."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pagelens.cli import main
from pagelens.studies import benchmarks, read_results
from pagelens.studies.protocol import EpisodeSetupError, EpisodeTask, Goal, Score
from support.llm_server import LLMServer
from support.scripted import says_the_word
from support.site_server import SiteServer

RESOLVED: list[str] = []  # the dispatcher's resolutions, in this process
RESETS: list[str] = []


@dataclass(frozen=True)
class EchoOptions:
    page: str | None = field(default=None, metadata={"help": "the page every episode opens"})
    seeds: int = 0  # a name `study run` has already: its flag becomes --echo-seeds
    repeat: int = 1  # typed by its default
    loud: bool = False  # a yes/no: --loud / --no-loud


class Echo:
    """Open a page, answer with the task's word; success when the answer is the word. Its
    setup and score are all it does: the worker runs the agent."""

    name = "echo"
    summary = "a toy benchmark defined by a test"
    options_type = EchoOptions

    def task_names(self, selection, options):
        return ("alpha", "beta", "gamma")

    def resolve(self, task, options):
        RESOLVED.append(task)
        if task not in self.task_names(None, options):
            raise EpisodeSetupError(f"no task {task!r} in echo")
        return EpisodeTask(task, site="echo-site", changes_state=task == "gamma", config={"word": task.upper()})

    def reset(self, task, options):
        RESETS.append(task.name)

    async def setup(self, browser, task, episode):
        return Goal(f"Say {task.config['word']}", episode.options.page, site=task.site)

    async def score(self, browser, task, goal, run, episode):
        success = run.answer == task.config["word"]
        return Score(float(success), success, {"answer": run.answer})


# A plugin registers itself when its module is imported (worker processes import it by name).
benchmarks.register(Echo())


def test_a_fourth_benchmark_plugs_into_study_run(tmp_path, capsys):
    site = SiteServer()
    llm = LLMServer(says_the_word)
    try:
        code = main(
            [
                "study",
                "run",
                str(tmp_path / "s"),
                "--benchmark",
                "echo",
                "--model",
                "scripted",
                "--base-url",
                llm.base_url,
                "--seeds",
                "0,1",
                "--workers",
                "2",
                "--max-steps",
                "3",
                "--page",
                site.url("site/second.html"),
                "--echo-seeds",
                "3",
                "--repeat",
                "2",
                "--loud",
            ]
        )
    finally:
        llm.close()
        site.close()
    assert code == 0
    results = {r["id"]: r for r in read_results(tmp_path / "s")}
    assert sorted(results) == sorted(f"echo.{t}.{s}.occam" for t in ("alpha", "beta", "gamma") for s in (0, 1))
    assert all(r["success"] and r["reward"] == 1.0 and r["site"] == "echo-site" for r in results.values())
    # Resolved once per task by the dispatcher (not again per seed, nor by the worker), reset
    # before each episode of the task that changes its site.
    assert sorted(RESOLVED) == ["alpha", "beta", "gamma"]
    assert RESETS == ["gamma", "gamma"]
    study = json.loads((tmp_path / "s" / "study.json").read_text())
    assert study["benchmark"] == "echo" and Path(tmp_path / "s" / "summary.json").exists()
    # Its options, typed by their defaults, kept with the study (and read by the workers).
    assert study["benchmark_options"] == {"page": site.url("site/second.html"), "seeds": 3, "repeat": 2, "loud": True}
    # Another benchmark's option is refused with echo, naming the flag; so is echo's with MiniWoB++.
    for benchmark, flag in (("echo", "--sites-file"), ("miniwob", "--repeat")):
        args = ["study", "run", str(tmp_path / "t"), "--benchmark", benchmark, "--model", "m", flag, "2"]
        assert main([*args, "--tasks", "alpha"]) == 2
        assert f"{flag} does not apply to {benchmark}" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_the_docs_benchmark_runs_as_written():
    """docs/studies.md's own benchmark, executed as the page shows it (in a process of its own,
    so that the registry here stays as it was): it registers, its option is a `study run` flag,
    and its setup and score answer as the protocol says."""
    import re
    import subprocess
    import sys

    from support.paths import ROOT

    page = (ROOT / "docs" / "studies.md").read_text()
    [snippet] = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S) if "register(MyBench())" in b]
    probe = snippet + (
        "\nimport asyncio, contextlib, io\n"
        "from types import SimpleNamespace\n"
        "from pagelens.cli import main\n"
        "from pagelens.studies.protocol import EpisodeContext, TaskSelection\n"
        "bench = MyBench()\n"
        "task = bench.resolve('a', MyOptions())\n"
        "episode = EpisodeContext(0, None, MyOptions(), 10.0)\n"
        "goal = asyncio.run(bench.setup(None, task, episode))\n"
        "score = asyncio.run(bench.score(None, task, goal, SimpleNamespace(answer='done'), episode))\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "    main(['study', 'run', '--help'])\n"
        "print(bench.task_names(TaskSelection(), MyOptions()), goal.intent, goal.start_url, score.success,\n"
        "      '--start' in out.getvalue() and 'mybench' in out.getvalue())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "('a', 'b') do a http://localhost:8000/ True True"
