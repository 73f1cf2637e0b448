"""The four failure-mode detectors on hand-made trajectories and records."""

from __future__ import annotations

from autovend.evaluation.failures import (
    dead_stock_orders,
    detect_failures,
    fragmented_visits,
    infeasible_retries,
    recurring_rejections,
)
from autovend.evaluation.settings import EvalSettings

from .conftest import make_run, summary_row
from .test_metrics import _execution_run

ITEMS = [{"device_id": f"D{i}", "sku_id": "A", "qty": 4} for i in range(1, 5)]


def _batch(seq, day, tool, rejected, accepted=()):
    return {
        "kind": "call",
        "seq": seq,
        "day": day,
        "tool": tool,
        "ok": True,
        "arguments": {"items": [*accepted, *rejected]},
        "result": {
            "accepted": [{"index": i, "item": it} for i, it in enumerate(accepted)],
            "rejected": [
                {"index": i, "item": it, "code": "insufficient_stock", "message": "only 3 units"}
                for i, it in enumerate(rejected)
            ],
        },
    }


CALLS = [
    _batch(1, 163, "restock", ITEMS),  # four allocations of 4 units, only 3 in stock
    _batch(2, 163, "restock", [], accepted=[{"device_id": "D1", "sku_id": "A", "qty": 3}]),  # the local repair
    _batch(3, 163, "restock", ITEMS),  # the same batch again the same day
    _batch(4, 168, "restock", list(reversed(ITEMS))),  # the same four, another day (order does not matter)
    _batch(5, 168, "place_order", ITEMS),  # same items, another tool
    _batch(6, 170, "restock", ITEMS[:3]),  # a different set
    {"kind": "call", "seq": 7, "day": 170, "tool": "restock", "ok": False, "result": {"error": "malformed"}},
]


def test_infeasible_retries():
    out = infeasible_retries(CALLS, window_days=7, max_examples=2)
    # seq 1 rejects 4 (first time); seq 3 retries all 4 the same day (+4); seq 4 five days later (+4);
    # seq 6 two days after that (+3): 11 retries of 15 insufficient-stock rejections
    assert out.count == 11 and out.extra == {"insufficient_stock_items": 15}
    assert out.examples == [
        {"day": 163, "device_id": "D1", "sku_id": "A", "qty": 4, "first_day": 163},
        {"day": 163, "device_id": "D2", "sku_id": "A", "qty": 4, "first_day": 163},
    ]
    # with a 4-day window the day-168 attempts (5 days on) are not retries, but they reset the clock
    assert infeasible_retries(CALLS, window_days=4, max_examples=0).count == 4 + 3


def test_recurring_rejections():
    out = recurring_rejections(CALLS, max_examples=5)
    # only seq 4 repeats, on a later day, a rejected set seen before (seq 1, day 163)
    assert out.count == 1
    assert out.examples == [
        {"day": 168, "tool": "restock", "items": 4, "first_day": 163, "codes": ["insufficient_stock"]}
    ]
    assert out.extra == {"calls_with_rejections": 5}


def test_fragmented_visits(world):
    out = fragmented_visits(_execution_run(world), max_examples=5)
    # M1 day 3: 10 + 30 = 40 since day 1 (>= 35); M1 day 6: 5 + 20 + 1 = 26 since day 3 (< 35, fragmented);
    # M2 day 5: 40 + 40 + 2 = 82 since day 2
    assert out.count == 1 and out.extra == {"visits_judged": 3, "visit_fee": 35.0}
    assert out.examples == [
        {"day": 6, "device_id": "M1", "previous_visit": 3, "gross_profit_since": 26.0, "units_restocked": 0}
    ]


def _stock_run(world):
    """Eight days. Day 1 arrivals: A 10 (fresh to day 31), C 10 (expired from day 5), B 6. Day 2: all B to M1.
    Day 5: 4 A to M1; B sold on day 4 and A on day 6. Orders: A day 2, A day 5, B day 5, C day 6, A day 8."""
    orders = [
        (13, 2, "A", 5, 2.0, "default", 5, None),
        (10, 5, "A", 5, 2.0, "default", 8, None),
        (11, 5, "B", 5, 2.0, "default", 8, None),
        (12, 6, "C", 5, 1.5, "default", 9, None),
        (14, 8, "A", 2, 2.0, "default", 11, None),
    ]
    return make_run(
        world,
        daily_summary=[summary_row(d) for d in range(1, 9)],
        orders=orders,
        arrivals=[(1, 1, "A", 10, 31), (1, 2, "C", 10, 5), (1, 3, "B", 6, 91)],
        shelf_events=[(2, "M1", "B", "restock", 6, 0), (5, "M1", "A", "restock", 4, 0)],
        daily_sales=[(4, "x", "M1", "B", 1, 5.0, 2.0, 0, 0.0), (6, "x", "M1", "A", 1, 4.0, 2.0, 0, 0.0)],
    )


def test_dead_stock_orders(world):
    out = dead_stock_orders(_stock_run(world), window_days=3, min_units=1, max_examples=5)
    # A on day 5: no sale on days 2-4, 10 fresh units in the warehouse -> flagged.
    # B on day 5: the warehouse holds none (all on M1 since day 2). C on day 6: 10 units, all expired on day 5.
    # A on day 8: sold on day 6. A on day 2: within the first window, not judged.
    assert out.count == 1 and out.extra == {"orders_judged": 4}
    assert out.examples == [{"day": 5, "sku_id": "A", "qty": 5, "warehouse_units": 10, "order_id": 10}]
    # at least 11 units: the 10 units of A no longer count as dead stock
    assert dead_stock_orders(_stock_run(world), window_days=3, min_units=11, max_examples=5).count == 0


def test_detect_failures_runs_every_detector(world):
    run = _stock_run(world)
    run.calls.extend(CALLS)
    out = detect_failures(run, EvalSettings(dead_stock_window_days=3))
    assert {k: v.count for k, v in out.items()} == {
        "infeasible_retries": 11,
        "dead_stock_orders": 1,
        "fragmented_visits": 0,
        "recurring_rejections": 1,
    }
