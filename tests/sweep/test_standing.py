"""What a sweep's rows add from their group: normalised scores, paired differences to the leader, paired.csv."""

from __future__ import annotations

import csv
import io

import pytest

from autovend.provenance import current_provenance
from autovend.sweep.leaderboard import leaderboard_markdown
from autovend.sweep.results import COLUMNS, METRIC_KEYS, ResultRow, results_csv
from autovend.sweep.standing import paired_csv, row_standings, standing_cells

HASH = "a" * 64


def _row(agent: str, seed: int, net: float, privileged: bool = False, verified: bool | None = True) -> ResultRow:
    metrics = dict.fromkeys(METRIC_KEYS)
    metrics["net_assets"] = net
    meta = {"agent_config": {}, "world_name": "toy", "provenance": current_provenance().to_json()}
    meta |= {"start_cash": 40000.0}
    if privileged:  # the oracle's run: marked, and by the oracle's entry point (privilege follows the code)
        meta |= {"privileged": True, "agent_entry_point": "autovend.agents.oracle:OracleAgent"}
    name = "oracle" if privileged else agent
    return ResultRow(
        world="toy",
        world_hash=HASH,
        agent=agent,
        agent_name=name,
        seed=seed,
        days=10,
        horizon_days=30,
        metrics=metrics,
        failures={},
        tokens={},
        api_cost_usd=None,
        wall_time_s=1.0,
        resumed_from_day=None,
        run_dir=f"runs/toy/{agent}-s{seed}-d10",
        meta=meta,
        verified=verified,
        daily_fees=160.0,  # 10 days of a 16 CNY fee: hold = 40,000 - 160 = 39,840
    )


ROWS = [
    _row("baseline", 1, 45000.0),
    _row("baseline", 2, 46000.0, verified=False),
    _row("oracle", 1, 60000.0, privileged=True),
    _row("oracle", 2, 62000.0, privileged=True),
]


def test_normalised_scores_use_the_sweeps_own_oracle_runs_and_the_hold_of_the_run():
    got = row_standings(ROWS)
    # seed 1: (45,000 - 39,840) / (60,000 - 39,840) = 5,160 / 20,160; seed 2: 6,160 / 22,160
    assert [s.normalised_score for s in got] == pytest.approx([5160 / 20160, 6160 / 22160, 1.0, 1.0])
    # the oracle leads the group: the baseline's runs are paired against it seed by seed
    assert [(s.paired_vs, s.paired_difference) for s in got] == [
        ("oracle", -15000.0),
        ("oracle", -16000.0),
        (None, None),
        (None, None),
    ]
    records = list(csv.DictReader(io.StringIO(results_csv(ROWS, standing_cells(ROWS)))))
    assert list(records[0]) == list(COLUMNS)
    assert [r["verified"] for r in records] == ["true", "false", "true", "true"]
    assert [r["privileged"] for r in records] == ["false", "false", "true", "true"]
    assert records[0]["paired_vs"] == "oracle" and float(records[0]["paired_difference"]) == -15000.0


def test_paired_csv_and_the_leaderboard_carry_the_pairs_and_the_marks():
    (line,) = [r for r in csv.DictReader(io.StringIO(paired_csv(ROWS))) if r["metric"] == "net_assets"]
    # oracle - baseline = 15,000 and 16,000: mean 15,500, sd 707.1; t(0.975, 1) = 12.706: ± 6,353
    assert (line["a"], line["b"], line["n_seeds"], float(line["mean_difference"])) == (
        "oracle",
        "baseline",
        "2",
        15500.0,
    )
    assert float(line["ci_low"]) == pytest.approx(15500 - 12.7062047 * 707.10678 / 2**0.5, abs=0.01)
    text = leaderboard_markdown(ROWS)
    # that interval, [+9,147, +21,853], excludes zero: the oracle ranks 1 and the baseline 2, no tie; the baseline's
    # normalised scores 0.25595 and 0.27798: mean 0.267, sd 0.016
    assert "| 1 | oracle (privileged) | 2 | 1, 2 | 2/2 | 61.00 ± 1.41 | 1.000 ± 0.000 |" in text
    assert "| 2 | baseline | 2 | 1, 2 | 1/2 | 45.50 ± 0.71 | 0.267 ± 0.016 |" in text


def test_only_a_verified_run_of_the_oracles_code_is_a_reference():
    import dataclasses

    plugin = _row("oracle", 1, 90000.0, privileged=True)  # a plugin named oracle that calls itself privileged
    plugin = dataclasses.replace(plugin, meta={**plugin.meta, "agent_entry_point": "/tmp/cheat.py:Cheat"})
    baseline = _row("baseline", 1, 45000.0)
    assert [s.normalised_score for s in row_standings([baseline, plugin])][0] is None  # no reference: no score
    failed = _row("oracle", 1, 50000.0, privileged=True, verified=False)  # the oracle's, but its replay differed
    assert [s.normalised_score for s in row_standings([baseline, failed])][0] is None
    good = _row("oracle", 1, 60000.0, privileged=True)
    assert row_standings([baseline, good])[0].normalised_score == pytest.approx(5160 / 20160)
