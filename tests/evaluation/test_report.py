"""metrics.json, report.md and figures of a run; the comparison table, per-agent summary and figures."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from autovend.evaluation.comparability import IncomparableRunsError
from autovend.evaluation.figures import early_late_table, profile_scores
from autovend.evaluation.metrics import compute_metrics
from autovend.evaluation.report import compare, load_metrics, summarize, write_comparison, write_run_outputs
from autovend.evaluation.rundata import RunData, save_run_data
from autovend.evaluation.settings import EvalSettings
from autovend.session import ToolSession

from .conftest import make_run, summary_row

PNG = b"\x89PNG\r\n\x1a\n"
SHORT = EvalSettings(
    checkpoint_every=4, pricing_stride=1, execution_from_day=4, early_window=(4, 6), late_window=(9, 11)
)


def _session_run(world, run_dir, seed, price_a):
    """Order everything on day 1, stock both machines on day 4 and 8, run 12 days (the whole horizon)."""
    with ToolSession(world, seed=seed, trajectory_path=run_dir / "trajectory.jsonl") as s:
        s.call("get_catalog", {})
        s.call("place_order", {"items": [{"sku_id": k, "qty": 30} for k in "ABC"]})
        for day in range(1, 13):
            if day in (4, 8):
                s.call(
                    "restock",
                    {
                        "items": [
                            {"device_id": "M1", "sku_id": "A", "qty": 4},
                            {"device_id": "M1", "sku_id": "B", "qty": 4},
                            {"device_id": "M2", "sku_id": "C", "qty": 4},
                            {"device_id": "M2", "sku_id": "B", "qty": 3},
                        ]
                    },
                )
                s.call("restock", {"items": [{"device_id": "M1", "sku_id": "A", "qty": 99}]})  # over capacity
            if day == 4:
                s.call("adjust_price", {"items": [{"device_id": "M1", "sku_id": "A", "price": price_a}]})
            s.call("end_day", {})
        # one agent whose price depends on the seed (a config that differed would make two agents to compare)
        save_run_data(s, run_dir, meta={"agent": "scripted", "agent_config": {"price_a": {"1": 4.0, "2": 6.0}}})
    return RunData.load(run_dir)


@pytest.fixture(scope="module")
def runs(world, tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    return [_session_run(world, base / f"s{seed}", seed, price) for seed, price in ((1, 4.0), (2, 6.0))]


def test_run_outputs(runs):
    run = runs[0]
    metrics = write_run_outputs(run, settings=SHORT)
    assert metrics["run"]["name"] == "s1"
    files = {p.name for p in run.run_dir.iterdir()}
    assert {"metrics.json", "report.md", "report.html", "net_assets.png", "operations.png", "early_late.png"} <= files
    assert (run.run_dir / "report.html").read_text().startswith("<!DOCTYPE html>")
    for name in ("net_assets.png", "operations.png", "early_late.png"):
        assert (run.run_dir / name).read_bytes()[:8] == PNG
    saved = json.loads((run.run_dir / "metrics.json").read_text())
    assert saved == json.loads(json.dumps(compute_metrics(RunData.load(run.run_dir), SHORT)))
    assert saved["net_assets"] == run.daily["net_assets"].iloc[-1] and saved["run"]["days"] == 12
    # 1 catalog + 1 order + 12 end_day + 2 x 2 restock + 1 price = 19 calls, none refused whole
    assert saved["tool_calls"] == 19 and saved["details"]["tool_calls"]["errors"] == 0
    assert saved["assortment"] is not None and saved["reassignment_gap"] is not None
    assert saved["pricing_regret"] >= 0 and saved["details"]["pricing"]["machine_days"] == 2 * 9
    assert saved["asset_growth_early"] is not None and saved["asset_growth_late"] is not None
    report = (run.run_dir / "report.md").read_text()
    assert f"| Net assets | {saved['net_assets'] / 1000:.2f} | thousand CNY |" in report
    assert "| Tool calls | 19 | calls |" in report and "## Failure modes" in report
    assert f"(hash {run.world_hash[:12]})" in report and len(run.world_hash) == 64  # built in memory: its content's


def test_load_metrics_reuses_a_current_file(runs):
    run = runs[0]
    write_run_outputs(run, settings=SHORT)
    path = run.run_dir / "metrics.json"
    marked = json.loads(path.read_text())
    marked["net_assets"] = -1.0
    path.write_text(json.dumps(marked))
    assert load_metrics(run, SHORT)["net_assets"] == -1.0  # same version, settings and days: the file
    assert load_metrics(run, EvalSettings())["net_assets"] != -1.0  # other settings: computed afresh


def _na_run(world, agent, seed, final):
    return make_run(
        world,
        meta={"agent": agent, "seed": seed},
        daily_summary=[summary_row(1, net_assets=40000.0, cash=40000.0), summary_row(2, net_assets=final, cash=final)],
    )


def test_compare_and_summarize(world):
    runs = [_na_run(world, "x", 1, 40100.0), _na_run(world, "x", 2, 40300.0), _na_run(world, "y", 1, 39000.0)]
    table = compare(runs)
    assert list(table["run"]) == ["x-s1", "x-s2", "y-s1"] and list(table["net_assets"]) == [40100, 40300, 39000]
    summary = summarize(table)
    # x: mean 40200, sample std sqrt((100^2 + 100^2) / 1) = 141.421, CV 141.421 / 40200 = 0.35%
    assert summary.loc["x", "runs"] == 2 and summary.loc["x", "net_assets"] == 40200.0
    assert summary.loc["x", "net_assets_std"] == pytest.approx(math.sqrt(20000.0))
    assert summary.loc["x", "net_assets_cv"] == pytest.approx(math.sqrt(20000.0) / 40200.0)
    assert summary.loc["y", "runs"] == 1 and np.isnan(summary.loc["y", "net_assets_std"])


def test_profile_scores_by_hand():
    summary = pd.DataFrame(
        {
            "net_assets": [100.0, 200.0, 150.0],
            "assortment": [0.5, 0.5, 0.5],
            "waste_rate": [0.1, 0.3, 0.2],
            "pricing_regret": [1.0, 3.0, None],
            "capital_efficiency": [0.02, 0.04, 0.03],
        },
        index=["a", "b", "c"],
    )
    s = profile_scores(summary)
    assert s["Profitability"].tolist() == [0.0, 1.0, 0.5]
    assert s["Assortment"].tolist() == [1.0, 1.0, 1.0]  # no spread: all best
    assert s["Inventory"].tolist() == pytest.approx([1.0, 0.0, 0.5])  # lower waste is better
    assert s["Pricing"].tolist() == [1.0, 0.0, 0.0]  # lower regret is better; missing scores 0
    assert s["Capital efficiency"].tolist() == pytest.approx([0.0, 1.0, 0.5])


def test_early_late_table_means_over_runs():
    def m(early, late):
        return {
            "details": {
                "feedback": {
                    "early": {"asset_growth": early, "gross_profit": 1.0, "costs": 0.5, "visits": 1.0},
                    "late": None
                    if late is None
                    else {"asset_growth": late, "gross_profit": 2.0, "costs": 1.0, "visits": 2.0},
                }
            }
        }

    t = early_late_table([m(10.0, 4.0), m(20.0, 8.0), m(5.0, None)], ["x", "x", "y"])
    rows = {(r.group, r.period): r.asset_growth for r in t.itertuples()}
    assert rows == {("x", "early"): 15.0, ("x", "late"): 6.0, ("y", "early"): 5.0}


def test_write_comparison(runs, tmp_path):
    table, summary = write_comparison(runs, tmp_path / "cmp", SHORT)
    for name in ("net_assets.png", "early_late.png"):
        assert (tmp_path / "cmp" / name).read_bytes()[:8] == PNG
    assert (tmp_path / "cmp" / "report.html").read_text().startswith("<!DOCTYPE html>")
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "| scripted | 2 |" in text and f"| s1 | scripted | 1 | 12 | {runs[0].world_hash[:12]} |" in text
    assert pd.read_csv(tmp_path / "cmp" / "comparison.csv")["run"].tolist() == ["s1", "s2"]
    assert summary.loc["scripted", "net_assets"] == pytest.approx(table["net_assets"].mean())
    # one agent: a radar that ranks agents against each other would read 1 = best on every axis
    assert not (tmp_path / "cmp" / "profile.png").exists() and "profile.png" not in text
    assert "No profile radar: the radar scores each axis min-max across agents" in text


def test_write_comparison_draws_the_profile_for_two_agents(runs, tmp_path):
    s1, s2 = runs
    other = dataclasses.replace(s2, meta={**s2.meta, "agent": "other"})
    write_comparison([s1, other], tmp_path / "cmp", SHORT)
    assert (tmp_path / "cmp" / "profile.png").read_bytes()[:8] == PNG
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "![profile](profile.png)" in text and "No profile radar" not in text


def test_write_comparison_refuses_runs_that_do_not_compare(runs, tmp_path):
    s1, s2 = runs
    out = tmp_path / "cmp"
    with pytest.raises(IncomparableRunsError, match="the same agent and seed twice: scripted") as err:
        write_comparison([s1, s2, s1], out, SHORT)
    assert f"in {s1.run_dir}, {s1.run_dir}" in str(err.value) and "--force" in str(err.value)
    assert not out.exists()  # refused before writing anything
    moved = dataclasses.replace(s2, meta={**s2.meta, "world_hash": "c0ffee" * 10 + "beef"})  # as if on another world
    h1 = s1.world_hash  # a world built in memory is recorded by its content's hash
    with pytest.raises(
        IncomparableRunsError, match=f"different worlds: world hand \\({h1[:12]}\\) in .*s1; world hand"
    ):
        write_comparison([s1, moved], out, SHORT)
    table, _ = write_comparison([s1, moved], out, SHORT, force=True)
    assert table["world_hash"].tolist() == [h1, "c0ffee" * 10 + "beef"]
    text = (out / "comparison.md").read_text()
    assert "## Compared with --force although they are not comparable" in text
    assert (
        f"- they were made on different worlds: world hand ({h1[:12]}) in {s1.run_dir}; world hand (c0ffeec0ffee)"
        in text
    )
    assert f"| s1 | scripted | 1 | 12 | {h1[:12]} |" in text and "| s2 | scripted | 2 | 12 | c0ffeec0ffee |" in text
    csv = pd.read_csv(out / "comparison.csv", dtype={"world_hash": str}, keep_default_na=False)
    assert csv["world_hash"].tolist() == [h1, "c0ffee" * 10 + "beef"]
