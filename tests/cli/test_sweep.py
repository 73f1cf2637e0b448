"""`autovend sweep`: a 2-seed baseline sweep on the local cluster equals `autovend run`; the second call runs nothing."""

from __future__ import annotations

import csv

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ConfigError
from autovend.sweep import engine
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
    assert "no world bundle at" in str(result.exception) and "nowhere" in str(result.exception)


def test_an_unreachable_scheduler_is_a_clear_error(toy_bundle, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(engine, "CONNECT_TIMEOUT", "2s")
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
