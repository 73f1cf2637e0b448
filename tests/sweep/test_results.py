"""results.csv: one row per finished run, read from its run.json and metrics.json; empty cells, never NaN."""

from __future__ import annotations

import csv
import io
import json
import math

from autovend.agents.base import make_agent
from autovend.runner import run_episode
from autovend.sweep import parse_spec
from autovend.sweep.results import COLUMNS, read_result, results_csv, write_results
from autovend.sweep.tasks import WorldFacts, plan
from autovend.world.bundle import load_world


def _task(toy_bundle, out):
    world = load_world(toy_bundle)
    facts = {"toy20": WorldFacts(str(toy_bundle), world.world_hash, world.horizon_days)}
    spec = parse_spec({"worlds": [str(toy_bundle)], "agents": ["baseline"], "seeds": [3], "days": 3})
    return plan(spec, out, facts)[0], world


def test_a_row_holds_what_the_run_folder_says(toy_bundle, tmp_path):
    out = tmp_path / "sweep"
    task, world = _task(toy_bundle, out)
    assert read_result(task, out) is None  # no run yet
    run_episode(world, make_agent("baseline", 3), 3, days=3, out_dir=task.run_dir, checkpoint="off")
    meta = json.loads((out / "runs/toy20/baseline-s3-d3/run.json").read_text())
    saved = json.loads((out / "runs/toy20/baseline-s3-d3/metrics.json").read_text())
    row = read_result(task, out)
    assert row is not None
    assert (row.world, row.agent, row.agent_name, row.seed, row.days, row.horizon_days) == (
        "toy20",
        "baseline",
        "baseline",
        3,
        3,
        30,
    )
    assert row.net_assets == meta["final_net_assets"] == saved["net_assets"]
    assert row.metrics["tool_calls"] == saved["tool_calls"]
    assert row.failures == saved["failure_counts"]
    assert row.world_hash == world.world_hash and row.run_dir == "runs/toy20/baseline-s3-d3"
    assert row.api_cost_usd is None and all(v is None for v in row.tokens.values())
    assert row.wall_time_s == meta["wall_time_s"]

    path = write_results([row], out)
    records = list(csv.DictReader(io.StringIO(path.read_text())))
    assert list(records[0]) == list(COLUMNS)
    assert float(records[0]["net_assets"]) == meta["final_net_assets"]
    assert records[0]["api_cost_usd"] == "" and records[0]["input_tokens"] == ""


def test_non_finite_values_are_written_as_empty_cells(toy_bundle, tmp_path):
    out = tmp_path / "sweep"
    task, world = _task(toy_bundle, out)
    run_episode(world, make_agent("baseline", 3), 3, days=3, out_dir=task.run_dir, checkpoint="off")
    path = out / "runs/toy20/baseline-s3-d3/metrics.json"
    saved = json.loads(path.read_text())
    saved["waste_rate"] = float("nan")
    saved["capital_efficiency"] = float("inf")
    path.write_text(json.dumps(saved))  # Python's json writes NaN and Infinity
    row = read_result(task, out)
    assert row is not None and row.metrics["waste_rate"] is None and row.metrics["capital_efficiency"] is None
    (record,) = csv.DictReader(io.StringIO(results_csv([row])))
    assert record["waste_rate"] == "" and record["capital_efficiency"] == ""
    numbers = [
        float(v)
        for k, v in record.items()
        if v and k not in ("world", "world_hash", "agent", "agent_name", "run_dir", "privileged", "verified", "status")
    ]
    assert all(math.isfinite(x) for x in numbers) and len(numbers) > 10
