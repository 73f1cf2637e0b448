"""Sweeps over world variants (`autovend.sweep.variants`) and the robustness report (`autovend.sweep.robustness`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ConfigError
from autovend.provenance import current_provenance
from autovend.sweep.engine import check_and_plan, run_sweep
from autovend.sweep.results import METRIC_KEYS, ResultRow
from autovend.sweep.robustness import kendall_tau, robustness_markdown, wilson, world_robustness
from autovend.sweep.robustness_html import robustness_html
from autovend.sweep.spec import parse_spec
from autovend.sweep.variants import Variant, expand, read_variants, write_variants
from autovend.world.bundle import load_world
from autovend.world.catalogue import bundle_hash

SCENARIO = """\
name: dear-visits
summary: visits cost 90
tests: consolidated visits
shows: the prompt's fees
changes:
  fees: {visit_fee: 90}
  breakdowns: [{machines: {busiest: 1}, first_day: 2, last_day: 3}]
"""


def test_kendall_tau_and_the_wilson_interval_have_the_numbers_of_their_formulas():
    assert kendall_tau(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert kendall_tau(["a", "b", "c"], ["c", "b", "a"]) == -1.0
    assert kendall_tau(["a", "b", "c"], ["b", "a", "c"]) == pytest.approx(1 / 3)  # 2 concordant, 1 discordant
    assert kendall_tau(["a", "b", "c"], ["b", "x", "a"]) == -1.0  # over the agents both have: a, b
    assert kendall_tau(["a"], ["a"]) is None
    lo, hi = wilson(3, 4)  # p = 0.75: (0.75 + 1.92/4) / 1.96 -+ ...
    assert (lo, hi) == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0 and wilson(0, 0) is None


def _row(world: str, agent: str, seed: int, net: float) -> ResultRow:
    metrics = dict.fromkeys(METRIC_KEYS)
    metrics["net_assets"] = net
    meta = {
        "agent_config": {},
        "world_name": world,
        "start_cash": 40000.0,
        "provenance": current_provenance().to_json(),
    }
    return ResultRow(
        world=world,
        world_hash=world[0] * 64,
        agent=agent,
        agent_name=agent,
        seed=seed,
        days=10,
        horizon_days=30,
        metrics=metrics,
        failures={},
        tokens={},
        api_cost_usd=None,
        wall_time_s=1.0,
        resumed_from_day=None,
        run_dir=f"runs/{world}/{agent}-s{seed}-d10",
        meta=meta,
        daily_fees=160.0,
    )


NETS = {  # variant -> agent -> net assets on seeds 1-3
    "toy": {"a": (50_000, 51_000, 52_000), "b": (45_000, 46_500, 47_000), "c": (40_000, 40_100, 39_900)},
    "toy.x": {"a": (44_000, 45_000, 46_000), "b": (48_000, 49_500, 50_000), "c": (40_000, 40_100, 39_900)},
    "toy.y": {"a": (50_500, 51_000, 51_800), "b": (50_000, 51_200, 51_500), "c": (40_000, 40_100, 39_900)},
}
VARIANTS = [
    Variant("toy", "toy", "world", "", "t" * 64),
    Variant("toy.x", "toy", "scenario", "x", "x" * 64, "b's world"),
    Variant("toy.y", "toy", "scenario", "y", "y" * 64, "close"),
]
ROWS = [_row(w, a, s + 1, n) for w, by in NETS.items() for a, xs in by.items() for s, n in enumerate(xs)]


def test_the_report_counts_variants_won_and_names_the_flip():
    w = world_robustness("toy", VARIANTS, ROWS)
    assert [v.order for v in w.variants] == [("a", "b", "c"), ("b", "a", "c"), ("a", "b", "c")]
    assert [v.tau for v in w.variants] == [None, pytest.approx(1 / 3), 1.0]
    ab = next(p for p in w.pairs if (p.a, p.b) == ("a", "b"))
    # a - b: base +5,000 +4,500 +5,000 (interval above 0); x: -4,000 -4,500 -4,000 (below); y: +500 -200 +300 (covers)
    assert (ab.variants, ab.a_wins, ab.b_wins, ab.undecided) == (3, 1, 1, 1)
    assert ab.share == pytest.approx(1 / 3) and ab.median_difference == pytest.approx(200.0)
    ac = next(p for p in w.pairs if (p.a, p.b) == ("a", "c"))
    assert (ac.a_wins, ac.share) == (3, 1.0)
    (flip,) = w.flips  # toy.y keeps the order (a ahead by +200 on average, not told apart)
    assert flip.startswith("In toy.x (scenario x), b finishes above a: b − a +4,167 [")
    assert "its interval excludes zero" in flip and "on toy a − b was +4,833 [" in flip
    # no hold or oracle runs: scores are net assets scaled within each variant
    # b: (46,166.67 - 40,000) / (51,000 - 40,000) = 0.5606
    assert w.variants[0].scaled and w.variants[0].score == {"a": 1.0, "b": pytest.approx(0.5606, abs=1e-4), "c": 0.0}
    md = robustness_markdown([w])
    assert "| a | b | 3 | 1 | 1 | 1 | 0.33 [0.06, 0.79] | +200 |" in md and "In toy.x (scenario x)" in md
    page = robustness_html([w])
    # the darkest green (0.8 to 1): each variant's leader, and b on toy.y ((50,900 - 40,000) / (51,100 - 40,000))
    assert page.count('class="num h-4"') == 4 and "<script" not in page and "Kendall&#x27;s tau" in page


@pytest.fixture()
def scenario_file(tmp_path) -> Path:
    path = tmp_path / "dear-visits.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def _spec(world: Path, scenario: Path, **extra) -> dict:
    agents = ["autovend.agents.hold:HoldAgent", "baseline"]
    return {"worlds": [str(world)], "agents": agents, "seeds": [1, 2], "days": 4, "scenarios": [str(scenario)], **extra}


def test_variants_are_planned_in_memory_and_written_once_with_the_hashes_planned(toy_bundle, scenario_file, tmp_path):
    spec = parse_spec(_spec(toy_bundle, scenario_file))
    assert spec.n_variants == 2 and spec.n_runs == 8
    expanded, facts, variants = expand(spec, tmp_path / "out")
    assert [w.label for w in expanded.worlds] == ["toy20", "toy20.dear-visits"]
    assert [(v.label, v.kind) for v in variants] == [("toy20", "world"), ("toy20.dear-visits", "scenario")]
    plan = check_and_plan(spec, tmp_path / "out")
    assert len(plan.tasks) == 8 and not (tmp_path / "out").exists()  # planning writes nothing
    written = write_variants(spec, tmp_path / "out")
    folder = tmp_path / "out" / "variants" / "toy20.dear-visits"
    assert bundle_hash(folder) == facts["toy20.dear-visits"].world_hash == written[1].world_hash
    assert load_world(folder).economics.visit_fee == 90.0
    assert read_variants(tmp_path / "out") == written
    before = (folder / "manifest.json").stat().st_mtime_ns
    write_variants(spec, tmp_path / "out")
    assert (folder / "manifest.json").stat().st_mtime_ns == before  # kept, not written again


def test_a_scenario_listed_twice_or_missing_is_refused_in_words(toy_bundle, scenario_file, tmp_path):
    with pytest.raises(ConfigError, match="is listed twice"):
        parse_spec({**_spec(toy_bundle, scenario_file), "scenarios": [str(scenario_file), str(scenario_file)]})
    spec = parse_spec({**_spec(toy_bundle, scenario_file), "scenarios": ["no-such-scenario"]})
    with pytest.raises(ConfigError, match="scenarios, entry 1: there is no scenario 'no-such-scenario'"):
        check_and_plan(spec, tmp_path / "out")


def test_a_dry_run_lists_the_variants_runs(toy_bundle, scenario_file, tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(json.dumps(_spec(toy_bundle, scenario_file)), encoding="utf-8")
    res = CliRunner().invoke(app, ["sweep", str(spec_file), "--out", str(tmp_path / "out"), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "8 runs (1 world x 2 variants x 2 agents x 2 seeds)" in res.output
    assert "runs/toy20.dear-visits/baseline-s2-d4" in res.output and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_sweep_over_variants_runs_them_and_writes_the_robustness_report(toy_bundle, scenario_file, tmp_path):
    out = tmp_path / "out"
    outcome = run_sweep(parse_spec(_spec(toy_bundle, scenario_file)), out, workers=1)
    assert outcome.complete and len(outcome.rows) == 8
    assert {r.world for r in outcome.rows} == {"toy20", "toy20.dear-visits"}
    assert all(r.verified for r in outcome.rows)
    report = (out / "robustness.md").read_text()
    assert "toy20.dear-visits" in report and "Kendall's tau" in report
    assert "## Across variants" in (out / "leaderboard.md").read_text()
    data = json.loads((out / "robustness.json").read_text())
    assert [v["label"] for v in data[0]["variants"]] == ["toy20", "toy20.dear-visits"]
    again = run_sweep(parse_spec(_spec(toy_bundle, scenario_file)), out, workers=1)  # nothing left to do
    assert not again.ran and again.complete


def test_sweep_takes_scenarios_on_the_command_line_too(toy_bundle, scenario_file, tmp_path):
    spec = {"worlds": [str(toy_bundle)], "agents": ["baseline"], "seeds": [1], "days": 2}
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    args = ["sweep", str(spec_file), "--out", str(tmp_path / "out"), "--dry-run", "--scenario", str(scenario_file)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "2 runs (1 world x 2 variants x 1 agent x 1 seed)" in res.output and "toy20.dear-visits" in res.output
    res = CliRunner().invoke(app, [*args, "--scenario", str(scenario_file)])
    assert res.exit_code != 0 and "is listed twice" in str(res.exception)
