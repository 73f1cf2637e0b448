"""query_sql: a read-only sandbox over the agent-visible records; a table of hostile SQL that must all fail safely."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autovend.env.boundary import simulator_of
from autovend.session import ToolSession
from autovend.tools.sql import MAX_ROWS, TIME_LIMIT_S, SqlSandbox, _QueryProcess, first_word, schema_text
from autovend.tools.sql_worker import open_copy

from .conftest import fail, ok, stock_warehouse

READ_ONLY = "query_sql is read-only"
ONLY_SELECT = "only runs a read-only SELECT"


@pytest.fixture
def sess(world, tmp_path) -> ToolSession:
    s = ToolSession(world, seed=1)
    stock_warehouse(s, {"SKU0001": 20})
    ok(s, "restock", {"items": [{"device_id": "CN_WORKSITE_01", "sku_id": "SKU0001", "qty": 10}]})
    ok(s, "end_day")
    yield s
    s.close()


def _counts(s: ToolSession) -> dict[str, int]:
    conn = simulator_of(s).records.connection
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: conn.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0] for n in names}


def hostile(tmp: str) -> list:
    return [
        pytest.param("INSERT INTO orders (order_id) VALUES (999)", ONLY_SELECT, id="insert"),
        pytest.param("UPDATE daily_summary SET cash = 1e9", ONLY_SELECT, id="update"),
        pytest.param("DELETE FROM daily_sales", ONLY_SELECT, id="delete"),
        pytest.param("DROP TABLE catalog", ONLY_SELECT, id="drop"),
        pytest.param("REPLACE INTO devices VALUES ('X', 'x', 'x', 1)", ONLY_SELECT, id="replace"),
        pytest.param("CREATE TEMP TABLE t AS SELECT * FROM catalog", ONLY_SELECT, id="create-temp"),
        pytest.param("CREATE TRIGGER t AFTER INSERT ON orders BEGIN SELECT 1; END", ONLY_SELECT, id="trigger"),
        pytest.param(f"ATTACH DATABASE '{tmp}/evil.db' AS evil", ONLY_SELECT, id="attach"),
        pytest.param(f"VACUUM INTO '{tmp}/copy.db'", ONLY_SELECT, id="vacuum-into"),
        pytest.param("PRAGMA query_only = OFF", ONLY_SELECT, id="pragma-set"),
        pytest.param("PRAGMA writable_schema = ON", ONLY_SELECT, id="pragma-schema"),
        pytest.param("PRAGMA table_info(orders)", ONLY_SELECT, id="pragma-read"),
        pytest.param("SELECT * FROM pragma_table_info('orders')", READ_ONLY, id="pragma-function"),
        pytest.param("SELECT load_extension('/tmp/evil.so')", READ_ONLY, id="load-extension"),
        pytest.param("SELECT readfile('/etc/passwd')", "no such function: readfile", id="readfile"),
        pytest.param("BEGIN IMMEDIATE", ONLY_SELECT, id="begin"),
        pytest.param("SAVEPOINT s1", ONLY_SELECT, id="savepoint"),
        pytest.param("SELECT 1; DELETE FROM orders", "exactly one statement", id="two-statements"),
        pytest.param("/* hi */ -- note\n DELETE FROM orders", ONLY_SELECT, id="comment-then-delete"),
        pytest.param("WITH x AS (SELECT 1) DELETE FROM orders", READ_ONLY, id="with-delete"),
        pytest.param("WITH x AS (SELECT 1) INSERT INTO orders (order_id) SELECT 5 FROM x", READ_ONLY, id="with-insert"),
        pytest.param("EXPLAIN SELECT 1", ONLY_SELECT, id="explain"),
        pytest.param("SELECT * FROM demand", "no such table: demand", id="hidden-table"),
        pytest.param("SELECT * FROM lead_times", "no such table: lead_times", id="hidden-lead-times"),
        pytest.param("SELECT zeroblob(2000000000)", "too big", id="huge-blob"),
        pytest.param("SELECT hex(zeroblob(600000))", "too big", id="huge-string"),
        pytest.param(  # ran 35 s before patterns were limited (SQLite's default allows 50,000 characters)
            "SELECT printf('%.*c', 999000, 'a') LIKE ('%' || printf('%.*c', 48998, 'a') || 'b')",
            "LIKE and GLOB patterns are limited to 100 characters",
            id="long-like-pattern",
        ),
        pytest.param(
            "SELECT 'abc' GLOB printf('%.*c', 101, '*')", "LIKE and GLOB patterns are limited to 100", id="glob-101"
        ),
        pytest.param("SELECT * FROM", "SQLite error", id="syntax"),
        pytest.param("", "got an empty statement", id="empty-after-strip"),
        pytest.param("   ", "got an empty statement", id="blank"),
    ]


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("hostile")


@pytest.mark.parametrize("sql,reason", hostile("HOSTILE_DIR"))
def test_hostile_sql_is_refused_and_changes_nothing(sess, sql, reason, hostile_dir):
    sql = sql.replace("HOSTILE_DIR", str(hostile_dir))
    before = _counts(sess)
    cash = simulator_of(sess).cash
    res = sess.call("query_sql", {"sql": sql})
    if sql == "":
        assert not res.ok and "sql must not be empty" in res.error
    else:
        assert not res.ok, res.content
        assert reason in res.error, res.error
    assert _counts(sess) == before
    assert simulator_of(sess).cash == cash
    assert list(hostile_dir.iterdir()) == []
    assert ok(sess, "query_sql", {"sql": "SELECT COUNT(*) FROM orders"})["rows"] == [[1]]  # still works


def test_runaway_recursive_cte_is_stopped(world):
    s = ToolSession(world, seed=1, sql_time_limit_s=0.2)
    start = time.monotonic()
    res = s.call(
        "query_sql", {"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT MAX(x) FROM c"}
    )
    took = time.monotonic() - start
    assert not res.ok and "stopped the query after 0.2 s (the time limit)" in res.error
    # stopped, not run to the end (it never ends); the bound is loose so a busy machine cannot fail it
    assert 0.2 <= took < 10.0
    assert ok(s, "query_sql", {"sql": "SELECT 41 + 1"})["rows"] == [[42]]  # the sandbox stays usable


def test_default_limits_are_the_papers():
    assert (TIME_LIMIT_S, MAX_ROWS) == (2.0, 500)


def test_ten_thousand_rows_are_cut_to_500(sess):
    out = ok(
        sess,
        "query_sql",
        {"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 10000) SELECT x FROM c"},
    )
    assert (out["row_count"], out["truncated"], len(out["rows"])) == (500, True, 500)
    assert out["rows"][0] == [1] and out["rows"][-1] == [500]
    assert "only the first 500 rows" in out["note"]
    small = ok(sess, "query_sql", {"sql": "SELECT sku_id FROM catalog"})
    assert (small["row_count"], small["truncated"]) == (12, False)


def test_useful_queries_work(sess):
    out = ok(
        sess,
        "query_sql",
        {
            "sql": "SELECT c.category_l1, COUNT(*) AS n, ROUND(AVG(c.ref_price), 2) FROM catalog c "
            "JOIN orders o ON o.sku_id = c.sku_id GROUP BY c.category_l1"
        },
    )
    assert out["columns"] == ["category_l1", "n", "ROUND(AVG(c.ref_price), 2)"]
    assert out["rows"] == [["drinks", 1, float(simulator_of(sess).world.catalog.loc[0, "ref_price"])]]
    summary = ok(sess, "query_sql", {"sql": "SELECT day, cash, net_assets FROM daily_summary ORDER BY day"})
    reports = simulator_of(sess).reports
    assert summary["rows"] == [[r.day, r.balance.cash, r.balance.net_assets] for r in reports]
    odd = ok(sess, "query_sql", {"sql": "SELECT x'00ff', 1e999, -1e999, NULL, 'é'"})
    assert odd["rows"] == [["x'00ff'", "inf", "-inf", None, "é"]]
    master = ok(sess, "query_sql", {"sql": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"})
    assert [r[0] for r in master["rows"]] == sorted(t.split("(")[0][2:] for t in schema_text("CNY").splitlines()[1:])


def test_the_copy_follows_the_records(sess):
    n = ok(sess, "query_sql", {"sql": "SELECT COUNT(*) FROM orders"})["rows"][0][0]
    ok(sess, "place_order", {"items": [{"sku_id": "SKU0002", "qty": 3}]})
    assert ok(sess, "query_sql", {"sql": "SELECT COUNT(*) FROM orders"})["rows"][0][0] == n + 1


def test_the_copy_replays_the_writes_since_the_last_query_and_reloads_when_they_do_not_add_up(sess, monkeypatch):
    sim = simulator_of(sess)
    box = SqlSandbox(sim.records)
    kinds: list[str] = []
    ask = _QueryProcess.ask

    def spy(self, message, timeout_s, blob=b""):
        kinds.append(message[0])
        return ask(self, message, timeout_s, blob)

    monkeypatch.setattr(_QueryProcess, "ask", spy)
    tables = [name for name in _counts(sess) if not name.startswith("sqlite_")]

    def same_as_the_store() -> None:
        live = sim.records.connection
        for name in tables:
            sql = f"SELECT * FROM {name} ORDER BY rowid"
            want = [list(r) for r in live.execute(sql).fetchall()]
            assert box.run(sql)["rows"] == want[:MAX_ROWS], name

    same_as_the_store()
    for i in range(6):  # orders placed, arriving (an UPDATE of arrived_day), restocks, prices, settled days
        ok(sess, "place_order", {"items": [{"sku_id": f"SKU{2 + i % 3:04d}", "qty": 4}]})
        ok(sess, "adjust_price", {"items": [{"device_id": "CN_CAMPUS_01", "sku_id": "SKU0003", "price": 2.5 + i}]})
        if sim.today.is_workday and i % 2:
            ok(sess, "restock", {"items": [{"device_id": "CN_CAMPUS_01", "sku_id": "SKU0001", "qty": 1}]})
        ok(sess, "end_day")
        same_as_the_store()
    arrived = sim.records.connection.execute("SELECT COUNT(*) FROM orders WHERE arrived_day IS NOT NULL")
    assert arrived.fetchone()[0] >= 1
    assert kinds.count("load") == 1 and kinds.count("apply") == 6  # one copy, then the writes of each day
    # a write on the raw connection is not in the journal: the counts differ and the whole copy is sent
    sim.records.connection.execute("DELETE FROM price_changes WHERE new_price > 5")
    ok(sess, "end_day")
    same_as_the_store()
    assert kinds.count("load") == 2
    box.close()


def test_the_sandbox_is_a_separate_database(sess):
    box = SqlSandbox(simulator_of(sess).records)
    assert box.run("SELECT COUNT(*) FROM orders")["rows"] == [[1]]
    proc = box._process.proc
    assert proc.pid != os.getpid() and proc.poll() is None  # queries run in a process of their own
    copy = open_copy(simulator_of(sess).records.serialize())  # the copy that process holds, opened here
    copy.set_authorizer(None)  # even with every guard removed, the copy is not the simulator's store
    copy.execute("PRAGMA query_only = OFF")
    copy.execute("DELETE FROM orders")
    assert simulator_of(sess).records.connection.execute("SELECT COUNT(*) FROM orders").fetchone()[0] == 1
    box.close()
    assert box._process is None and proc.poll() is not None


def test_a_sandbox_never_closed_ends_its_process(sess):
    box = SqlSandbox(simulator_of(sess).records)
    box.run("SELECT 1")
    proc = box._process.proc
    del box
    gc.collect()
    # a cancelled timer's thread may hold the sandbox a moment longer on a busy machine; a process that is
    # never ended would still be running after the 10 s (subprocess.TimeoutExpired fails the test)
    assert proc.wait(timeout=10) is not None


# Each runs inside one or a few SQLite steps, where the progress handler never looks at the clock:
# about 10 s each on a 2024 laptop, the LIKE one 40 calls of 0.3 s in a single row.
STUCK = [
    pytest.param("SELECT instr(printf('%.*c', 999999, 'a'), printf('%.*c', 500000, 'a') || 'b')", id="instr"),
    pytest.param(
        "SELECT length(replace(printf('%.*c', 999999, 'a'), printf('%.*c', 500000, 'a') || 'b', ''))", id="replace"
    ),
    pytest.param(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 40) "
        "SELECT sum(printf('%.*c', 999999, 'a') LIKE ('%' || printf('%.*c', 98 + i % 1, 'a') || 'b')) FROM n",
        id="like-100-char-pattern",
    ),
]


@pytest.mark.parametrize("sql", STUCK)
def test_a_query_stuck_inside_sqlite_is_stopped_at_the_time_limit(world, sql):
    s = ToolSession(world, seed=1, sql_time_limit_s=0.5)
    assert ok(s, "query_sql", {"sql": "SELECT COUNT(*) FROM catalog"})["rows"] == [[12]]
    start = time.monotonic()
    res = s.call("query_sql", {"sql": sql})
    took = time.monotonic() - start
    assert not res.ok and "stopped the query after 0.5 s (the time limit)" in res.error
    assert took < 10  # generous for slow machines; the point is "stopped", not how fast
    ok(s, "place_order", {"items": [{"sku_id": "SKU0002", "qty": 3}]})
    assert ok(s, "query_sql", {"sql": "SELECT COUNT(*) FROM orders"})["rows"] == [[1]]  # a new process, fresh copy
    s.close()


ORDINARY = [
    "SELECT * FROM daily_summary ORDER BY day",
    "SELECT * FROM catalog ORDER BY sku_id",
    "SELECT device_id, sku_id, SUM(units), SUM(revenue), AVG(revenue) FROM daily_sales GROUP BY 1, 2 ORDER BY 1, 2",
    "SELECT 1.0 / 3, 2e-308 * 1e-10, -0.0, 9007199254740993, x'00ff10', 'é\u4e2d'",
]


@pytest.mark.parametrize("sql", ORDINARY)
def test_ordinary_results_equal_sqlite_itself_every_time(sess, sql):
    for _ in range(2):
        ok(sess, "end_day")
    direct = [list(r) for r in simulator_of(sess).records.connection.execute(sql).fetchall()]
    direct = [[f"x'{v.hex()}'" if isinstance(v, bytes) else v for v in r] for r in direct]
    first = ok(sess, "query_sql", {"sql": sql})
    again = ok(sess, "query_sql", {"sql": sql})
    assert first["rows"] == again["rows"] == direct and len(direct) >= 1
    assert [type(v) for r in first["rows"] for v in r] == [type(v) for r in direct for v in r]
    first.pop("elapsed_ms"), again.pop("elapsed_ms")
    assert first == again


def test_long_statements_are_quoted_not_echoed(sess):
    word = "A" * 100_000  # within the arguments' limit of 131,072 characters (autovend.tools.guard)
    msg = fail(sess, "query_sql", {"sql": word})
    assert f"got {'A' * 60}... (100,000 characters)." in msg and len(msg) < 300
    column = "c" * 50_000
    msg = fail(sess, "query_sql", {"sql": f"SELECT {column} FROM orders"})
    assert "no such column: ccc" in msg and "(50,016 characters)" in msg and len(msg) < 500


@pytest.mark.parametrize(
    "sql,word",
    [
        ("  select 1", "select"),
        ("-- c\nWITH x AS (SELECT 1) SELECT * FROM x", "with"),
        ("/*a*/VALUES (1)", "values"),
        ("", ""),
    ],
)
def test_first_word(sql, word):
    assert first_word(sql) == word


ORPHAN = """
import os, sqlite3, sys
from autovend.tools.sql import _QueryProcess
from autovend.tools.sql_worker import send_frame
db = sqlite3.connect(":memory:")
db.execute("CREATE TABLE t (x)")
p = _QueryProcess()
assert p.ask(("load",), None, db.serialize()) == ("loaded",)
print(p.proc.pid, flush=True)
send_frame(p.proc.stdin, ("query", sys.argv[1], 600.0, 500))
os._exit(0)  # the parent dies at once (no clean-up), its query process is busy for about a minute
"""


def _running(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "\nState:\tZ" not in status.read_text()  # a zombie has ended


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc")
def test_the_query_process_ends_with_its_parent_even_mid_statement():
    slow = "SELECT " + ", ".join(
        f"instr(printf('%.*c', 999999, 'a'), printf('%.*c', {500000 + i}, 'a') || 'b')" for i in range(6)
    )
    parent = subprocess.run(  # stderr not captured: the query process inherits it and would hold it open
        [sys.executable, "-c", ORPHAN, slow], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60
    )
    pid = int(parent.stdout.split()[0])
    waited = 0.0
    while _running(pid) and waited < 10:  # unwatched, the statement would run for about a minute
        time.sleep(0.1)
        waited += 0.1
    orphaned = _running(pid)
    if orphaned:
        os.kill(pid, signal.SIGKILL)
    assert not orphaned


def test_the_workers_authorizer_refuses_pragmas_itself():
    """Below the first-word filter: the worker's own connection refuses every PRAGMA and write by its authorizer."""
    import sqlite3

    from autovend.tools.sql_worker import open_copy

    src = sqlite3.connect(":memory:")
    src.execute("CREATE TABLE t (a INTEGER)")
    src.execute("INSERT INTO t VALUES (1), (2)")
    src.commit()
    conn = open_copy(src.serialize())
    assert conn.execute("SELECT sum(a) FROM t").fetchone() == (3,)
    for sql in (
        "PRAGMA query_only = OFF",
        "PRAGMA writable_schema = ON",
        "PRAGMA table_info(t)",
        "SELECT * FROM pragma_table_info('t')",
        "INSERT INTO t VALUES (3)",
        "ATTACH DATABASE ':memory:' AS other",
    ):
        with pytest.raises(sqlite3.DatabaseError, match="not authorized|readonly|query_only|too many attached"):
            conn.execute(sql).fetchall()
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (2,)  # nothing was written
