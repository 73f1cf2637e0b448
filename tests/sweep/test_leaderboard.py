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
    lines = [line for line in text.splitlines() if line.startswith("| 1= ")]
    # net assets in thousand CNY: (15 + 16) / 2 = 15.50, std 0.71; (10 + 12) / 2 = 11.00, std 1.41; the paired
    # differences 5,000 and 4,000 (mean 4,500, sd 707) give a 95% t interval 4,500 ± 12.71 x 707 / sqrt(2) =
    # [-1,853, +10,853] with 1 degree of freedom: it holds zero, so the two share rank 1; not verified, no oracle
    assert lines[0].startswith("| 1= | openai-gpt | 2 | 1, 2 | – | 15.50 ± 0.71 | – |")
    assert lines[1].startswith("| 1= | baseline | 2 | 1, 2 | – | 11.00 ± 1.41 | – |")
    assert lines[0].endswith("| 0.3750 ± 0.1768 |")  # API cost (USD)
    assert lines[1].endswith("| – |")  # a baseline has no API cost
    # unpaired (Welch): se = sqrt(707^2 / 2 + 1,414^2 / 2) = 1,118, df = 1.47, t = 6.188: 4,500 ± 6,919; minimum
    # detectable (t(0.975) + t(0.80)) x 707 / sqrt(n): (12.706 + 1.376) x 500 = 7,041 at 2 seeds
    row = "| openai-gpt − baseline | 2 | +4,500 | [-1,853, +10,853] | [-2,419, +11,419] | 7,041 / 1,176 / 703 |"
    assert row in text


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
    assert "| 1 | baseline | 1 | 1 | – | 10.00 |" in text  # one run: no std
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


def test_ranks_are_shared_only_where_the_paired_interval_holds_zero():
    # a: 10,000 / 11,000 / 12,000 (mean 11,000); b: 200 less on every seed (mean 10,800; a - b has sd 0, so its
    # interval is the point +200: b is below a); c: 9,000 / 12,000 / 11,700 (mean 10,900; a - c = +1,000 / -1,000 /
    # +300, c - b = -800 / +1,200 / -100: both intervals hold zero). Rank = 1 + the agents significantly above:
    # a and c have none (1=), b has one (a), so b is 2 although it is third by mean
    nets = {"a": (10000.0, 11000.0, 12000.0), "b": (9800.0, 10800.0, 11800.0), "c": (9000.0, 12000.0, 11700.0)}
    rows = [
        _row("cn20", HASH_A, agent, seed, x)
        for agent, xs in nets.items()
        for seed, x in zip((1, 2, 3), xs, strict=True)
    ]
    (table,) = tables(rows)
    assert [(line.agent, line.rank) for line in table.lines] == [("a", "1="), ("c", "1="), ("b", "2")]
    (ab,) = [p for p in table.standing.paired if (p.a, p.b, p.metric) == ("a", "b", "net_assets")]
    assert (ab.mean_difference, ab.ci_low, ab.ci_high, ab.n_seeds) == (200.0, 200.0, 200.0, 3)
    (cb,) = [p for p in table.standing.paired if (p.a, p.b, p.metric) == ("c", "b", "net_assets")]
    # d = -800, 1,200, -100: mean 100, sd 1,014.9; t(0.975, 2) = 4.303: 100 ± 4.303 x 1,014.9 / sqrt(3) = 100 ± 2,521.1
    assert round(cb.ci_low, 1) == -2421.1 and round(cb.ci_high, 1) == 2621.1
