"""`autovend run` (progress, refusals, resume) and `autovend compare` (table, per-agent summary, files)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline_config import BaselineConfig
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
        pytest.param(["--agent", "oracle"], "there is no agent 'oracle'", id="unknown-agent"),
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


def test_compare_prints_runs_and_the_agent_summary(toy_runs, tmp_path):
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", *map(str, toy_runs), "--out", str(out)], env={"COLUMNS": "220"})
    assert result.exit_code == 0, result.output
    assert "baseline-s1" in result.output and "baseline-s2" in result.output
    assert "By agent" in result.output
    finals = [json.loads((d / "run.json").read_text())["final_net_assets"] for d in toy_runs]
    mean = sum(finals) / 2
    assert f"{mean:,.2f}" in result.output  # the per-agent mean of the two runs
    for name in ("comparison.md", "comparison.csv", "net_assets.png", "profile.png", "early_late.png"):
        assert (out / name).exists(), name


def test_compare_refuses_a_folder_that_is_no_run(tmp_path):
    result = CliRunner().invoke(app, ["compare", str(tmp_path)])
    assert isinstance(result.exception, RunFolderError)
