"""Kept answers of the read-only tools (`Views.answer`): served again in the same state, dropped on any change."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from autovend.env.boundary import episode_of, simulator_of
from autovend.session import ToolSession
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.tools.registry import STATE_READ_TOOLS, TOOLS_BY_NAME
from autovend.tools.views import SalesBook
from autovend.world.model import World

from .conftest import end_days, ok, stock_warehouse

DETAIL = "get_device_detail"


@pytest.fixture
def stocked(world: World, tmp_path) -> ToolSession:
    """A session on a workday with 30 units of SKU0001 and SKU0002 in the warehouse, nothing on shelves."""
    s = ToolSession(world, seed=1, trajectory_path=tmp_path / "trajectory.jsonl")
    stock_warehouse(s, {"SKU0001": 30, "SKU0002": 30})
    yield s
    s.close()


def _fresh(session: ToolSession, name: str, args: dict) -> dict:
    """What the tool's handler answers now, run directly (no kept answer involved)."""
    episode = episode_of(session)
    tool = TOOLS_BY_NAME[name]
    return json.loads(json.dumps(tool.handler(episode.ctx, tool.args.model_validate(args), dict(args))))


def _row(content: dict, sku: str) -> dict:
    cols = content["products"]["columns"]
    return next(dict(zip(cols, r, strict=True)) for r in content["products"]["rows"] if r[0] == sku)


def test_same_question_in_the_same_state_is_answered_once(stocked):
    device = simulator_of(stocked).device_ids[0]
    args = {"device_id": device, "window_days": 7}
    first = stocked.call(DETAIL, args)
    again = stocked.call(DETAIL, dict(args))
    assert again is first  # the kept result itself: no handler ran
    assert stocked.counters["by_tool"][DETAIL] == 2  # both calls are counted and logged
    lines = stocked.trajectory_path.read_text(encoding="utf-8").splitlines()
    assert sum(json.loads(line).get("tool") == DETAIL for line in lines) == 2
    assert json.loads(first.text) == _fresh(stocked, DETAIL, args)
    other = stocked.call(DETAIL, {"device_id": device, "window_days": 30})
    assert other is not first and other.content["window_days"] == 30


def test_a_restock_changes_the_kept_answer(stocked):
    device = simulator_of(stocked).device_ids[0]
    args = {"device_id": device, "window_days": 7}
    before = ok(stocked, DETAIL, args)
    assert before["units_on_shelf"] == 0
    ok(stocked, "restock", {"items": [{"device_id": device, "sku_id": "SKU0001", "qty": 12}]})
    after = ok(stocked, DETAIL, args)
    assert after["units_on_shelf"] == 12 and _row(after, "SKU0001")["units"] == 12
    assert after["days_since_visit"] == 0 and after["visited_today"] is True
    assert after == _fresh(stocked, DETAIL, args)
    warehouse = ok(stocked, "get_warehouse", {})
    assert warehouse == _fresh(stocked, "get_warehouse", {})


def test_a_price_change_changes_the_kept_answer(stocked):
    sim = simulator_of(stocked)
    device = sim.device_ids[1]
    args = {"device_id": device, "window_days": 7}
    ok(stocked, "restock", {"items": [{"device_id": device, "sku_id": "SKU0002", "qty": 5}]})
    old = _row(ok(stocked, DETAIL, args), "SKU0002")["price"]
    new = round(old * 1.2, 2)
    res = ok(stocked, "adjust_price", {"items": [{"device_id": device, "sku_id": "SKU0002", "price": new}]})
    assert res["n_accepted"] == 1
    after = ok(stocked, DETAIL, args)
    assert _row(after, "SKU0002")["price"] == new != old
    assert after == _fresh(stocked, DETAIL, args)


def test_the_end_of_the_day_changes_the_kept_answer(stocked):
    device = simulator_of(stocked).device_ids[0]
    ok(stocked, "restock", {"items": [{"device_id": device, "sku_id": "SKU0001", "qty": 20}]})
    args = {"device_id": device, "window_days": 1}
    today = ok(stocked, DETAIL, args)
    calendar = ok(stocked, "get_calendar", {})
    end_days(stocked, 1)
    tomorrow = ok(stocked, DETAIL, args)
    assert tomorrow["day"] == today["day"] + 1
    assert tomorrow["days_since_visit"] == 1 and tomorrow["visited_today"] is False
    assert tomorrow == _fresh(stocked, DETAIL, args)
    assert ok(stocked, "get_calendar", {}) != calendar  # its "today" moved on
    assert ok(stocked, "get_calendar", {}) == _fresh(stocked, "get_calendar", {})


def test_refused_reads_are_not_kept(stocked):
    res = stocked.call(DETAIL, {"device_id": "NOPE"})
    assert not res.ok and "NOPE" in (res.error or "")
    assert stocked.call_if_kept(DETAIL, {"device_id": "NOPE"}) is None


def test_call_if_kept_answers_only_kept_questions(stocked):
    device = simulator_of(stocked).device_ids[0]
    args = {"device_id": device, "window_days": 3}
    seq = stocked.counters["seq"]
    assert stocked.call_if_kept(DETAIL, args) is None  # not asked yet in this state: nothing done
    assert stocked.counters["seq"] == seq
    first = stocked.call(DETAIL, args)
    now = stocked.call_if_kept(DETAIL, args)
    assert now is first and stocked.counters["seq"] == seq + 2  # answered and logged like a call
    assert stocked.call_if_kept("read_memory", {}) is None  # not a state read: always through `call`
    assert stocked.call_if_kept("end_day", {}) is None
    ok(stocked, "write_memory", {"text": "note"})  # no simulator state: the kept answer stays
    ok(stocked, "restock", {"items": [{"device_id": device, "sku_id": "SKU0002", "qty": 3}]})
    assert stocked.call_if_kept(DETAIL, args) is None  # the state changed: dropped
    kept = stocked.call(DETAIL, args)
    with episode_of(stocked).lock:  # another call of the episode is running: never wait for it
        assert stocked.call_if_kept(DETAIL, args) is None
    assert stocked.call_if_kept(DETAIL, args) is kept


def test_state_read_tools_are_the_registry_reads():
    assert set(TOOLS_BY_NAME) >= STATE_READ_TOOLS
    assert all(name.startswith("get_") for name in STATE_READ_TOOLS)
    assert {"query_sql", "read_memory", "write_memory", "end_day"}.isdisjoint(STATE_READ_TOOLS)


def test_sales_book_reads_each_settled_day_once_days_without_sales_included():
    records = RecordStore(RECORD_TABLES)
    row = ("2025-01-01", 0, 0.0, 0)  # date, expired_units, fine (with cost 0) are not read
    records.insert(
        "daily_sales",
        [
            (1, row[0], "B", "S2", 2, 5.0, 3.0, 0, 0.0),
            (1, row[0], "A", "S1", 1, 2.5, 1.5, 0, 0.0),
            (3, row[0], "A", "S2", 4, 10.0, 6.0, 0, 0.0),
        ],
    )
    sim = SimpleNamespace(records=records, device_ids=("A", "B"), sku_ids=("S1", "S2"), day=3, done=False)
    book = SalesBook(sim)  # type: ignore[arg-type]
    win = book.window(7)  # days 1-2 settled; day 2 had no sale
    assert (win.first, win.last) == (1, 2)
    assert (win.day.tolist(), win.machine.tolist(), win.product.tolist()) == ([1, 1], [1, 0], [1, 0])
    assert (win.units.tolist(), win.revenue.tolist(), win.cost.tolist()) == ([2, 1], [5.0, 2.5], [3.0, 1.5])
    assert [len(d[0]) for d in book._days] == [2, 0]
    sim.day = 4  # day 3 settled: read alone, the earlier days kept
    win = book.window(2)
    assert (win.first, win.day.tolist(), win.units.tolist(), win.revenue.tolist()) == (2, [3], [4], [10.0])
    assert [len(d[0]) for d in book._days] == [2, 0, 1]
    assert win.units.dtype.kind == "i" and win.revenue.dtype.kind == "f"
