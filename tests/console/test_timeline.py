"""Day-by-day states of a run: shelves, warehouse, prices, calls and notebook, by hand and against daily.csv."""

from __future__ import annotations

import pytest

from autovend.console.timeline import Timeline
from autovend.evaluation.rundata import RunData

from ..evaluation.conftest import hand_world, make_run, summary_row


def _call(seq, day, tool, arguments=None, ok=True):
    return {
        "kind": "call",
        "seq": seq,
        "day": day,
        "tool": tool,
        "arguments": arguments or {},
        "ok": ok,
        "result": {"done": True} if ok else None,
        "error": None if ok else "refused",
    }


@pytest.fixture(scope="module")
def timeline():
    """Three days on the hand world (M1, M2; products A 4.00, B 5.00, C 2.00 reference prices).

    Day 1: 10 A, 10 B, 10 C arrive; M1 gets 4 A and 4 B, M2 4 C; M1 sells 2 A. Day 2: A goes to 6.00 at M1,
    M1 sells 1 B. Day 3: M1's 3 B are delisted back to the warehouse, 2 C are discarded.
    Notebook: written on day 1, a refused write on day 2, rewritten on day 3.
    """
    run = make_run(
        hand_world(),
        calls=[
            _call(1, 1, "write_memory", {"text": "plan: stock A"}),
            _call(2, 1, "end_day"),
            _call(3, 2, "write_memory", {"text": "refused"}, ok=False),
            _call(4, 2, "end_day"),
            _call(5, 3, "write_memory", {"text": "day 3 note"}),
            _call(6, 3, "end_day"),
        ],
        daily_summary=[
            summary_row(1, net_assets=150.0),
            summary_row(2, net_assets=151.0),
            summary_row(3, net_assets=148.0),
        ],
        arrivals=[(1, 1, "A", 10, 31), (1, 2, "B", 10, 91), (1, 3, "C", 10, 5)],
        shelf_events=[
            (1, "M1", "A", "restock", 4, 0),
            (1, "M1", "B", "restock", 4, 0),
            (1, "M2", "C", "restock", 4, 0),
            (3, "M1", "B", "delist", 3, 0),
        ],
        price_changes=[(2, "M1", "A", 4.0, 6.0)],
        discards=[(3, "C", 2, 0, 3.0)],
        daily_sales=[
            (1, "2025-03-03", "M1", "A", 2, 8.0, 4.0, 0, 0.0),
            (2, "2025-03-04", "M1", "B", 1, 5.0, 2.0, 0, 0.0),
        ],
    )
    return Timeline.of(run)


def _shelf(view, device):
    machine = next(m for m in view.machines if m.device_id == device)
    return {i.sku_id: (i.units, i.price) for i in machine.items}


def test_shelves_at_the_close_of_each_day(timeline):
    assert _shelf(timeline.day(1), "M1") == {"A": (2, 4.0), "B": (4, 5.0)}
    assert _shelf(timeline.day(1), "M2") == {"C": (4, 2.0)}
    assert _shelf(timeline.day(2), "M1") == {"A": (2, 6.0), "B": (3, 5.0)}  # the new price of A, one B sold
    assert _shelf(timeline.day(3), "M1") == {"A": (2, 6.0)}  # B delisted
    m1 = next(m for m in timeline.day(1).machines if m.device_id == "M1")
    assert (m1.units, m1.capacity, m1.sold, m1.revenue) == (6, 10, 2, 8.0)


def test_the_warehouse_at_the_close_of_each_day(timeline):
    def wh(day):
        return {w.sku_id: w.units for w in timeline.day(day).warehouse}

    assert wh(1) == {"A": 6, "B": 6, "C": 6}  # 10 arrived, 4 of each went to the shelves
    assert wh(2) == wh(1)
    assert wh(3) == {"A": 6, "B": 9, "C": 4}  # 3 B back from M1, 2 C discarded


def test_calls_and_notebook_of_each_day(timeline):
    assert [c.tool for c in timeline.day(2).calls] == ["write_memory", "end_day"]
    assert timeline.day(2).calls[0].error == "refused"
    assert [timeline.day(d).notebook for d in (1, 2, 3)] == ["plan: stock A", "plan: stock A", "day 3 note"]
    assert timeline.day(3).ledger["net_assets"] == 148.0


def test_a_day_outside_the_run_is_refused(timeline):
    with pytest.raises(ValueError, match="between 1 and 3"):
        timeline.day(4)


def test_a_simulated_run_agrees_with_its_daily_ledger(baseline_runs):
    run = RunData.load(baseline_runs[0])
    tl = Timeline.of(run)
    for day in range(1, tl.n_days + 1):
        view = tl.day(day)
        row = run.daily.iloc[day - 1]
        assert sum(m.units for m in view.machines) == row["shelf_units"], day
        assert sum(w.units for w in view.warehouse) == row["warehouse_units"], day
        assert view.ledger["net_assets"] == row["net_assets"]
    assert sum(m.units for m in tl.day(5).machines) == 0 and sum(m.units for m in tl.day(6).machines) > 0
    assert [c.tool for c in tl.day(1).calls][-1] == "end_day"
