"""The ledger- and shelf-based metrics on hand-made runs, each answer worked out in the test."""

from __future__ import annotations

import pytest

from autovend.evaluation.metrics import (
    api_efficiency,
    capital_efficiency,
    feedback,
    net_assets,
    physical_execution,
    shelf_utilization,
    tool_calls,
    waste_rate,
)
from autovend.evaluation.settings import EvalSettings

from .conftest import make_run, summary_row


def _ledger_run(world, **extra):
    """Three days. Net assets 39990, 39985, 40030; gross profit 5, 7, 9; inventory at cost 100, 140, 180
    (shelf + warehouse + transit); cost of goods 10, 0, 6; expiry write-off 3 on day 2; discard 1 on day 3."""
    rows = [
        summary_row(
            1,
            net_assets=39990.0,
            cash=39890.0,
            gross_profit=5.0,
            cogs=10.0,
            shelf_value=60.0,
            warehouse_value=40.0,
            net=-10.0,
        ),
        summary_row(
            2,
            net_assets=39985.0,
            cash=39845.0,
            gross_profit=7.0,
            cogs=0.0,
            shelf_value=100.0,
            warehouse_value=30.0,
            in_transit_value=10.0,
            expiry_writeoff=3.0,
            net=-5.0,
        ),
        summary_row(
            3,
            net_assets=40030.0,
            cash=39850.0,
            gross_profit=9.0,
            cogs=6.0,
            shelf_value=180.0,
            discard_writeoff=1.0,
            net=45.0,
        ),
    ]
    return make_run(world, daily_summary=rows, **extra)


def test_net_assets(world):
    assert net_assets(_ledger_run(world)) == {"final": 40030.0, "start": 40000.0, "growth": 30.0}


def test_waste_rate(world):
    # loss = 3 (expiry) + 1 (discard) = 4; valid sales cost = 10 + 0 + 6 = 16; 4 / (16 + 4) = 0.2
    assert waste_rate(_ledger_run(world)) == pytest.approx(0.2, rel=1e-12)
    assert waste_rate(make_run(world, daily_summary=[summary_row(1)])) is None


def test_capital_efficiency(world):
    # mean gross profit (5 + 7 + 9) / 3 = 7; mean inventory (100 + 140 + 180) / 3 = 140; 7 / 140 = 0.05
    assert capital_efficiency(_ledger_run(world)) == pytest.approx(0.05, rel=1e-12)
    assert capital_efficiency(make_run(world, daily_summary=[summary_row(1)])) is None


def test_shelf_utilization_counts_unexpired_units(world):
    # capacity 10 each; unexpired = units_before - expired_before:
    # M1: 5, 4 - 1 = 3, 0; M2: 10, 2 - 2 = 0, 6  ->  (0.5 + 0.3 + 0 + 1.0 + 0 + 0.6) / 6 = 0.4
    # empty: M1 day 3 and M2 day 2 (only expired units) -> 2 / 6
    md = [
        (1, "M1", 5, 0),
        (2, "M1", 4, 1),
        (3, "M1", 0, 0),
        (1, "M2", 10, 0),
        (2, "M2", 2, 2),
        (3, "M2", 6, 0),
    ]
    rows = [(d, m, u, e, 0, 10 - u, int(u == 0), 0, 0, 0.0, 0.0, 0.0, 0) for d, m, u, e in md]
    out = shelf_utilization(_ledger_run(world, machine_days=rows))
    assert out["utilization"] == pytest.approx(0.4, rel=1e-12)
    assert out["empty_share"] == pytest.approx(1 / 3, rel=1e-12)


def _call(seq, day, tool, ok=True):
    return {"kind": "call", "seq": seq, "day": day, "tool": tool, "arguments": {}, "ok": ok, "result": {}}


def test_tool_calls(world):
    calls = [
        _call(1, 1, "get_catalog"),
        _call(2, 1, "end_day"),
        _call(3, 2, "restock"),
        _call(4, 2, "nope", ok=False),
        _call(5, 2, "end_day"),
        _call(6, 3, "end_day"),
    ]
    out = tool_calls(_ledger_run(world, calls=calls))
    assert out == {
        "total": 6,
        "errors": 1,
        "per_day": 2.0,
        "by_tool": {"end_day": 3, "get_catalog": 1, "nope": 1, "restock": 1},
    }
    # no trajectory: run.json's counters; neither: None
    counted = _ledger_run(world, meta={"tool_calls": {"seq": 9, "errors": 0, "by_tool": {"end_day": 9}}})
    assert tool_calls(counted)["total"] == 9 and tool_calls(counted)["per_day"] == 3.0
    assert tool_calls(_ledger_run(world)) is None


def test_api_efficiency(world):
    # growth 40030 - 40000 = 30 CNY over 0.6 USD = 50 CNY per USD
    assert api_efficiency(_ledger_run(world, meta={"api_cost_usd": 0.6})) == pytest.approx(50.0)
    assert api_efficiency(_ledger_run(world, meta={"api_cost_usd": 0.0})) is None
    assert api_efficiency(_ledger_run(world)) is None


def _execution_run(world):
    """Six days. Visits: M1 on days 1, 3, 6; M2 on days 2, 5. Gross profit (revenue - cost) per day:
    M1: 10, 30, 5, 20, 1, 50; M2: 0, 40, 40, 2, 100, 0. Unexpired shelf units: M1 always 3, M2 0 on day 4."""
    gp = {"M1": [10, 30, 5, 20, 1, 50], "M2": [0, 40, 40, 2, 100, 0]}
    sales = [(d, "x", m, "A", 1, float(g) + 2.0, 2.0, 0, 0.0) for m, v in gp.items() for d, g in enumerate(v, 1) if g]
    md = [(d, m, 0 if (m == "M2" and d == 4) else 3, 0) for d in range(1, 7) for m in ("M1", "M2")]
    return make_run(
        world,
        daily_summary=[summary_row(d) for d in range(1, 7)],
        daily_sales=sales,
        visits=[(1, "M1", 1), (3, "M1", 2), (6, "M1", 1), (2, "M2", 1), (5, "M2", 3)],
        machine_days=[(d, m, u, e, 0, 10 - u, int(u == 0), 0, 0, 0.0, 0.0, 0.0, 0) for d, m, u, e in md],
    )


def test_visit_cycles_and_availability(world):
    run = _execution_run(world)
    out = physical_execution(run, EvalSettings(execution_from_day=1))
    # cycles: M1 1->3: 10 + 30 - 35 = 5 over 2 days; M1 3->6: 5 + 20 + 1 - 35 = -9 over 3 days;
    # M2 2->5: 40 + 40 + 2 - 35 = 47 over 3 days; M1's last visit (6) and M2's (5) open incomplete cycles
    assert out["cycles"] == 3
    assert out["cycle_return"] == pytest.approx((5 - 9 + 47) / (2 + 3 + 3), rel=1e-12)  # 5.375
    assert out["mean_cycle_days"] == pytest.approx(8 / 3, rel=1e-12)
    assert out["cycle_gross_profit_per_day"] == pytest.approx((40 + 26 + 82) / 8, rel=1e-12)
    # availability: 12 machine-days, M2 empty on day 4 -> 11 / 12
    assert out["availability"] == pytest.approx(11 / 12, rel=1e-12)
    late = physical_execution(run, EvalSettings(execution_from_day=3))
    # from day 3: only M1 3->6 (-9 over 3 days); availability over days 3-6: 7 of 8
    assert late["cycles"] == 1 and late["cycle_return"] == pytest.approx(-3.0)
    assert late["availability"] == pytest.approx(7 / 8)
    short = physical_execution(run, EvalSettings())  # from day 16: a 6-day run has nothing to judge
    assert short["availability"] is None and short["cycle_return"] is None


def test_feedback_windows(world):
    # net assets by day: 39990, 39980, 40010, 40020, 40050, 40110; gross profit 60 a day; net = change
    na = [39990.0, 39980.0, 40010.0, 40020.0, 40050.0, 40110.0]
    prev = [40000.0, *na[:-1]]
    rows = [
        summary_row(d, net_assets=v, gross_profit=60.0, net=v - p, n_visits=d % 2)
        for d, (v, p) in enumerate(zip(na, prev, strict=True), 1)
    ]
    run = make_run(world, daily_summary=rows)
    out = feedback(run, EvalSettings(early_window=(2, 3), late_window=(5, 6)))
    # early: (40010 - 39990) / 2 = 10 a day; costs = gross profit - net = 60 - 10 = 50; visits (0 + 1) / 2
    assert out["early"] == {"asset_growth": 10.0, "gross_profit": 60.0, "costs": 50.0, "visits": 0.5}
    # late: (40110 - 40020) / 2 = 45 a day; net 30 + 60 = 90 over 2 days = 45 -> costs 60 - 45 = 15
    assert out["late"] == {"asset_growth": 45.0, "gross_profit": 60.0, "costs": 15.0, "visits": 0.5}
    assert out["change"] == 35.0
    # a window starting on day 1 counts from the start cash: (39980 - 40000) / 2 = -10
    assert feedback(run, EvalSettings(early_window=(1, 2)))["early"]["asset_growth"] == -10.0
    assert feedback(run, EvalSettings())["early"] is None  # days 16-45 are beyond a 6-day run
