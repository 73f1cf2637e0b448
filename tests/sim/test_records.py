"""The record stores: buffered multi-row inserts keep order, read-only access, the hidden log."""

from __future__ import annotations

import pickle
import sqlite3

import numpy as np
import pytest

from autovend.sim.hidden import HIDDEN_COLUMNS, HiddenLog
from autovend.sim.records import INSERT_BLOCK, RECORD_TABLES, RecordStore


def test_inserts_keep_their_order_across_blocks_and_remainders():
    store = RecordStore(RECORD_TABLES)
    n = 2 * INSERT_BLOCK + 5
    store.insert("visits", [(d, f"D{d:03d}", d % 7) for d in range(n)])
    store.insert_row("visits", (999, "last", 1))
    df = store.frame("visits")
    assert len(df) == n + 1
    assert df["day"].tolist() == [*range(n), 999] and df["device_id"].iloc[-1] == "last"


def test_reads_see_queued_rows():
    store = RecordStore(RECORD_TABLES)
    store.insert_row("visits", (1, "A", 2))
    with store.read_only() as conn:
        assert conn.execute("SELECT n_operations FROM visits").fetchall() == [(2,)]
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute("INSERT INTO visits VALUES (2, 'B', 1)")
    assert store.connection.execute("SELECT COUNT(*) FROM visits").fetchone() == (1,)


def test_serialized_store_restores_row_by_row():
    store = RecordStore(RECORD_TABLES)
    store.insert("daily_costs", [(1, "2025-01-01", "daily_fee", 80.0), (1, "2025-01-01", "visit", 35.0)])
    copy = RecordStore(RECORD_TABLES, data=store.serialize())
    assert copy.frame("daily_costs").equals(store.frame("daily_costs"))


def test_the_journal_replayed_on_a_copy_gives_the_store_again():
    store = RecordStore(RECORD_TABLES)
    assert store.take_journal() is None  # no journal was kept before the first call
    copy = sqlite3.connect(":memory:")
    copy.deserialize(store.serialize())
    store.insert("visits", [(d, f"D{d:03d}", 1) for d in range(INSERT_BLOCK + 3)])  # one block and 3 rows
    store.execute("UPDATE visits SET n_operations = ? WHERE day >= ?", (5, INSERT_BLOCK))
    store.executemany("DELETE FROM visits WHERE day = ?", [(0,), (1,)])
    journal = store.take_journal()
    assert [len(rows) for _, rows in journal] == [1, 3, 1, 2]
    for sql, rows in journal:
        copy.executemany(sql, rows)
    want = store.connection.execute("SELECT * FROM visits ORDER BY rowid").fetchall()
    assert copy.execute("SELECT * FROM visits ORDER BY rowid").fetchall() == want
    assert len(want) == INSERT_BLOCK + 1 and sum(r[2] for r in want) == INSERT_BLOCK - 2 + 3 * 5
    assert store.take_journal() == []  # a new journal starts empty


def test_hidden_log_keeps_write_order_and_pickles():
    log = HiddenLog()
    log.append_row("lead_times", (1, 1, 3, 4))
    log.append_row("lead_times", (2, 1, 2, 3))
    log.append("lead_times", {"order_id": [3, 4], "placed_day": [2, 2], "lead_days": [6, 3], "arrival_day": [8, 5]})
    log.append_row("lead_times", (5, 3, 4, 7))
    df = log.frame("lead_times")
    assert df["order_id"].tolist() == [1, 2, 3, 4, 5] and df["lead_days"].tolist() == [3, 2, 6, 3, 4]
    back = pickle.loads(pickle.dumps(log))
    assert back.frame("lead_times").equals(df)
    assert log.frame("demand").empty and list(log.frame("demand").columns) == list(HIDDEN_COLUMNS["demand"])
    with pytest.raises(ValueError):
        log.append("shocks", {"day": [1], "xi": [1.0]})
    conn = log.to_sqlite()
    assert conn.execute("SELECT SUM(lead_days) FROM lead_times").fetchone()[0] == 18
    assert np.array_equal(df["arrival_day"].to_numpy(), [4, 3, 8, 5, 7])


def test_hidden_log_database_is_the_one_pandas_to_sql_builds():
    log = HiddenLog()
    n = 150  # more than two multi-row INSERT blocks, and a remainder
    log.append(
        "shocks",
        {
            "day": np.arange(n) // 20 + 1,
            "device_id": np.array([f"M{i % 20:02d}" for i in range(n)], dtype=object),
            "xi": np.linspace(0.5, 1.5, n),
        },
    )
    log.append("shocks", {"day": [9], "device_id": np.array(["M00"], dtype=object), "xi": [float("nan")]})
    log.append_row("lead_times", (1, 1, 3, 4))
    conn = log.to_sqlite()
    want = sqlite3.connect(":memory:")
    for table in HIDDEN_COLUMNS:
        log.frame(table).to_sql(table, want, index=False)
    assert conn.serialize() == want.serialize()  # same schema text, values and pages, byte for byte
    assert conn.execute("SELECT COUNT(*), COUNT(xi), MAX(day) FROM shocks").fetchone() == (n + 1, n, 9)
    assert conn.execute("SELECT COUNT(*) FROM demand").fetchone() == (0,)
