"""The edge to the tools: every page and every row in as few calls as the tools' limits allow."""

from __future__ import annotations

import pytest

from autovend.agents.baseline.calls import all_rows, batched, sql_rows
from autovend.session import ToolSession
from autovend.tools.schemas import MAX_BATCH_ITEMS, MAX_PAGE_SIZE
from autovend.tools.sql import MAX_ROWS
from autovend.tools.trajectory import read_trajectory
from autovend.world.model import Economics
from autovend.world.toy import toy_world


@pytest.fixture
def session(tmp_path):
    world = toy_world(2, 60, seed=0, economics=Economics(horizon_days=10))
    s = ToolSession(world, seed=1, trajectory_path=tmp_path / "t.jsonl")
    yield s
    s.close()


def calls(tmp_path) -> list[dict]:
    return [r for r in read_trajectory(tmp_path / "t.jsonl") if r["kind"] == "call"]


def test_the_limits_are_the_tools():
    assert (MAX_PAGE_SIZE, MAX_ROWS, MAX_BATCH_ITEMS) == (50, 500, 100)


def test_all_rows_reads_every_page(session, tmp_path):
    rows = all_rows(session, "get_catalog", {})
    assert len(rows) == 60 and rows[0]["sku_id"] != rows[-1]["sku_id"]
    # 60 products in pages of 50: two calls
    assert [c["arguments"] for c in calls(tmp_path)] == [{"page": 1, "page_size": 50}, {"page": 2, "page_size": 50}]


def test_sql_rows_reads_past_the_row_cap(session, tmp_path):
    sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1234) SELECT x FROM c"
    rows = sql_rows(session, sql)
    assert [r[0] for r in rows] == list(range(1, 1235))
    # 1,234 rows, 500 at a time: offsets 0, 500, 1000
    assert [c["arguments"]["sql"][len(sql) :] for c in calls(tmp_path)] == [
        " LIMIT 500 OFFSET 0",
        " LIMIT 500 OFFSET 500",
        " LIMIT 500 OFFSET 1000",
    ]


def test_batched_splits_at_the_batch_limit(session, tmp_path):
    skus = [r["sku_id"] for r in all_rows(session, "get_catalog", {})]
    items = [{"sku_id": skus[i % 60], "qty": 1} for i in range(150)]
    results = batched(session, "place_order", items)
    assert len(results) == 2
    orders = [c for c in calls(tmp_path) if c["tool"] == "place_order"]
    assert [len(c["arguments"]["items"]) for c in orders] == [100, 50]


def test_a_refused_call_is_a_bug(session):
    with pytest.raises(RuntimeError, match="baseline: place_order was refused"):
        batched(session, "place_order", [{"sku_id": "SKU00001", "qty": 0}])
