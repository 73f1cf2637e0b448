"""Records kept in memory until read: the same database, byte for byte, as writing at once; the sales log."""

from __future__ import annotations

import pickle
import sqlite3

import numpy as np

from autovend.sim import KeepStocked, Simulator
from autovend.sim.records import RECORD_TABLES, RecordStore


def test_queued_writes_reach_sqlite_only_when_read_and_give_the_same_bytes():
    lazy = RecordStore(RECORD_TABLES)
    eager = RecordStore(RECORD_TABLES)
    calls = [
        ("insert", "visits", [(1, "A", 2), (1, "B", 1)]),
        (
            "insert_columns",
            "daily_costs",
            ([1, 1], ["2025-01-01"] * 2, np.array(["visit", "daily_fee"], dtype=object), np.array([70.0, 8.0])),
        ),
        ("seal",),
        ("insert_row", "orders", (1, 1, "S1", 5, 1.5, "default", 4, None)),
        ("insert", "visits", [(2, "A", 1)]),
        ("executemany", "UPDATE orders SET arrived_day = ? WHERE order_id = ?", [(3, 1)]),
        ("insert", "visits", [(3, "C", 4)] * 130),  # two full blocks of 64 and a remainder
        ("seal",),
    ]
    versions = []
    for call in calls:
        name, *args = call
        for store in (lazy, eager):
            getattr(store, name)(*args)
        eager.flush()  # written at once
        versions.append(lazy.version)
        assert lazy._conn.total_changes == 0  # nothing written yet
    assert versions == sorted(versions) and len(set(versions)) == 6  # every write moves the version, seals do not
    assert lazy.serialize() == eager.serialize()
    assert lazy.connection.execute("SELECT arrived_day FROM orders").fetchall() == [(3,)]
    before = lazy.version
    lazy.connection.execute("DELETE FROM visits WHERE day = 3")  # a write on the raw connection counts too
    assert lazy.version > before


def test_the_journal_holds_the_deferred_statements_in_order():
    store = RecordStore(RECORD_TABLES)
    store.take_journal()
    copy = sqlite3.connect(":memory:")
    copy.deserialize(store.serialize())
    store.insert("visits", [(1, "A", 1)])
    store.seal()
    store.executemany("UPDATE visits SET n_operations = ? WHERE day = ?", [(7, 1)])
    store.insert_columns("visits", ([2], ["B"], [3]))
    journal = store.take_journal()
    assert [sql.split()[0] for sql, _ in journal] == ["INSERT", "UPDATE", "INSERT"]
    for sql, rows in journal:
        copy.executemany(sql, rows)
    assert copy.execute("SELECT * FROM visits").fetchall() == [(1, "A", 7), (2, "B", 3)]


def test_sales_log_matches_the_daily_sales_records_and_survives_a_restore(world):
    sim = Simulator(world, seed=3)
    policy = KeepStocked(n_skus=6, facing=4)
    policy.run(sim, days=12)
    rows = sim.records.frame("daily_sales")
    for d in range(1, sim.day):
        m, k, units, revenue, cost = sim.sales_of_day(d)
        got = rows[rows["day"] == d]
        assert [sim.device_ids[i] for i in m] == got["device_id"].tolist()
        assert [sim.sku_ids[i] for i in k] == got["sku_id"].tolist()
        assert units.tolist() == got["units"].tolist() and revenue.tolist() == got["revenue"].tolist()
        assert cost.tolist() == got["cost"].tolist()
    by_sql = rows[rows["day"] >= 5].groupby("sku_id")["units"].sum()
    by_log = sim.units_sold_by_product(5, sim.day - 1)
    assert {sim.sku_ids[k]: int(v) for k, v in enumerate(by_log) if v} == {s: int(v) for s, v in by_sql.items()}
    back = Simulator.restore(world, pickle.loads(pickle.dumps(sim.snapshot())))  # its own copy of the state
    for d in range(1, sim.day):
        assert all(np.array_equal(a, b) for a, b in zip(back.sales_of_day(d), sim.sales_of_day(d), strict=True))
    assert np.array_equal(back.last_visit_days(), sim.last_visit_days())
    policy.run(back, days=3)
    policy.run(sim, days=3)
    for table in ("daily_sales", "visits", "orders", "shelf_events"):  # (a deserialized database counts its commits)
        assert back.records.frame(table).equals(sim.records.frame(table))
    assert all(
        np.array_equal(a, b) for a, b in zip(back.sales_of_day(sim.day - 1), sim.sales_of_day(sim.day - 1), strict=True)
    )
