"""`autovend run` (progress, refusals, resume) and `autovend compare` (table, per-agent summary, files)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline.config import BaselineConfig
from autovend.cli import app
from autovend.errors import ConfigError, OutputExistsError, RunFolderError
from autovend.runner import run_episode
from autovend.world.model import Economics
from autovend.world.toy import toy_world


def test_run_a_few_days_of_cn20(tmp_path):
    out = tmp_path / "b1"
    args = ["run", "--world", "worlds/cn20", "--seed", "1", "--days", "2", "--out", str(out), "--no-report"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "baseline seed 1: 2 days, final net assets" in result.output
    meta = json.loads((out / "run.json").read_text())
    assert meta["finished"] and meta["days"] == 2 and meta["world_path"] == "worlds/cn20"
    again = CliRunner().invoke(app, args)
    assert isinstance(again.exception, OutputExistsError)  # main() turns it into exit code 2
    forced = CliRunner().invoke(app, [*args, "--force"])
    assert forced.exit_code == 0, forced.output


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        pytest.param(["--checkpoint", "sometimes"], "--checkpoint must be", id="checkpoint-mode"),
        pytest.param(["--resume", "--force"], "only one of them", id="resume-and-force"),
        pytest.param(["--agent", "no-such-agent"], "there is no agent 'no-such-agent'", id="unknown-agent"),
    ],
)
def test_run_refuses_bad_options(tmp_path, extra, match):
    result = CliRunner().invoke(app, ["run", "--days", "1", "--out", str(tmp_path / "x"), *extra])
    assert isinstance(result.exception, ConfigError)
    assert match in str(result.exception)


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory):
    """Two evaluated 12-day baseline runs on a toy world (seeds 1 and 2)."""
    world = toy_world(4, 60, seed=0, economics=Economics(horizon_days=12))
    base = tmp_path_factory.mktemp("toy-runs")
    dirs = []
    for seed in (1, 2):
        agent = BaselineAgent(BaselineConfig(starter_skus=12, n_skus=10), seed=seed)
        run_episode(world, agent, seed, out_dir=base / f"baseline-s{seed}", checkpoint="off")
        dirs.append(base / f"baseline-s{seed}")
    return dirs


@pytest.mark.slow
def test_compare_prints_runs_and_the_agent_summary(toy_runs, tmp_path):
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", *map(str, toy_runs), "--out", str(out)], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "baseline-s1" in result.output and "baseline-s2" in result.output
    assert "By agent" in result.output
    assert "World hash" not in result.output  # shown only with --force
    finals = [json.loads((d / "run.json").read_text())["final_net_assets"] for d in toy_runs]
    mean = sum(finals) / 2
    assert f"{mean:,.2f}" in result.output  # the per-agent mean of the two runs
    for name in ("comparison.md", "comparison.csv", "net_assets.png", "early_late.png", "report.html"):
        assert (out / name).exists(), name
    assert not (out / "profile.png").exists()  # one agent: no radar (it ranks agents against each other)


def test_compare_refuses_a_folder_that_is_no_run(tmp_path):
    result = CliRunner().invoke(app, ["compare", str(tmp_path)])
    assert isinstance(result.exception, RunFolderError)


def _compare(*args):
    return CliRunner().invoke(app, ["compare", *map(str, args)], env={"COLUMNS": "220"})


def test_compare_refuses_a_5_and_an_8_day_run_of_one_seed(tmp_path):
    world = toy_world(4, 60, seed=0, economics=Economics(horizon_days=12))
    for days in (5, 8):
        agent = BaselineAgent(BaselineConfig(starter_skus=12, n_skus=10), seed=1)
        run_episode(world, agent, 1, days=days, out_dir=tmp_path / f"d{days}", checkpoint="off", evaluate=False)
    result = _compare(tmp_path / "d5", tmp_path / "d8", "--out", tmp_path / "cmp")
    assert result.exit_code == 1
    assert "cannot be compared" in result.stderr and "pass --force" in result.stderr
    d5, d8 = tmp_path / "d5", tmp_path / "d8"
    assert f"they differ in horizon or days played: 5 of 12 days in {d5}; 8 of 12 days in {d8}" in result.stderr
    assert not (tmp_path / "cmp").exists()


def test_compare_refuses_the_same_seed_twice(toy_runs, tmp_path):
    copy = tmp_path / "again"
    shutil.copytree(toy_runs[0], copy)
    result = _compare(toy_runs[0], toy_runs[1], copy, "--out", tmp_path / "cmp")
    assert result.exit_code == 1
    short = json.loads((copy / "run.json").read_text())["world_hash"][:12]  # a world built in memory: its content's
    assert (
        f"the same agent and seed twice: baseline (same configuration), seed 1, on world toy-4x60-s0 ({short}), "
        f"in {toy_runs[0]}, {copy}"
    ) in result.stderr


@pytest.fixture
def two_worlds(toy_runs, tmp_path):
    """Copies of the two toy runs, the second as if made on another world of the same name (its forecasts differ)."""
    from autovend.world.bundle import load_world
    from autovend.world.runcopy import write_world_copy

    dirs = []
    for src, tag in zip(toy_runs, ("a", "b"), strict=True):
        dst = tmp_path / f"{src.name}-{tag}"
        shutil.copytree(src, dst)
        dirs.append(dst)
    world = load_world(dirs[1] / "world")
    other = dataclasses.replace(
        world, world_hash="", forecast=world.forecast.assign(t_max_c=world.forecast["t_max_c"] + 1)
    )
    shutil.rmtree(dirs[1] / "world")
    meta = json.loads((dirs[1] / "run.json").read_text())
    meta["world_hash"] = write_world_copy(other, dirs[1] / "world", "# another world\n")
    (dirs[1] / "run.json").write_text(json.dumps(meta))
    return dirs


def test_compare_refuses_runs_of_different_worlds(two_worlds, tmp_path):
    a, b = two_worlds
    result = _compare(a, b, "--out", tmp_path / "cmp")
    assert result.exit_code == 1
    ha, hb = (json.loads((run / "run.json").read_text())["world_hash"][:12] for run in (a, b))
    assert ha != hb
    assert (
        f"they were made on different worlds: world toy-4x60-s0 ({ha}) in {a}; world toy-4x60-s0 ({hb}) in {b}"
    ) in result.stderr


def test_compare_with_force_shows_the_differences_and_the_world_hashes(two_worlds, tmp_path):
    a, b = two_worlds
    out = tmp_path / "cmp"
    result = _compare(a, b, "--out", out, "--force")
    assert result.exit_code == 0, result.output
    said = result.output.index("not comparable, compared with --force: they were made on different worlds")
    assert said < result.output.index("Runs")  # the differences come above the table
    ha, hb = (json.loads((run / "run.json").read_text())["world_hash"] for run in (a, b))
    row = next(line for line in result.output.splitlines() if "World hash" in line)
    assert ha[:12] in row and hb[:12] in row
    text = (out / "comparison.md").read_text()
    assert "## Compared with --force although they are not comparable" in text
    assert f"| {a.name} | baseline | 1 | 12 | {ha[:12]} |" in text
    assert f"| {b.name} | baseline | 2 | 12 | {hb[:12]} |" in text
    assert (out / "comparison.csv").read_text().splitlines()[1].split(",")[4] == ha


# ------------------------------------------------------------------ plugin agents

ROOT = Path(__file__).resolve().parents[2]

DIARIST = '''
import os
from dataclasses import dataclass, field


@dataclass
class Diary:
    days: list = field(default_factory=list)


class Diarist:
    """Writes the days it has played; its state is a dataclass of this file (pickled in checkpoints)."""

    name = "diarist"

    def __init__(self, seed: int = 0) -> None:
        self.diary = Diary()

    def start(self, session) -> None:
        pass

    def act_day(self, session) -> None:
        if str(session.day) == os.environ.get("DIARIST_STOP_ON_DAY"):
            raise KeyboardInterrupt  # stands for Ctrl-C in the middle of the day
        self.diary.days.append(session.day)
        session.call("write_memory", {"text": ",".join(map(str, self.diary.days))})
        session.call("end_day", {})

    def state_dict(self) -> dict:
        return {"diary": self.diary}

    def load_state(self, state: dict) -> None:
        self.diary = state["diary"]
'''


def test_the_example_agent_runs_as_the_docs_say(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the command of docs/agents.md, from the repository: worlds/cn20 is the default world
    out = tmp_path / "hold"
    result = CliRunner().invoke(
        app, ["run", "--agent", "examples/agents/hold.py:HoldAgent", "--days", "5", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "hold seed 1: 5 days, final net assets 39,600.00" in result.output  # 5 days of the fee of 80
    meta = json.loads((out / "run.json").read_text())
    assert (meta["agent"], meta["world_path"], meta["days"], meta["finished"]) == ("hold", "worlds/cn20", 5, True)
    assert meta["tool_calls"]["by_tool"] == {"write_memory": 5, "end_day": 5}
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["net_assets"] == 39_600.0
    assert (out / "report.md").exists() and (out / "report.html").exists()


@pytest.mark.slow
def test_plugin_runs_take_the_agent_name_and_compare(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default run folder is runs/<world>/<agent name>-s<seed> here
    world = str(ROOT / "worlds" / "cn20")
    spec = f"{ROOT / 'examples' / 'agents' / 'hold.py'}:HoldAgent"
    for seed in ("1", "2"):
        result = CliRunner().invoke(app, ["run", "--world", world, "--agent", spec, "--seed", seed, "--days", "3"])
        assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["cn20"]  # runs of other worlds go elsewhere
    assert sorted(p.name for p in (tmp_path / "runs" / "cn20").iterdir()) == ["hold-s1", "hold-s2"]
    out = tmp_path / "cmp"
    result = _compare(tmp_path / "runs" / "cn20" / "hold-s1", tmp_path / "runs" / "cn20" / "hold-s2", "--out", out)
    assert result.exit_code == 0, result.output
    rows = (out / "comparison.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",hold," in r for r in rows[1:])


@pytest.mark.slow
def test_a_plugin_run_resumes_in_a_new_process(tmp_path):
    plugin = tmp_path / "diarist.py"
    plugin.write_text(DIARIST)
    out = tmp_path / "run"
    args = ["run", "--world", str(ROOT / "worlds" / "cn20"), "--agent", f"{plugin}:Diarist", "--days", "5"]
    args += ["--out", str(out), "--checkpoint", "sync", "--no-report"]
    stopped = CliRunner().invoke(app, args, env={"DIARIST_STOP_ON_DAY": "3"})
    assert stopped.exit_code == 130 and "interrupted after day 2" in stopped.output
    # the checkpoint holds the agent's Diary; a fresh interpreter loads the plugin under the same module name
    autovend = Path(sys.executable).parent / "autovend"
    done = subprocess.run([str(autovend), *args, "--resume"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["finished"] and meta["resumed_from_day"] == 2 and meta["agent"] == "diarist"
    notes = [
        c["arguments"]["text"]
        for c in map(json.loads, (out / "trajectory.jsonl").read_text().splitlines()[1:])
        if c["tool"] == "write_memory"
    ]
    assert notes == ["1", "1,2", "1,2,3", "1,2,3,4", "1,2,3,4,5"]


def test_printed_paths_are_never_wrapped_in_a_narrow_terminal(tmp_path):
    """A path to copy stays on one line whatever the terminal's width (rich would wrap it at 40 columns)."""
    from autovend.world.bundle import make_manifest, world_files, write_bundle
    from autovend.world.model import Economics
    from autovend.world.toy import toy_world

    world = toy_world(2, 6, seed=0, economics=Economics(horizon_days=3))
    files = world_files(world)
    files["README.md"] = b"# toy\n"
    write_bundle(tmp_path / "w", files, make_manifest(world, files, "toy", "toy", {}))
    out = tmp_path / "a-rather-long-folder-name-for-the-run" / "baseline-seed-1-of-a-narrow-terminal"
    res = CliRunner().invoke(app, ["run", "--world", str(tmp_path / "w"), "--days", "1", "--out", str(out)],
                             env={"COLUMNS": "40"})  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"report: {out / 'report.md'}, interactive: {out / 'report.html'}" in res.output
