"""Partitioned sources: orders and inventory as hive-partitioned Parquet, checked and loaded file by file.

The tiny source of `make_source` (3 machines, 8 order lines over 3 days) is written partitioned by machine,
by month or both; its check and its tables must be those of the flat source, and a problem must be reported
with the partition file and its row.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import fsspec
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from autovend.data.check import check_source
from autovend.data.load import load_source
from autovend.data.parts import is_partitioned
from autovend.data.partwrite import partition_keys, partition_source, write_partitioned
from autovend.errors import ConfigError, SourceError
from tests.data.make_source import daily_tables, source_tables, write_source

ORDERS_M01 = "orders/machine_id=M01/part-0.parquet"


@pytest.fixture
def flat(tmp_path: Path) -> Path:
    return write_source(tmp_path / "flat")


def _partitioned(flat: Path, out: Path, by: str = "machine_id") -> Path:
    partition_source(flat, out, partition_keys(by))
    return out


def _rewrite(path: Path, frame: pd.DataFrame) -> None:
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


@pytest.mark.parametrize("by", ["machine_id", "month", "machine_id,month", "month,machine_id"])
def test_a_partitioned_copy_checks_and_loads_as_the_flat_source(flat, tmp_path, by):
    part = _partitioned(flat, tmp_path / "parts", by)
    assert is_partitioned(part) and not is_partitioned(flat)
    report, before = check_source(part), check_source(flat)
    assert report.ok, report.format()
    a, b = report.summary.to_dict(), before.summary.to_dict()
    for key in ("content_hash", "duplicate_rows"):
        a.pop(key), b.pop(key)
    assert a == b  # 3 machines, 8 lines (6 completed, 9 units), the same dates, inventory for M01 and M02
    assert report.summary.duplicate_rows["orders/"] == 1  # the last two lines of o6 (both M03, March)
    loaded, flat_loaded = load_source(part), load_source(flat)
    key = ["order_id", "sku_id", "ts", "qty"]
    pd.testing.assert_frame_equal(
        loaded.orders.sort_values(key).reset_index(drop=True),
        flat_loaded.orders.sort_values(key).reset_index(drop=True),
    )
    assert len(loaded.inventory) == 3 and loaded.orders_have_time


def test_a_url_and_a_path_give_the_same_check(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    by_path, by_url = check_source(part), check_source(f"file://{part}")
    assert by_path.ok and by_url.ok
    assert by_path.summary.content_hash == by_url.summary.content_hash
    assert str(by_url.path) == f"file://{part}"


def test_a_source_on_another_filesystem_is_checked_and_loaded(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    fs = fsspec.filesystem("memory")
    for path in sorted(p for p in part.rglob("*") if p.is_file()):
        fs.pipe_file(f"/op/{path.relative_to(part).as_posix()}", path.read_bytes())
    report = check_source("memory://op")
    assert report.ok, report.format()
    assert report.summary.content_hash == check_source(part).summary.content_hash
    assert len(load_source("memory://op").orders) == 8


def test_a_bad_value_is_named_by_its_partition_file_row_and_column(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    file = part / ORDERS_M01  # M01's lines: o1 (S1, S2), o4 (S2)
    frame = pq.read_table(file).to_pandas()
    frame.loc[2, "qty"] = 0
    _rewrite(file, frame)
    report = check_source(part)
    assert not report.ok
    assert [v.format() for v in report.errors] == [
        f"{ORDERS_M01}, row 3, column qty: must be ≥ 1 (value '0'). Fix: an order line sells at least one unit: "
        "fix the quantity or drop the line"
    ]
    with pytest.raises(SourceError, match="row 3, column qty"):
        load_source(part)


def test_a_text_cell_in_a_number_column_is_named(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    file = part / ORDERS_M01
    frame = pq.read_table(file).to_pandas()
    frame["unit_price"] = frame["unit_price"].astype(str)
    frame.loc[1, "unit_price"] = "4,50"
    _rewrite(file, frame)
    (error,) = check_source(part).errors
    assert (error.file, error.rows, error.column, error.problem) == (
        ORDERS_M01,
        (2,),
        "unit_price",
        "is not a decimal number",
    )


def test_an_order_id_on_two_machines_in_two_files_is_an_error_in_both(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    file = part / "orders/machine_id=M02/part-0.parquet"  # M02: o2, o5
    frame = pq.read_table(file).to_pandas()
    frame.loc[1, "order_id"] = "o1"  # o1 is M01's
    _rewrite(file, frame)
    report = check_source(part)
    found = {(v.file, v.rows, v.column) for v in report.errors}
    assert found == {(ORDERS_M01, (1, 2), "order_id"), ("orders/machine_id=M02/part-0.parquet", (2,), "order_id")}
    assert all("more than one machine_id" in v.problem for v in report.errors)


def test_every_machine_of_an_order_counts_across_files(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts", "month")
    first = part / "orders/month=2025-03/part-0.parquet"
    frame = pq.read_table(first).to_pandas()
    assert list(frame["order_id"][:2]) == ["o1", "o1"]
    frame.loc[1, "machine_id"] = "M03"  # o1: M01, then M03 (an error within the file)
    _rewrite(first, frame)
    _rewrite(first.with_name("part-1.parquet"), frame.iloc[[0]].assign(sku_id="S3"))  # o1 at M01 in another file
    report = check_source(part)
    found = {(v.file, v.rows) for v in report.errors if v.column == "order_id"}
    assert found == {(first.relative_to(part).as_posix(), (1, 2)), ("orders/month=2025-03/part-1.parquet", (1,))}


def test_a_lone_far_line_is_found_across_files_and_named_in_its_own(tmp_path):
    tables = daily_tables("2025-03-01", 30, 40)  # 1,200 lines over 30 days, machines M01..M03
    tables["orders"].loc[5, "ts"] = "2026-03-05T10:00:00"  # M02's line, a year off: 1 of 1,200 lines
    flat = write_source(tmp_path / "flat", tables)
    part = _partitioned(flat, tmp_path / "parts")
    flat_report, report = check_source(flat), check_source(part)
    (flat_error,) = flat_report.errors
    (error,) = report.errors
    assert error.file == "orders/machine_id=M02/part-0.parquet" and error.column == "ts"
    assert error.rows == (3,)  # M02's lines are 3, 4, 5, 12, ... of the table: the third of its file
    bulk = "the bulk of the orders (2025-03-01 .. 2025-03-30)"
    assert error.problem == flat_error.problem == f"is dated 340 days away from {bulk}"  # 2025-03-30 + 340 days


def test_a_line_in_the_wrong_month_folder_is_an_error(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts", "month")
    file = part / "orders/month=2025-03/part-0.parquet"
    frame = pq.read_table(file).to_pandas()
    frame.loc[0, "ts"] = pd.Timestamp("2025-04-01 08:00")
    _rewrite(file, frame)
    messages = [v.format() for v in check_source(part).errors]
    assert messages[0].startswith(
        "orders/month=2025-03/part-0.parquet, row 1, column ts: is not in the month of its partition folder "
        "(month=2025-03) (value '2025-04-01 08:00:00')"
    )


def test_inventory_dated_far_outside_the_orders_is_found(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    file = part / "inventory/machine_id=M02/part-0.parquet"
    frame = pq.read_table(file).to_pandas()
    frame.loc[0, "ts"] = pd.Timestamp("2026-01-01 07:00")
    _rewrite(file, frame)
    (error,) = check_source(part).errors
    assert (error.file, error.rows, error.column) == ("inventory/machine_id=M02/part-0.parquet", (1,), "ts")
    assert error.problem.startswith("is dated more than 90 days outside")


def test_the_layout_is_checked(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    (part / "orders/machine_id=M01/notes.txt").write_text("x")
    bad = part / "orders/shop=A"
    bad.mkdir()
    shutil.copyfile(part / ORDERS_M01, bad / "part-0.parquet")
    (part / "orders/_SUCCESS").write_text("")  # a writer's marker: ignored
    shutil.copyfile(flat / "orders.csv", part / "orders.csv")
    problems = {(v.file, v.problem) for v in check_source(part).errors}
    assert ("orders.csv", "both orders.csv and the folder orders/ exist") in problems
    (part / "orders.csv").unlink()
    problems = {(v.file, v.problem) for v in check_source(part).errors}
    assert problems == {
        ("orders/machine_id=M01/notes.txt", "is not a Parquet file (.parquet)"),
        (
            "orders/shop=A/part-0.parquet",
            "is in a folder of the partition key 'shop', which is not machine_id or month",
        ),
    }


def test_a_file_that_is_not_parquet_is_named(flat, tmp_path):
    part = _partitioned(flat, tmp_path / "parts")
    (part / ORDERS_M01).write_bytes(b"not parquet at all")
    (error,) = check_source(part).errors
    assert error.file == ORDERS_M01 and error.problem.startswith("cannot be read as a Parquet file")


def test_partition_keys_are_checked():
    assert partition_keys("month, machine_id") == ("month", "machine_id")
    for bad in ("", "shop", "month,month"):
        with pytest.raises(ConfigError, match="give machine_id, month or both"):
            partition_keys(bad)


def test_machine_ids_are_percent_encoded_in_folder_names(tmp_path):
    orders = source_tables()["orders"].assign(machine_id="M/1 a")
    assert write_partitioned(orders, tmp_path, "orders", ("machine_id",)) == 1
    (file,) = (tmp_path / "orders").rglob("*.parquet")
    assert file.parent.name == "machine_id=M%2F1%20a"


def test_adapt_partition_writes_a_partitioned_copy(flat, tmp_path):
    from typer.testing import CliRunner

    from autovend.cli import app

    out = tmp_path / "parts"
    result = CliRunner().invoke(app, ["adapt", "partition", str(flat), "-o", str(out), "--by", "machine_id,month"])
    assert result.exit_code == 0, result.output
    assert "(5 partition files by machine_id,month)" in " ".join(result.output.split())  # orders: 3, inventory: 2
    assert (out / "orders/machine_id=M03/month=2025-03/part-0.parquet").is_file()
    assert check_source(out).ok
    again = CliRunner().invoke(app, ["adapt", "partition", str(flat), "-o", str(out), "--by", "shop"])
    assert isinstance(again.exception, ConfigError) and "give machine_id, month or both" in str(again.exception)


def test_the_synthetic_generator_writes_a_partitioned_source(tmp_path):
    import datetime as dt

    from autovend.data.synth.config import SynthConfig
    from autovend.data.synth.generate import synthesize
    from autovend.data.synth.generate import write_source as write_synth

    cfg = SynthConfig(seed=3, start=dt.date(2024, 6, 3), end=dt.date(2024, 6, 30), locations={"worksite/canteen": 2},
                      n_with_inventory=1, target_units=300)  # fmt: skip
    src = synthesize(cfg)
    write_synth(src, tmp_path / "flat", tmp_path / "truth")
    write_synth(src, tmp_path / "parts", tmp_path / "truth2", partition_by=("machine_id",))
    assert sorted(p.parent.name for p in (tmp_path / "parts/orders").rglob("*.parquet")) == [
        "machine_id=SH0001",
        "machine_id=SH0002",
    ]
    flat_orders, part_orders = load_source(tmp_path / "flat").orders, load_source(tmp_path / "parts").orders
    key = ["order_id", "sku_id"]
    pd.testing.assert_frame_equal(
        part_orders.sort_values(key).reset_index(drop=True), flat_orders.sort_values(key).reset_index(drop=True)
    )


def test_order_keys_hash_each_distinct_order_and_machine_pair():

    from autovend.data.partcheck import MACHINE_SEED, ORDER_BUCKETS, order_keys
    from autovend.data.texthash import text_hashes

    typed = pd.DataFrame(
        {
            "order_id": pd.array(["o1", "o1", "o2", "o3", "o3", None, "o4"], dtype="string"),
            "machine_id": pd.array(["m1", "m1", "m1", "m1", "m2", "m1", "mX"], dtype="string"),
        }
    )
    keys = pd.concat(order_keys(typed, {"m1", "m2"}), ignore_index=True)  # mX is unknown, the None has no order
    pairs = [("o1", "m1"), ("o2", "m1"), ("o3", "m1"), ("o3", "m2")]
    ids = text_hashes([o for o, _ in pairs])
    want = pd.DataFrame(
        {"h1": ids[:, 0], "h2": ids[:, 1], "m": text_hashes([m for _, m in pairs], (MACHINE_SEED,))[:, 0]}
    )
    order = ["h1", "h2", "m"]
    got = keys.sort_values(order, ignore_index=True)
    pd.testing.assert_frame_equal(got, want.sort_values(order, ignore_index=True))
    assert len(order_keys(typed, None)) == ORDER_BUCKETS
    assert sum(len(k) for k in order_keys(typed, None)) == 5  # with (o4, mX) when no machine list is given


def test_shared_in_finds_the_ids_seen_with_two_machines_and_their_files():
    import numpy as np

    from autovend.data.partcheck import shared_in

    u = np.uint64

    def piece(rows):
        return pd.DataFrame(
            {c: np.array(v, dtype=np.uint64) for c, v in zip(("h1", "h2", "m"), zip(*rows, strict=True), strict=True)}
        )

    # id (1, 1) at machines 5 and 6 in files 0 and 2; id (2, 2) at machine 5 twice (files 0, 1); (3, 9) and (3, 8)
    # share h1 only: two ids, one machine each; (4, 4) at two machines in one file
    pieces = [
        piece([(1, 1, 5), (2, 2, 5), (3, 9, 7)]),
        piece([(2, 2, 5), (3, 8, 6)]),
        piece([(1, 1, 6)]),
        pd.DataFrame({"h1": np.zeros(0, u), "h2": np.zeros(0, u), "m": np.zeros(0, u)}),
        piece([(4, 4, 1), (4, 4, 2)]),
    ]
    ids, files = shared_in(pieces)
    assert ids.tolist() == [[1, 1], [4, 4]]
    assert files == {0, 2, 4}
    assert shared_in(pieces[3:4])[0].shape == (0, 2)
