"""leaderboard.md: agents ranked per world by mean net assets, mean ± sample std, never pooled across worlds or lengths."""

from __future__ import annotations

from autovend.provenance import current_provenance
from autovend.sweep.leaderboard import cell, leaderboard_markdown, tables
from autovend.sweep.results import METRIC_KEYS, ResultRow

HASH_A, HASH_B = "a" * 64, "b" * 64


def _row(world, world_hash, agent, seed, net, days=5, provenance=None, cost=None) -> ResultRow:
    metrics = dict.fromkeys(METRIC_KEYS)
    metrics["net_assets"] = net
    metrics["tool_calls"] = 100 + seed
    meta = {"agent_config": {}, "world_name": world, "provenance": provenance or current_provenance().to_json()}
    return ResultRow(
        world=world,
        world_hash=world_hash,
        agent=agent,
        agent_name=agent,
        seed=seed,
        days=days,
        horizon_days=180,
        metrics=metrics,
        failures={},
        tokens={},
        api_cost_usd=cost,
        wall_time_s=1.0,
        resumed_from_day=None,
        run_dir=f"runs/{world}/{agent}-s{seed}-d{days}",
        meta=meta,
    )


def test_cell_is_the_mean_and_the_sample_std():
    c = cell([10000.0, 12000.0, None])
    assert c.mean == 11000.0 and round(c.std, 6) == round(2000 / 2**0.5, 6) and c.n == 2
    assert cell([5.0]).std is None and cell([None]).mean is None


def test_agents_ranked_by_mean_net_assets_with_mean_and_std():
    rows = [
        _row("cn20", HASH_A, "baseline", 1, 10000.0),
        _row("cn20", HASH_A, "baseline", 2, 12000.0),
        _row("cn20", HASH_A, "openai-gpt", 1, 15000.0, cost=0.5),
        _row("cn20", HASH_A, "openai-gpt", 2, 16000.0, cost=0.25),
    ]
    text = leaderboard_markdown(rows)
    assert "4 of 4 runs finished" in text
    assert "## cn20: world cn20 (aaaaaaaaaaaa), 5 of 180 days" in text
    lines = [line for line in text.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    # net assets in thousand CNY: (15 + 16) / 2 = 15.50, std 0.71; (10 + 12) / 2 = 11.00, std 1.41
    assert lines[0].startswith("| 1 | openai-gpt | 2 | 1, 2 | 15.50 ± 0.71 |")
    assert lines[1].startswith("| 2 | baseline | 2 | 1, 2 | 11.00 ± 1.41 |")
    assert lines[0].endswith("| 0.3750 ± 0.1768 |")  # API cost (USD)
    assert lines[1].endswith("| – |")  # a baseline has no API cost


def test_runs_of_different_worlds_or_lengths_are_never_pooled():
    rows = [
        _row("cn20", HASH_A, "baseline", 1, 10000.0),
        _row("cn20", HASH_B, "baseline", 2, 30000.0),  # the same label, another world hash
        _row("cn20", HASH_A, "baseline", 3, 20000.0, days=10),  # another length
    ]
    groups = tables(rows)
    assert [(t.world_hash, t.days, len(t.lines), t.lines[0].seeds) for t in groups] == [
        (HASH_A, 5, 1, (1,)),
        (HASH_B, 5, 1, (2,)),
        (HASH_A, 10, 1, (3,)),
    ]
    text = leaderboard_markdown(rows, unfinished=["cn20/baseline-s4-d5"])
    assert text.count("The runs on cn20 are split into several tables") == 3
    assert "| 1 | baseline | 1 | 1 | 10.00 |" in text  # one run: no std
    assert "3 of 4 runs finished" in text
    assert "## Runs without a result\n\n- cn20/baseline-s4-d5" in text


def test_notes_say_what_differs_between_pooled_runs():
    other = current_provenance().to_json()
    other["packages"] = {**other["packages"], "numpy": "0.0.1"}
    rows = [_row("cn20", HASH_A, "baseline", 1, 1.0), _row("cn20", HASH_A, "baseline", 2, 2.0, provenance=other)]
    (table,) = tables(rows)
    assert any(
        n.startswith("runs/cn20/baseline-s2-d5 ran on another stack than runs/cn20/baseline-s1-d5") for n in table.notes
    )
    assert "Notes:" in leaderboard_markdown(rows)
