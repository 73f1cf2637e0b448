"""Paired comparisons over seeds, tie-aware ranks, agents told apart by config, and the normalised score.

The statistics are checked against numbers worked by hand (t quantiles: t(0.975, 2) = 4.3027, t(0.80, 2) =
1.0607, t(0.975, 4) = 2.7764, t(0.80, 4) = 0.9410, t(0.975, 9) = 2.2622, t(0.80, 9) = 0.8834); the comparison
of real runs on a toy world checks comparison.json, the normalised score and what compare prints.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.plugins import load_agent
from autovend.cli import app
from autovend.evaluation import RunData, write_comparison
from autovend.evaluation.headroom import hold_net_assets, normalised_score
from autovend.evaluation.paired import (
    agent_labels,
    min_detectable,
    paired_difference,
    paired_differences,
    rank_order,
    ranks,
)
from autovend.runner import run_episode
from autovend.world.bundle import load_world, make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world

ROOT = Path(__file__).resolve().parents[2]
HOLD = str(ROOT / "examples" / "agents" / "hold.py") + ":HoldAgent"
DAYS = 8
SEEDS = (1, 2, 3)


def test_paired_difference_by_hand():
    a = {1: 10.0, 2: 12.0, 3: 11.0}
    b = {1: 9.0, 2: 10.5, 3: 10.0, 4: 99.0}  # seed 4 has no partner: left out
    p = paired_difference("a", "b", "net_assets", a, b)
    # d = 1, 1.5, 1: mean 7/6, sd 0.288675; 4.3027 x 0.288675 / sqrt(3) = 0.717108
    assert (p.n_seeds, p.seeds, p.interval) == (3, (1, 2, 3), "t")
    assert p.mean_difference == pytest.approx(7 / 6) and p.sd_difference == pytest.approx(0.288675, abs=1e-6)
    assert (p.ci_low, p.ci_high) == pytest.approx((7 / 6 - 0.717108, 7 / 6 + 0.717108), abs=1e-5)
    # Welch on the same runs: variances 1 and 0.583333, se = sqrt(1/3 + 0.583333/3) = 0.726483,
    # df = 0.527778^2 / ((1/3)^2 / 2 + 0.194444^2 / 2) = 3.7409, t(0.975, 3.7409) = 2.8540: half 2.073342
    assert (p.unpaired_low, p.unpaired_high) == pytest.approx((7 / 6 - 2.073342, 7 / 6 + 2.073342), abs=1e-4)
    assert p.ci_high - p.ci_low < p.unpaired_high - p.unpaired_low
    # minimum detectable: (t(0.975, n-1) + t(0.80, n-1)) sd / sqrt(n)
    assert p.min_detectable_difference == pytest.approx((4.3027 + 1.0607) * 0.288675 / math.sqrt(3), abs=1e-4)
    assert p.min_detectable_difference_5 == pytest.approx((2.7764 + 0.9410) * 0.288675 / math.sqrt(5), abs=1e-4)
    assert p.min_detectable_difference_10 == pytest.approx((2.2622 + 0.8834) * 0.288675 / math.sqrt(10), abs=1e-4)
    assert p.significant and set(p.to_json()) >= {"a", "b", "metric", "n_seeds", "mean_difference", "ci_low"}


def test_one_seed_gives_the_difference_and_nothing_else():
    p = paired_difference("a", "b", "net_assets", {1: 5.0}, {1: 3.0})
    assert (p.mean_difference, p.ci_low, p.unpaired_low, p.min_detectable_difference) == (2.0, None, None, None)
    assert not p.significant and min_detectable(1.0, 1) is None


def test_ranks_share_a_place_where_the_interval_holds_zero():
    results = {
        "a": {1: {"net_assets": 10.0}, 2: {"net_assets": 12.0}, 3: {"net_assets": 11.0}},
        "b": {1: {"net_assets": 9.0}, 2: {"net_assets": 10.5}, 3: {"net_assets": 10.0}},
        "c": {1: {"net_assets": 9.5}, 2: {"net_assets": 10.0}, 3: {"net_assets": 10.4}},
    }
    order = rank_order(results)
    assert order == ["a", "c", "b"]  # means 11, 9.967, 9.833
    # a - b = 1, 1.5, 1: [0.45, 1.88], above zero; a - c = 0.5, 2, 0.6 (sd 0.838): 1.033 ± 2.08, holds zero;
    # c - b = 0.5, -0.5, 0.4: holds zero. Rank = 1 + agents significantly above: a 1, c 1, b 2 (a is above it)
    assert ranks(order, paired_differences(results, ["net_assets"], order)) == {"a": "1=", "c": "1=", "b": "2"}


def test_agent_labels_tell_configurations_of_one_name_apart():
    agents = [
        ("baseline", {"x": 1, "y": 2}),
        ("baseline", {"x": 1, "y": 3}),
        ("hold", {}),
        ("baseline", {"x": 1, "y": 2}),
    ]
    labels, settings = agent_labels(agents)
    assert labels == ["baseline (y=2)", "baseline (y=3)", "hold", "baseline (y=2)"]
    assert settings == {"baseline (y=2)": "y=2", "baseline (y=3)": "y=3"}
    long = [("b", {f"setting_{i}": i for i in range(9)}), ("b", {f"setting_{i}": -i for i in range(9)})]
    assert agent_labels(long)[0] == ["b (config 1)", "b (config 2)"]


def test_normalised_score():
    assert normalised_score(50.0, 10.0, 110.0) == 0.4
    assert normalised_score(5.0, 10.0, 110.0) == -0.05  # lost money against holding it
    assert normalised_score(50.0, 10.0, 10.0) is None and normalised_score(None, 0.0, 1.0) is None


# ------------------------------------------------------------------------------------------------ real runs


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """A toy bundle; 8-day runs of two baseline configs, the hold plugin and the oracle on seeds 1-3; compare."""
    toy = toy_world(4, 30, seed=0, economics=Economics(horizon_days=DAYS))
    base = tmp_path_factory.mktemp("paired")
    files = world_files(toy)
    files["README.md"] = b"# toy\n"
    write_bundle(base / "toy4", files, make_manifest(toy, files, "toy", "toy", {}))
    world = load_world(base / "toy4")
    runs: dict[str, list[Path]] = {"default": [], "weekly": [], "hold": [], "oracle": []}
    for seed in SEEDS:
        agents = {
            "default": BaselineAgent(BaselineConfig(), seed=seed),
            "weekly": BaselineAgent(BaselineConfig(cycle_rule="fixed", low_stock_visits=False), seed=seed),
            "hold": load_agent(HOLD, seed),
            "oracle": load_agent("oracle", seed),
        }
        for name, agent in agents.items():
            out = base / f"{name}-s{seed}"
            run_episode(world, agent, seed, out_dir=out, checkpoint="off", world_path=base / "toy4", evaluate=False)
            runs[name].append(out)
    return world, base, runs


@pytest.mark.slow  # twelve runs and a comparison with oracle runs in memory
def test_comparison_json_pairs_the_agents_and_scores_them_against_hold_and_oracle(compared):
    world, base, runs = compared
    dirs = runs["default"] + runs["weekly"] + runs["hold"]
    table, summary = write_comparison([RunData.load(d) for d in dirs], base / "cmp")
    data = json.loads((base / "cmp" / "comparison.json").read_text())
    assert data["interval"] == "t" and data["comparable"] is True
    net = {(p["a"], p["b"]): p for p in data["paired"] if p["metric"] == "net_assets"}
    default, weekly = (
        'baseline (cycle_rule="best", low_stock_visits=true)',
        'baseline (cycle_rule="fixed", low_stock_visits=false)',
    )
    assert {a for a, _ in net} | {b for _, b in net} == {default, weekly, "hold"}
    for p in net.values():
        assert p["n_seeds"] == 3 and p["ci_low"] <= p["mean_difference"] <= p["ci_high"]
        assert p["min_detectable_difference"] > p["min_detectable_difference_5"] > p["min_detectable_difference_10"]
    # hold has the same net assets on every seed (40,000 - 8 x 16 = 39,872): paired and unpaired coincide
    hold_pair = next(p for (a, b), p in net.items() if "hold" in (a, b))
    assert hold_pair["ci_low"] == pytest.approx(hold_pair["unpaired_low"])
    assert (
        {r["net_assets"] for r in data["runs"] if r["agent"] == "hold"} == {hold_net_assets(world, DAYS)} == {39872.0}
    )
    # the oracle is computed in memory here (no oracle run among these): the hold scores 0 on every seed
    refs = {r["seed"]: r for r in data["references"]}
    assert sorted(refs) == [1, 2, 3] and {r["source"] for r in refs.values()} == {"computed"}
    assert all(r["hold"] == 39872.0 for r in refs.values())
    scores = {(r["agent"], r["seed"]): r["normalised_score"] for r in data["runs"]}
    for seed in SEEDS:
        assert scores[("hold", seed)] == 0.0
        run = next(r for r in data["runs"] if r["agent"] == default and r["seed"] == seed)
        assert scores[(default, seed)] == pytest.approx(
            (run["net_assets"] - 39872.0) / (refs[seed]["oracle"] - 39872.0)
        )
    text = (base / "cmp" / "comparison.md").read_text()
    assert "## Paired differences (same seeds)" in text and "| Normalised score |" in text
    assert f"- {default}: cycle_rule=" in text


@pytest.mark.slow  # twelve runs and a comparison with oracle runs in memory
def test_oracle_runs_compared_give_the_reference_and_are_marked_privileged(compared):
    _, base, runs = compared
    dirs = runs["default"] + runs["oracle"]
    write_comparison([RunData.load(d) for d in dirs], base / "cmp2", compute_references=False)
    data = json.loads((base / "cmp2" / "comparison.json").read_text())
    assert {r["source"] for r in data["references"]} == {"runs compared"}
    oracle = [r for r in data["runs"] if r["agent"] == "oracle (privileged)"]
    assert len(oracle) == 3 and all(r["normalised_score"] == 1.0 for r in oracle)


@pytest.mark.slow  # twelve runs and a comparison with oracle runs in memory
def test_compare_prints_paired_differences_and_one_missing_value_mark(compared):
    _, base, runs = compared
    out = base / "cmp3"
    result = CliRunner().invoke(
        app, ["compare", *map(str, runs["default"][:1] + runs["hold"]), "--out", str(out)], env={"COLUMNS": "220"}
    )
    assert result.exit_code == 0, result.output
    assert "nan" not in result.output.lower()  # one run of the baseline: its std and CV are "–"
    assert "Paired differences of net assets" in result.output and "Normalised score" in result.output
    assert json.loads((out / "comparison.json").read_text())["paired"][0]["n_seeds"] == 1
