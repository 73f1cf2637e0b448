import re

import numpy as np
import pandas as pd
import pytest

from autovend.data.contract import CALENDAR, MACHINES, ORDERS, PRODUCTS, WEATHER
from autovend.data.source import TableReadError, coerce_column, entry_problem, read_table_file
from autovend.errors import SourceError


def text(*values):
    return pd.Series(list(values), dtype="str")


def issues(coerced):
    """{problem: [1-based rows]} of a coercion result."""
    return {i.problem: [int(r) + 1 for r in np.flatnonzero(i.mask)] for i in coerced.issues}


# --- reading -------------------------------------------------------------------------------


def test_csv_read_as_text_keeps_leading_zeros_and_decimals(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'\xef\xbb\xbfid,qty,price,note\r\n007,12,1.50,\r\n008,x,2,"a,b"\r\n')
    frame = read_table_file(path)
    assert list(frame.columns) == ["id", "qty", "price", "note"]  # BOM not glued to the first name
    assert frame.to_dict("list") == {
        "id": ["007", "008"],
        "qty": ["12", "x"],
        "price": ["1.50", "2"],
        "note": ["", "a,b"],
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b"", "the file is empty", id="empty"),
        # pyarrow's "Expected 2 columns, got 1: 3" named no row; now the row, the line and the fix
        pytest.param(
            b"id,qty\n1,2\n3\n", "row 2: has 1 cell (from line 3 of the file), the header 2. Fix: give", id="ragged"
        ),
        pytest.param(
            b'id,qty\n1,2\n"3,4\n5,6\n',
            "row 2, column id: a double quote opens this cell on line 3 of the file and is never closed",
            id="unclosed-quote",
        ),
        pytest.param(b"id,qty\n1,\xff\xfe\n", "save the file as UTF-8", id="not-utf8"),
        pytest.param(b"id,qty,id\n1,2,3\n", "repeats column names ['id']", id="repeated-header"),
    ],
)
def test_unreadable_files_raise_source_error(tmp_path, content, message):
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    with pytest.raises(SourceError, match=re.escape(message)):
        read_table_file(path)


def test_utf16_is_named_with_how_to_resave_and_never_echoed(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("id,qty\nSECRET-ID,2\n".encode("utf-16"))
    with pytest.raises(TableReadError) as caught:
        read_table_file(path)
    assert caught.value.problem == "is not UTF-8 text: it is UTF-16 or UTF-32 (it starts with that byte-order mark)"
    assert "CSV UTF-8 (Comma delimited)" in caught.value.fix and "iconv -f UTF-16 -t UTF-8" in caught.value.fix
    assert "SECRET" not in str(caught.value)


def test_parquet_nested_columns_refused_when_asked_for_else_text(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"id": ["a", "b"], "tags": [["x", "y"], None], "info": [{"k": 1}, {"k": 2}]}).to_parquet(path)
    with pytest.raises(TableReadError, match="holds list<element: string> values") as caught:
        read_table_file(path, columns=("id", "tags"))
    assert caught.value.column == "tags"
    frame = read_table_file(path, columns=("id",))
    assert frame["tags"].iloc[0] == "['x' 'y']" and frame["tags"].isna().to_list() == [False, True]
    assert frame["info"].to_list() == ["{'k': 1}", "{'k': 2}"]
    assert read_table_file(path)["info"].to_list() == ["{'k': 1}", "{'k': 2}"]  # no column named: none refused


def test_entry_problems_of_folders_and_links(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "ok.csv").write_text("a\n")
    (folder / "dir.csv").mkdir()
    (folder / "inside.csv").symlink_to(folder / "ok.csv")
    (tmp_path / "out.csv").write_text("a\n")
    (folder / "outside.csv").symlink_to(tmp_path / "out.csv")
    (folder / "dangling.csv").symlink_to(folder / "nothing.csv")
    problems = {name: entry_problem(folder, folder / name) for name in sorted(p.name for p in folder.iterdir())}
    assert {name: (found[0] if found else None) for name, found in problems.items()} == {
        "dangling.csv": "is a link to nothing (its target does not exist)",
        "dir.csv": "is a folder, not a file",
        "inside.csv": None,
        "ok.csv": None,
        "outside.csv": "is a link to a file outside the source folder (not read)",
    }


# --- coercion ------------------------------------------------------------------------------


def test_integer_text():
    out = coerce_column(ORDERS.column("qty"), text("3", "", "x", "1.5", "+2", " 4 "))
    assert out.values.to_list()[:1] == [3.0]
    assert np.isnan(out.values.to_numpy()[1:4]).all()
    assert out.values.to_list()[4:] == [2.0, 4.0]
    assert issues(out) == {"is blank": [2], "is not a whole number": [3, 4]}


def test_whole_numbers_beyond_2_to_the_53_are_out_of_range():
    out = coerce_column(ORDERS.column("qty"), text("9007199254740992", "9007199254740993", "99999999999999999999"))
    assert issues(out) == {"is out of range (larger than 2^53 = 9007199254740992 in magnitude)": [3]}
    assert out.values.iloc[0] == 2.0**53 and out.values.iloc[1:].isna().to_list() == [False, True]
    typed = coerce_column(ORDERS.column("qty"), pd.Series([1, -(2**62)], dtype="Int64"))
    assert list(issues(typed)) == ["is out of range (larger than 2^53 = 9007199254740992 in magnitude)"]


def test_decimals_must_be_finite_and_at_most_10_to_the_12():
    out = coerce_column(ORDERS.column("unit_price"), text("1e12", "1.5e12", "1e999", "-1e400", "1e-400"))
    assert issues(out) == {"is out of range (larger than 10^12 in magnitude)": [2, 3, 4]}
    assert out.values.iloc[0] == 1e12 and out.values.iloc[4] == 0.0  # a tiny one underflows to 0: the bound's job


def test_optional_integer_blank_is_unknown_not_an_error():
    out = coerce_column(MACHINES.column("capacity"), text("300", ""))
    assert issues(out) == {}
    assert np.isnan(out.values.iloc[1])


def test_decimal_text():
    out = coerce_column(ORDERS.column("unit_price"), text("1.50", ".5", "1e1", "nan", "4,50", "inf", "-2"))
    assert out.values.to_list()[:3] == [1.5, 0.5, 10.0]
    assert out.values.iloc[6] == -2.0  # the sign rule is the schema's job, not coercion's
    assert issues(out) == {"is not a decimal number": [4, 5, 6]}


def test_typed_parquet_numbers():
    qty = coerce_column(ORDERS.column("qty"), pd.Series([1.0, 2.5, np.nan, np.inf]))
    assert issues(qty) == {"is not a whole number": [2, 4], "is blank": [3]}
    price = coerce_column(ORDERS.column("unit_price"), pd.Series([1, 2], dtype="Int64"))
    assert price.values.to_list() == [1.0, 2.0] and issues(price) == {}


def test_timestamps_datetimes_with_t_or_space_and_fractions():
    out = coerce_column(ORDERS.column("ts"), text("2025-03-04T12:31:05", "2025-03-04 08:00", "2025-03-04T23:59:59.5"))
    assert issues(out) == {}
    assert out.has_time
    assert out.values.dtype == "datetime64[ns]"
    assert out.values.iloc[1] == pd.Timestamp("2025-03-04 08:00:00")
    assert out.values.iloc[2] == pd.Timestamp("2025-03-04 23:59:59.5")


def test_timestamps_dates_only_become_midnight():
    out = coerce_column(ORDERS.column("ts"), text("2025-03-04", "2025-03-05"))
    assert issues(out) == {} and not out.has_time
    assert out.values.to_list() == [pd.Timestamp("2025-03-04"), pd.Timestamp("2025-03-05")]


def test_timestamp_problems_each_named():
    out = coerce_column(
        ORDERS.column("ts"),
        text(
            "2025-03-04T10:00:00",
            "03/04/2025",
            "2025-03-04T10:00:00+08:00",
            "2025-03-04T02:00:00Z",
            "2025-02-30T10:00:00",
            "2025-03-04",
            "",
            "2025-03-05T10:00:00",
        ),
    )
    assert issues(out) == {
        "is blank": [7],
        "carries a UTC offset": [3, 4],
        "is not an ISO 8601 date or date-time": [2],
        "is a date without time in a column of date-times (mixed forms)": [6],
        "is not a real calendar date or time of day": [5],
    }
    assert out.values.notna().to_list() == [True, False, False, False, False, False, False, True]


def test_mixed_forms_flag_the_minority_datetimes():
    out = coerce_column(ORDERS.column("ts"), text("2025-03-04", "2025-03-05", "2025-03-05T10:00:00"))
    assert issues(out) == {"is a date-time in a column of dates without time (mixed forms)": [3]}
    assert not out.has_time


def test_date_column_refuses_datetimes():
    out = coerce_column(WEATHER.column("date"), text("2025-03-04", "2025-03-05T00:00:00", "4 March"))
    assert issues(out) == {"is a date-time where a date is expected": [2], "is not an ISO 8601 date": [3]}


def test_typed_parquet_timestamps():
    aware = pd.Series(pd.to_datetime(["2025-03-04 10:00"]).tz_localize("Asia/Shanghai"))
    assert issues(coerce_column(ORDERS.column("ts"), aware)) == {"carries a time zone": [1]}
    naive = coerce_column(
        ORDERS.column("ts"), pd.Series(pd.to_datetime(["2025-03-04 10:00", "2025-03-05"], format="ISO8601"))
    )
    assert issues(naive) == {} and naive.has_time
    days = coerce_column(
        WEATHER.column("date"),
        pd.Series(pd.to_datetime(["2025-03-04", "2025-03-05 06:00"], format="ISO8601")),
    )
    assert issues(days) == {"is a date-time where a date is expected": [2]}


def test_timestamps_outside_1900_to_2200_are_named_not_crashing():
    out = coerce_column(ORDERS.column("ts"), text("9999-12-31T00:00:00", "2200-12-31T23:59:59", "1899-12-31T10:00:00"))
    assert issues(out) == {"is outside the years 1900-2200": [1, 3]}
    assert out.values.isna().to_list() == [True, False, True]
    days = coerce_column(WEATHER.column("date"), text("0001-01-01", "2025-03-04"))
    assert issues(days) == {"is outside the years 1900-2200": [1]}


def test_typed_timestamps_outside_1900_to_2200_are_named_not_crashing():
    import datetime as dt

    stamps = pd.Series([dt.datetime(9999, 1, 1), dt.datetime(2025, 3, 4, 10), None], dtype="datetime64[us]")
    out = coerce_column(ORDERS.column("ts"), stamps)
    assert issues(out) == {"is outside the years 1900-2200": [1], "is blank": [3]}
    assert out.values.dtype == "datetime64[ns]" and out.values.iloc[1] == pd.Timestamp("2025-03-04 10:00")
    assert out.has_time


def test_booleans():
    out = coerce_column(CALENDAR.column("is_workday"), text("true", "FALSE", "yes", "", "1"))
    assert out.values.to_list()[:2] == [True, False]
    assert issues(out) == {"is blank": [4], "is not true or false": [3, 5]}
    typed = coerce_column(CALENDAR.column("is_workday"), pd.Series([True, False]))
    assert typed.values.to_list() == [True, False] and issues(typed) == {}


def test_strings_keep_spaces_choices_are_stripped():
    ids = coerce_column(PRODUCTS.column("sku_id"), text("S1 ", " ", "S2"))
    assert ids.values.to_list()[0] == "S1 "
    assert issues(ids) == {"is blank": [2]}
    site = coerce_column(MACHINES.column("site_type"), text(" campus"))
    assert site.values.to_list() == ["campus"]


def test_times_parse_to_the_same_nanoseconds_with_or_without_an_unreal_value_in_the_column():
    ts = next(c for c in ORDERS.columns if c.name == "ts")
    good = ["2024-06-01T07:05:43", "2024-06-01 07:05", "2024-06-01T07:05:43.123456789", "2024-02-29T23:59:59.5"]
    parsed = coerce_column(ts, pd.Series(good, dtype="str"))
    assert not parsed.issues
    assert parsed.values.astype("int64").tolist() == [
        1717225543000000000,
        1717225500000000000,
        1717225543123456789,
        1709251199500000000,
    ]
    # one impossible time sends the column down the slower path: the real ones keep their values
    mixed = coerce_column(ts, pd.Series([*good, "2024-02-30T00:00", "2024-06-01T24:00"], dtype="str"))
    assert mixed.values.iloc[:4].astype("int64").tolist() == parsed.values.astype("int64").tolist()
    assert mixed.values.iloc[4:].isna().all()
    assert [i.problem for i in mixed.issues] == ["is not a real calendar date or time of day"]
    assert np.flatnonzero(mixed.issues[0].mask).tolist() == [4, 5]
