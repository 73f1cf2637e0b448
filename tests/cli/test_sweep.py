"""`autovend sweep`: a 2-seed baseline sweep on the local cluster equals `autovend run`; the second call runs nothing."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend import parallel
from autovend.cli import app
from autovend.errors import ConfigError
from autovend.sweep.engine import SchedulerError
from tests.sweep.conftest import autovend_run, metrics, run_json, toy_bundle, trajectory  # noqa: F401

DAYS = 3


def _write_spec(path, world, seeds=(1, 2)):
    path.write_text(f"worlds: [{world}]\nagents: [baseline]\nseeds: [{', '.join(map(str, seeds))}]\ndays: {DAYS}\n")
    return path


@pytest.mark.slow
def test_a_sweep_on_the_local_cluster(toy_bundle, tmp_path):  # noqa: F811
    spec = _write_spec(tmp_path / "sweep.yaml", toy_bundle)
    out = tmp_path / "out"
    args = ["sweep", str(spec), "--out", str(out), "--workers", "2"]
    first = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert first.exit_code == 0, first.output
    assert "2 runs (1 world x 1 agent x 2 seeds): 0 finished, 0 to resume, 2 to start" in first.output
    assert "local cluster: 2 workers, 2 threads" in first.output
    assert "2 runs finished now, 2 of 2 have results" in first.output
    with (out / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [int(r["seed"]) for r in rows] == [1, 2]
    for row in rows:
        seed = int(row["seed"])
        ref = autovend_run(toy_bundle, seed, DAYS, tmp_path / f"ref{seed}")
        run_dir = out / row["run_dir"]
        assert float(row["net_assets"]) == run_json(ref)["final_net_assets"]
        assert metrics(run_dir) == metrics(ref)
        assert trajectory(run_dir) == trajectory(ref)

    again = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.output
    assert "0 finished" not in again.output and "2 finished, 0 to resume, 0 to start" in again.output
    assert "nothing to run" in again.output and "local cluster" not in again.output


def test_a_bad_spec_is_refused_before_anything_runs(tmp_path):
    spec = tmp_path / "sweep.yaml"
    spec.write_text("worlds: [w]\nagents: [baseline]\nseeds: [1, 1]\n")
    result = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out")])
    assert isinstance(result.exception, ConfigError)  # main() prints it and exits 2
    assert "seed 1 is listed twice" in str(result.exception)
    assert not (tmp_path / "out").exists()


def test_a_world_that_is_no_bundle_is_named(tmp_path):
    spec = _write_spec(tmp_path / "sweep.yaml", tmp_path / "nowhere")
    result = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out")])
    assert "worlds, entry 1: world" in str(result.exception) and "nowhere' does not exist" in str(result.exception)


def test_an_unreachable_scheduler_is_a_clear_error(toy_bundle, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", "2s")  # the connection is autovend.parallel.scheduler_client
    spec = _write_spec(tmp_path / "sweep.yaml", toy_bundle, seeds=(1,))
    result = CliRunner().invoke(
        app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:9"]
    )
    assert isinstance(result.exception, SchedulerError)
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in str(result.exception)
    assert "start one with `dask scheduler`" in str(result.exception)


@pytest.mark.parametrize("flag", ["--workers", "--retries"])
def test_counts_must_be_positive(tmp_path, flag):
    result = CliRunner().invoke(app, ["sweep", "x.yaml", "--out", str(tmp_path), flag, "-1"])
    assert result.exit_code == 2 and "Invalid value" in result.output


HOLD = Path(__file__).resolve().parents[2] / "examples" / "agents" / "hold.py"


def test_dry_run_lists_the_runs_and_which_exist_and_writes_nothing(toy_bundle, tmp_path):  # noqa: F811
    spec = tmp_path / "sweep.yaml"
    spec.write_text(f"worlds: [{toy_bundle}]\nagents: [baseline, '{HOLD}:HoldAgent']\nseeds: [1, 2]\ndays: {DAYS}\n")
    out = tmp_path / "out"
    autovend_run(toy_bundle, 1, DAYS, out / "runs" / "toy20" / f"baseline-s1-d{DAYS}")  # one run already there
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    result = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(out), "--dry-run"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "4 runs (1 world x 2 agents x 2 seeds): 1 finished, 0 to resume, 3 to start" in result.output
    lines = [" ".join(line.split()) for line in result.output.splitlines()]
    assert f"runs/toy20/baseline-s1-d{DAYS} finished: kept" in lines
    assert f"runs/toy20/baseline-s2-d{DAYS} to start" in lines
    assert f"runs/toy20/hold-HoldAgent-s2-d{DAYS} to start" in lines  # a plugin file without `name:`
    assert "dry run: nothing was run or written" in result.output and "local cluster" not in result.output
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_dry_run_refuses_a_folder_the_sweep_would_refuse(toy_bundle, tmp_path):  # noqa: F811
    spec = _write_spec(tmp_path / "sweep.yaml", toy_bundle)
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("mine\n")
    result = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(out), "--dry-run"])
    assert "is not an earlier sweep's folder" in str(result.exception)


def test_the_shipped_spec_runs_by_name_on_shipped_worlds_and_configs_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no worlds/, no params/ here
    result = CliRunner().invoke(app, ["sweep", "baselines-cn20", "--out", "sweep", "--dry-run"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "15 runs (1 world x 5 agents x 3 seeds): 0 finished, 0 to resume, 15 to start" in result.output
    for name in (
        "baseline-s1-d180",
        "baseline-paper-s2-d180",
        "baseline-pinned-s3-d180",
        "hold-s1-d180",
        "oracle-s3-d180",
    ):
        assert f"runs/cn20/{name}" in result.output
    assert not (tmp_path / "sweep").exists()


def test_an_unknown_spec_name_lists_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["sweep", "baselines", "--out", "sweep", "--dry-run"])
    assert isinstance(result.exception, ConfigError)
    assert "there is no sweep spec 'baselines'" in str(result.exception)
    assert "(shipped: baselines-cn20, scenarios-cn20)" in str(result.exception)
