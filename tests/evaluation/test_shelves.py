"""Shelves rebuilt from the agent-visible records: by hand, and against the simulator's hidden log."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.evaluation.rundata import RunData
from autovend.evaluation.shelves import shelf_panel
from autovend.session import ToolSession

from .conftest import make_run, summary_row


def _hand_run(world):
    """Day 1: restock M1 A 5, B 3; 2 A sold. Day 2: 3 B sold; A repriced twice. Day 3: M1 A +2 -1, M2 C +4."""
    return make_run(
        world,
        daily_summary=[summary_row(d) for d in (1, 2, 3, 4)],
        shelf_events=[
            (1, "M1", "A", "restock", 5, 0),
            (1, "M1", "B", "restock", 3, 0),
            (3, "M1", "A", "restock", 2, 0),
            (3, "M1", "A", "reduce", 1, 0),
            (3, "M2", "C", "restock", 4, 0),
            (4, "M1", "A", "delist", 4, 0),
        ],
        daily_sales=[
            (1, "2025-03-03", "M1", "A", 2, 8.0, 4.0, 0, 0.0),
            (2, "2025-03-04", "M1", "B", 3, 15.0, 6.0, 0, 0.0),
            (3, "2025-03-05", "M2", "C", 1, 2.0, 1.5, 0, 0.0),
        ],
        price_changes=[
            (2, "M1", "A", 4.0, 5.0),
            (2, "M1", "A", 5.0, 6.0),  # the later change of the day is the one in force
            (3, "M1", "B", 5.0, 4.5),
        ],
    )


def test_panel_by_hand(world):
    run = _hand_run(world)
    p = shelf_panel(world, run.records, run.days)
    got = list(zip(p.day.tolist(), p.machine.tolist(), p.product.tolist(), p.q.tolist(), p.price.tolist(), strict=True))
    assert got == [
        (1, 0, 0, 5, 4.0),  # A: restocked 5
        (1, 0, 1, 3, 5.0),  # B: restocked 3
        (2, 0, 0, 3, 6.0),  # A: 5 - 2 sold on day 1, repriced to 6.0
        (2, 0, 1, 3, 5.0),
        (3, 0, 0, 4, 6.0),  # A: 3 + 2 - 1; B sold out on day 2
        (3, 1, 2, 4, 2.0),  # C at M2: 4
        (4, 1, 2, 3, 2.0),  # C: 4 - 1 sold on day 3; A delisted on day 4
    ]
    assert p.units[1:].tolist() == [[8, 0], [6, 0], [4, 4], [0, 3]]
    product, q, price = p.padded([3, 4, 2], [0, 0, 0])
    assert product.tolist() == [[0, 0], [0, 0], [0, 1]]
    assert q.tolist() == [[4, 0], [0, 0], [3, 3]]
    assert price.tolist() == [[6.0, 1.0], [1.0, 1.0], [6.0, 5.0]]


def test_inconsistent_records_are_refused(world):
    run = make_run(
        world,
        daily_summary=[summary_row(1), summary_row(2)],
        shelf_events=[(1, "M1", "A", "restock", 1, 0)],
        daily_sales=[(1, "2025-03-03", "M1", "A", 3, 12.0, 6.0, 0, 0.0)],
    )
    with pytest.raises(ValueError, match="negative shelf"):
        shelf_panel(world, run.records, run.days)


def test_panel_matches_the_hidden_log_of_a_real_session(world, tmp_path):
    with ToolSession(world, seed=3) as s:
        s.call("place_order", {"items": [{"sku_id": k, "qty": 12} for k in "ABC"]})
        for day in range(1, 12):
            if day == 4:
                s.call(
                    "restock",
                    {
                        "items": [
                            {"device_id": "M1", "sku_id": "A", "qty": 5},
                            {"device_id": "M1", "sku_id": "B", "qty": 5},
                            {"device_id": "M2", "sku_id": "C", "qty": 6},
                        ]
                    },
                )
                s.call("adjust_price", {"items": [{"device_id": "M1", "sku_id": "A", "price": 5.2}]})
            if day == 7:
                s.call("restock", {"items": [{"device_id": "M2", "sku_id": "A", "qty": 4}]})
                s.call("reduce", {"items": [{"device_id": "M1", "sku_id": "B", "qty": 2}]})
                s.call("adjust_price", {"items": [{"device_id": "M2", "sku_id": "C", "price": 1.6}]})
            s.call("end_day", {})
        run = RunData.from_session(s)
    p = run.panel
    hidden = run.hidden["demand"]
    assert len(hidden) == len(p.q) > 20  # every stocked slot has a positive rate in this world
    dev = {"M1": 0, "M2": 1}
    sku = {"A": 0, "B": 1, "C": 2}
    mine = {(d, m, k): (q, pr) for d, m, k, q, pr in zip(p.day, p.machine, p.product, p.q, p.price, strict=True)}
    for r in hidden.itertuples():
        assert mine[(r.day, dev[r.device_id], sku[r.sku_id])] == (r.shelf_units, pytest.approx(r.price))
    units = run.hidden["machine_days"]
    assert np.array_equal(p.units[units["day"], units["device_id"].map(dev)], units["units_before"])
