"""Sweeps on a Dask scheduler and workers started by hand on 127.0.0.1: results equal `autovend run`'s, a second
invocation runs nothing, a worker killed mid-run costs only that run's days since its checkpoint, cost limit and
per-provider limits of LLM runs; finished runs that do not match the spec stop a sweep before it starts."""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path

import pytest
from distributed import Client

from autovend.agents.base import make_agent
from autovend.errors import ConfigError
from autovend.runner import run_episode
from autovend.sweep import parse_spec, run_sweep
from autovend.sweep.engine import make_plan
from autovend.world.bundle import load_world
from tests.agents.llm.conftest import PRICES_YAML
from tests.agents.llm.fake_openai import FakeOpenAI
from tests.sweep.conftest import autovend_run, metrics, run_json, trajectory

pytestmark = pytest.mark.slow  # a module of pipelines, clusters or long episodes

SEEDS = (1, 2)
DAYS = 4


@pytest.fixture(scope="module")
def references(toy_bundle, tmp_path_factory) -> dict[int, Path]:
    """`autovend run` of the baseline for each seed, DAYS days."""
    base = tmp_path_factory.mktemp("references")
    return {seed: autovend_run(toy_bundle, seed, DAYS, base / f"s{seed}") for seed in SEEDS}


def _spec(world: Path, days: int = DAYS, seeds=SEEDS, **extra):
    return parse_spec({"worlds": [str(world)], "agents": ["baseline"], "seeds": list(seeds), "days": days, **extra})


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "results.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _assert_same_as_autovend_run(out: Path, references: dict[int, Path], days: int = DAYS) -> None:
    rows = _rows(out)
    assert [(r["world"], r["agent"], int(r["seed"]), int(r["days"])) for r in rows] == [
        ("toy20", "baseline", seed, days) for seed in references
    ]
    for row, (seed, ref) in zip(rows, references.items(), strict=True):
        run_dir = out / "runs" / "toy20" / f"baseline-s{seed}-d{days}"
        assert row["run_dir"] == f"runs/toy20/baseline-s{seed}-d{days}"
        assert float(row["net_assets"]) == metrics(ref)["net_assets"] == run_json(ref)["final_net_assets"]
        assert row["world_hash"] == run_json(ref)["world_hash"]
        assert metrics(run_dir) == metrics(ref)
        assert trajectory(run_dir) == trajectory(ref)


def test_a_sweep_on_a_scheduler_with_two_workers_equals_autovend_run(toy_bundle, references, dask_cluster, tmp_path):
    cluster = dask_cluster(2)
    out = tmp_path / "sweep"
    first = run_sweep(_spec(toy_bundle), out, scheduler=cluster.address, workers=2)
    assert first.complete and not first.failures
    assert sorted(first.ran) == ["toy20/baseline-s1-d4", "toy20/baseline-s2-d4"]
    assert first.cluster == f"scheduler {cluster.address}: 2 workers, 2 threads"
    _assert_same_as_autovend_run(out, references)
    board = (out / "leaderboard.md").read_text()
    assert "## toy20: world toy-20x60-s0" in board and "| 1 | baseline | 2 | 1, 2 |" in board
    assert first.leaderboard_html_path == out / "leaderboard.html"
    assert "runs/toy20/baseline-s1-d4/report.html" in first.leaderboard_html_path.read_text()

    # the same spec again: everything is finished, so nothing is submitted and no run folder is touched
    stamps = {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("*") if p.is_file()}
    csv_before = (out / "results.csv").read_text()
    again = run_sweep(_spec(toy_bundle), out, scheduler=cluster.address, workers=2)
    assert again.cluster is None and again.outcomes == {} and again.complete
    assert again.plan.count("finished") == 2
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("*") if p.is_file()} == stamps
    assert (out / "results.csv").read_text() == csv_before


def _processing_worker(client: Client, run_name: str) -> str | None:
    """The name of the worker processing the task of `run_name`, if one is."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    for address, keys in client.processing().items():
        if any(str(k).startswith(run_name + "#") for k in keys):
            return str(info[address]["name"])
    return None


def test_a_worker_killed_mid_run_costs_only_that_run_from_its_checkpoint(toy_bundle, dask_cluster, tmp_path):
    days = 15
    cluster = dask_cluster(2)
    out = tmp_path / "sweep"
    refs = {seed: autovend_run(toy_bundle, seed, days, tmp_path / f"ref{seed}") for seed in SEEDS}
    result: dict[str, object] = {}
    sweep = threading.Thread(
        target=lambda: result.update(outcome=run_sweep(_spec(toy_bundle, days), out, scheduler=cluster.address)),
        daemon=True,
    )
    sweep.start()
    killed = None
    with Client(cluster.address) as client:
        deadline = time.monotonic() + 600
        while killed is None and sweep.is_alive() and time.monotonic() < deadline:
            for seed in SEEDS:
                name = f"toy20/baseline-s{seed}-d{days}"
                if (out / "runs" / name / "checkpoint" / "checkpoint.pkl").exists():
                    worker = _processing_worker(client, name)
                    if worker is not None:
                        cluster.kill(worker)
                        killed = (seed, worker)
                        break
            time.sleep(0.05)
    assert killed is not None, "no run was caught between its first checkpoint and its end"
    sweep.join(timeout=600)
    assert not sweep.is_alive()
    outcome = result["outcome"]
    assert outcome.complete and not outcome.failures  # type: ignore[attr-defined]
    _assert_same_as_autovend_run(out, refs, days)
    seed, _ = killed
    resumed = run_json(out / "runs" / "toy20" / f"baseline-s{seed}-d{days}")["resumed_from_day"]
    assert resumed in (5, 10, 15)  # it went on from a checkpoint (every 5 days for a baseline), not from day 1
    other = run_json(out / "runs" / "toy20" / f"baseline-s{3 - seed}-d{days}")["resumed_from_day"]
    assert other is None  # the run of the surviving worker was not touched


def test_finished_runs_that_do_not_match_the_spec_stop_the_sweep_before_it_starts(toy_bundle, tmp_path):
    out = tmp_path / "sweep"
    folder = out / "runs" / "toy20" / "baseline-s1-d3"
    run_episode(load_world(toy_bundle), make_agent("baseline", 2), 2, days=3, out_dir=folder, checkpoint="off")
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(ConfigError) as err:
        run_sweep(_spec(toy_bundle, days=3, seeds=(1,)), out)
    assert f"{folder.resolve()} holds a finished run of another setting: seed 2 (the spec: 1)" in str(err.value)
    assert sorted(p.name for p in folder.iterdir()) == before
    assert not (out / "results.csv").exists()


def test_llm_runs_share_a_provider_limit_and_stop_at_the_cost_limit(toy_bundle, dask_cluster, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES_YAML)
    cluster = dask_cluster(2)
    out = tmp_path / "sweep"
    with FakeOpenAI() as server:
        provider = server.base_url.split("/")[2]  # 127.0.0.1:PORT
        agent = {"agent": "openai:fake", "base_url": server.base_url, "prices": str(prices)}
        spec = parse_spec(
            {"worlds": [str(toy_bundle)], "agents": [agent], "seeds": [1, 2, 3], "days": 3, "limits": {provider: 1}}
        )
        # one run at a time (limit 1 on two workers); the first settled day costs more than the limit, so the
        # runs waiting for the provider's lease are not started
        outcome = run_sweep(spec, out, scheduler=cluster.address, max_cost_usd=1e-6)
    assert outcome.cost_stopped and not outcome.failures
    assert len(outcome.ran) == 1 and len(outcome.skipped) == 2 and not outcome.complete
    (row,) = _rows(out)
    meta = run_json(out / row["run_dir"])
    assert meta["api_cost_usd"] > 1e-6
    assert float(row["api_cost_usd"]) == meta["api_cost_usd"] == pytest.approx(outcome.cost_usd, abs=1e-12)
    assert int(row["input_tokens"]) == meta["token_usage"]["input_tokens"] > 0
    assert row["agent"] == "openai-fake" and row["agent_name"] == "openai:fake"
    skipped = set(outcome.skipped)
    assert all(not (out / "runs" / name).exists() for name in skipped)  # never started, nothing written
    board = (out / "leaderboard.md").read_text()
    assert "## Runs without a result" in board and all(f"- {name}" in board for name in skipped)


def test_the_gate_submits_no_more_runs_of_a_provider_than_its_limit(tmp_path):
    from autovend.sweep.engine import _Gate
    from autovend.sweep.tasks import WorldFacts, plan

    agents = ["baseline", {"agent": "openai:a", "base_url": "http://h:1/v1"}]
    spec = parse_spec({"worlds": ["/w/toy"], "agents": agents, "seeds": [1, 2, 3], "limits": {"h:1": 2}})
    tasks = plan(spec, tmp_path, {"toy": WorldFacts("/w/toy", "c" * 64, 5)})
    base, llm = tasks[:3], tasks[3:]
    gate = _Gate(spec.limits)
    assert [gate.admit(t) for t in base + llm] == [True, True, True, True, True, False]
    assert gate.release(base[0]) is None  # a baseline run frees no provider lease
    assert gate.release(llm[0]) is llm[2]  # the held run goes when one of the provider's ends
    assert gate.release(llm[1]) is None and gate.drop() == []
    assert gate.release(llm[2]) is None  # none of the provider's runs is under way now
    assert gate.admit(llm[0]) and gate.admit(llm[1]) and not gate.admit(llm[2])
    assert gate.drop() == [llm[2]]


def test_a_plugin_file_without_a_name_is_planned_under_its_default_label(toy_bundle, tmp_path, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the spec gives the plugin file relative to here
    spec = _spec(toy_bundle, agents=["examples/agents/hold.py:HoldAgent"], seeds=(1,))
    sweep = make_plan(spec, tmp_path / "sweep")  # was a KeyError: the label changed when the path was made absolute
    assert [t.name for t in sweep.tasks] == [f"toy20/hold-HoldAgent-s1-d{DAYS}"]
    assert sweep.states == {f"toy20/hold-HoldAgent-s1-d{DAYS}": "new"}
