import os
import stat

import pandas as pd
import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.data.check import check_source
from autovend.data.hashing import source_hash
from tests.data.make_source import META, source_tables, typed_frame, write_source

# Row numbers in messages are 1-based without the header: frame row i is file row i + 1.


def cell(stem, row, column, value):
    def mutate(tables):
        tables[stem].loc[row, column] = value

    return mutate


def drop_column(stem, column):
    def mutate(tables):
        tables[stem] = tables[stem].drop(columns=[column])

    return mutate


def append_copy(stem, row, **changes):
    def mutate(tables):
        extra = tables[stem].iloc[[row]].assign(**changes)
        tables[stem] = pd.concat([tables[stem], extra], ignore_index=True)

    return mutate


def rename_column(stem, old, new):
    def mutate(tables):
        tables[stem] = tables[stem].rename(columns={old: new})

    return mutate


def remove(name):
    def mutate(folder):
        (folder / name).unlink()

    return mutate


def write(name, data):
    def mutate(folder):
        (folder / name).write_bytes(data)

    return mutate


def meta(**changes):
    def mutate(folder):
        import yaml

        data = {**META, **changes}
        for key, value in changes.items():
            if value is None:
                del data[key]
        (folder / "source.yaml").write_text(yaml.safe_dump(data))

    return mutate


def replace_with_folder(name):
    def mutate(folder):
        (folder / name).unlink()
        (folder / name).mkdir()
        (folder / name / "part-0.csv").write_text("order_id\n")

    return mutate


def as_utf16(name):
    def mutate(folder):
        (folder / name).write_bytes((folder / name).read_text(encoding="utf-8").encode("utf-16"))

    return mutate


def add_parquet_orders(folder):
    typed_frame(source_tables()["orders"]).to_parquet(folder / "orders.parquet", index=False)


BROKEN = [
    # (table mutation, folder mutation, substrings of ONE report line, total errors)
    pytest.param(
        None,
        remove("orders.csv"),
        ["orders.csv: file not found", "Fix: add orders.csv or orders.parquet"],
        1,
        id="missing-file",
    ),
    pytest.param(
        drop_column("orders", "qty"),
        None,
        [
            "orders.csv, column qty: missing required column",
            "columns found: 'order_id', 'machine_id', 'sku_id', 'ts', 'unit_price', 'status'",
            "Fix: add a column named qty",
        ],
        1,
        id="missing-column",
    ),
    pytest.param(
        rename_column("orders", "qty", "Qty"),
        None,
        ["orders.csv, column qty: missing required column", "Fix: rename column 'Qty' to 'qty'"],
        1,
        id="column-name-case",
    ),
    pytest.param(
        cell("orders", 2, "qty", "two"),
        None,
        [
            "orders.csv, row 3, column qty: is not a whole number (value 'two')",
            "Fix: write the number with digits",
        ],
        1,
        id="wrong-type-qty",
    ),
    pytest.param(
        cell("orders", 0, "unit_price", "4,50"),
        None,
        [
            "orders.csv, row 1, column unit_price: is not a decimal number (value '4,50')",
            "'.' as decimal point",
        ],
        1,
        id="wrong-type-price",
    ),
    pytest.param(
        cell("orders", 4, "qty", "0"),
        None,
        [
            "orders.csv, row 5, column qty: must be ≥ 1 (value '0')",
            "Fix: an order line sells at least one unit",
        ],
        1,
        id="qty-zero",
    ),
    pytest.param(
        cell("orders", 1, "qty", "-3"),
        None,
        ["orders.csv, row 2, column qty: must be ≥ 1 (value '-3')"],
        1,
        id="qty-negative",
    ),
    pytest.param(
        cell("orders", 3, "unit_price", "-0.5"),
        None,
        ["orders.csv, row 4, column unit_price: must be ≥ 0 (value '-0.5')", "Fix: give the price charged"],
        1,
        id="negative-price",
    ),
    pytest.param(
        cell("products", 1, "ref_price", "0"),
        None,
        [
            "products.csv, row 2, column ref_price: must be > 0 (value '0')",
            "Fix: give the suggested retail price",
        ],
        1,
        id="ref-price-zero",
    ),
    pytest.param(
        cell("products", 0, "unit_cost", "0"),
        None,
        ["products.csv, row 1, column unit_cost: must be > 0", "or leave the cell blank"],
        1,
        id="unit-cost-zero",
    ),
    pytest.param(
        cell("products", 0, "shelf_life_days", "0"),
        None,
        ["products.csv, row 1, column shelf_life_days: must be > 0"],
        1,
        id="shelf-life-zero",
    ),
    pytest.param(
        cell("machines", 2, "capacity", "-5"),
        None,
        ["machines.csv, row 3, column capacity: must be > 0 (value '-5')"],
        1,
        id="capacity-negative",
    ),
    pytest.param(
        cell("inventory", 0, "shelf_qty", "-1"),
        None,
        ["inventory.csv, row 1, column shelf_qty: must be ≥ 0 (value '-1')"],
        1,
        id="shelf-qty-negative",
    ),
    pytest.param(
        cell("weather", 2, "precip_mm", "-0.1"),
        None,
        ["weather.csv, row 3, column precip_mm: must be ≥ 0 (value '-0.1')"],
        1,
        id="precip-negative",
    ),
    pytest.param(
        cell("orders", 6, "machine_id", "M99"),
        None,
        [
            "orders.csv, row 7, column machine_id: is not in machines.csv (value 'M99')",
            "Fix: add the machine_id to machines.csv or correct the id",
        ],
        1,
        id="unknown-machine-orders",
    ),
    pytest.param(
        cell("orders", 0, "sku_id", "S404"),
        None,
        ["orders.csv, row 1, column sku_id: is not in products.csv (value 'S404')"],
        1,
        id="unknown-sku-orders",
    ),
    pytest.param(
        cell("inventory", 1, "machine_id", "M404"),
        None,
        ["inventory.csv, row 2, column machine_id: is not in machines.csv (value 'M404')"],
        1,
        id="unknown-machine-inventory",
    ),
    pytest.param(  # o2 (machine M02) renamed o1, whose lines are on M01: one order on two machines was accepted
        cell("orders", 2, "order_id", "o1"),
        None,
        [
            "orders.csv, rows 1, 2, 3, column order_id: is shared by order lines of more than one machine_id (an order "
            "is one transaction at one machine) (value 'o1'). Fix: give each machine_id's transactions their own "
            "order_ids (e.g. prefix them with the machine_id), or correct the machine_id of the lines that are wrong"
        ],
        3,
        id="order-id-on-two-machines",
    ),
    pytest.param(  # M03 renamed m01 beside M01: two machines to every stage, accepted before
        cell("machines", 2, "machine_id", "m01"),
        None,
        [
            "machines.csv, rows 1, 3, column machine_id: is written otherwise on another row: in other upper/lower "
            "case or with spaces around it (ids are compared exactly, so these would be two machines) (values 'M01', "
            "'m01'). Fix: give each of the machines one machine_id, written one way in every table"
        ],
        2 + 3,  # and M03's three order lines are now of no machine
        id="machine-ids-differ-only-in-case",
    ),
    pytest.param(
        cell("products", 1, "sku_id", "s1"),
        None,
        ["products.csv, rows 1, 2, column sku_id: is written otherwise on another row", "'S1', 's1'"],
        2 + 2 + 1,  # and S2's order and inventory lines are now of no product
        id="sku-ids-differ-only-in-case",
    ),
    pytest.param(
        cell("orders", 0, "sku_id", "s1"),
        None,
        ["orders.csv, row 1, column sku_id: is in products.csv only written otherwise", "value 's1'"],
        1,
        id="sku-in-other-case",
    ),
    pytest.param(  # M03 renamed 'M01 ' beside M01: ids are not stripped, so these were two machines
        cell("machines", 2, "machine_id", "M01 "),
        None,
        ["machines.csv, rows 1, 3, column machine_id: is written otherwise on another row", "'M01', 'M01 '"],
        2 + 3,
        id="machine-ids-differ-only-in-spaces",
    ),
    pytest.param(
        cell("orders", 0, "machine_id", " M01"),
        None,
        ["orders.csv, row 1, column machine_id: is in machines.csv only written otherwise", "value ' M01'"],
        1,
        id="machine-in-orders-with-a-space",
    ),
    pytest.param(  # M01 written m01: it was "not in machines.csv"; now the words say what is wrong with it
        cell("inventory", 1, "machine_id", "m01"),
        None,
        [
            "inventory.csv, row 2, column machine_id: is in machines.csv only written otherwise: in other upper/lower "
            "case or with spaces around it (ids are compared exactly) (value 'm01'). Fix: write the machine_id exactly "
            "as machines.csv does"
        ],
        1,
        id="machine-inventory-in-other-case",
    ),
    pytest.param(
        cell("inventory", 2, "sku_id", "S9"),
        None,
        ["inventory.csv, row 3, column sku_id: is not in products.csv (value 'S9')"],
        1,
        id="unknown-sku-inventory",
    ),
    pytest.param(
        cell("orders", 3, "ts", "2025-03-32T09:00:00"),
        None,
        ["orders.csv, row 4, column ts: is not a real calendar date or time of day"],
        1,
        id="unparseable-ts",
    ),
    pytest.param(
        cell("orders", 3, "ts", "03/04/2025"),
        None,
        [
            "orders.csv, row 4, column ts: is not an ISO 8601 date or date-time",
            "Fix: write it as 2025-03-04 or",
        ],
        1,
        id="non-iso-ts",
    ),
    pytest.param(
        cell("orders", 5, "ts", "2025-03-04T17:45:10+08:00"),
        None,
        ["orders.csv, row 6, column ts: carries a UTC offset", "local time of source.yaml's timezone"],
        1,
        id="ts-with-offset",
    ),
    pytest.param(
        cell("orders", 5, "ts", "2025-03-04"),
        None,
        [
            "orders.csv, row 6, column ts: is a date without time in a column of date-times (mixed forms)",
            "Fix: use one form for the whole column",
        ],
        1,
        id="mixed-ts",
    ),
    pytest.param(
        append_copy("machines", 0, site_type="office", location=""),
        None,
        [
            "machines.csv, rows 1, 4, column machine_id: appears on more than one row (value 'M01')",
            "one row per",
        ],
        2,
        id="duplicate-machine-id",
    ),
    pytest.param(
        append_copy("products", 0, name="Water 1l"),
        None,
        ["products.csv, rows 1, 4, column sku_id: appears on more than one row (value 'S1')"],
        2,
        id="duplicate-sku-id",
    ),
    pytest.param(
        lambda t: t.update(orders=t["orders"].iloc[:0]),
        None,
        ["orders.csv: has no rows", "Fix: orders must hold at least one row"],
        1,
        id="empty-table",
    ),
    pytest.param(
        cell("machines", 1, "site_type", "School"),
        None,
        [
            "machines.csv, row 2, column site_type: is not a valid site_type name (value 'School')",
            "Fix: use a lower-case name of letters, digits and '_' that starts with a letter",
        ],
        1,
        id="bad-site-type",
    ),
    pytest.param(
        cell("orders", 2, "status", "cancelled"),
        None,
        [
            "orders.csv, row 3, column status: is not an allowed value",
            "completed, refunded, failed (blank means",
        ],
        1,
        id="bad-status",
    ),
    pytest.param(
        cell("calendar", 0, "is_workday", "Y"),
        None,
        ["calendar.csv, row 1, column is_workday: is not true or false (value 'Y')"],
        1,
        id="bad-is-workday",
    ),
    pytest.param(
        cell("machines", 0, "location", "campus/canteen"),
        None,
        ["machines.csv, row 1, column location: is not of the form site_type/detail", "worksite/canteen"],
        1,
        id="location-prefix",
    ),
    pytest.param(
        cell("machines", 0, "machine_id", ""),
        None,
        ["machines.csv, row 1, column machine_id: is blank", "Fix: fill in machine_id"],
        1 + 3 + 2,  # plus the 3 order and 2 inventory rows that now point at an unknown M01
        id="blank-id",
    ),
    pytest.param(
        cell("weather", 1, "date", "2025-03-03"),
        None,
        ["weather.csv, rows 1, 2, column date: appears on more than one row", "Fix: keep one row per date"],
        2 + 1,  # plus the weather now lacking 2025-03-04: 2 of the period's 3 days are below the 80% coverage
        id="weather-date-twice",
    ),
    pytest.param(
        None,
        add_parquet_orders,
        ["orders.csv: both orders.csv and orders.parquet exist", "Fix: keep one of"],
        1,
        id="both-csv-and-parquet",
    ),
    pytest.param(
        None,
        write("products.csv", b"sku_id,name\nS1,\xe9t\xe9\n"),
        ["products.csv: cannot be read as a table", "UTF-8"],
        1,  # sku_id references are not checked against a products table that cannot be read
        id="not-utf8",
    ),
    pytest.param(
        None,
        write("machines.csv", b""),
        ["machines.csv: the file is empty (not even a header row)"],
        1,
        id="empty-file",
    ),
    pytest.param(
        None,
        remove("source.yaml"),
        ["source.yaml: file not found", "Fix: add source.yaml with name, currency, timezone"],
        1,
        id="yaml-missing",
    ),
    pytest.param(
        None,
        write("source.yaml", b"name: a\ncurrency: [CNY\n"),
        ["source.yaml: YAML syntax error at line 3"],
        1,
        id="yaml-syntax",
    ),
    pytest.param(
        None,
        write("source.yaml", b"- name\n- currency\n"),
        ["source.yaml: is not a mapping of keys to values"],
        1,
        id="yaml-not-mapping",
    ),
    pytest.param(
        None,
        meta(timezone=None),
        ["source.yaml, key timezone: missing key", "Fix: add `timezone:`"],
        1,
        id="yaml-missing-key",
    ),
    pytest.param(
        None,
        meta(name="Tiny Op"),
        ["source.yaml, key name: bad value 'Tiny Op'", "lower-case letters, digits and '-'"],
        1,
        id="yaml-bad-name",
    ),
    pytest.param(
        None,
        meta(currency="RMB!"),
        ["source.yaml, key currency: bad value 'RMB!'", "ISO 4217"],
        1,
        id="yaml-bad-currency",
    ),
    pytest.param(
        None,
        meta(timezone="China/Shanghai"),
        ["source.yaml, key timezone: bad value 'China/Shanghai': 'China/Shanghai' is not an IANA time zone"],
        1,
        id="yaml-bad-timezone",
    ),
    pytest.param(
        None,
        meta(country="ZZ"),
        ["source.yaml, key country: bad value 'ZZ'", "ISO 3166 alpha-2"],
        1,
        id="yaml-bad-country",
    ),
    pytest.param(
        None,
        write("source.yaml", b"name: a\ncurrency: NOK\ntimezone: Europe/Oslo\ncountry: NO\ndescription: d\n"),
        ["source.yaml, key country: bad value False", "put the code in quotes"],
        1,
        id="yaml-country-no-is-boolean",
    ),
    # inputs that used to crash the checker with a traceback
    pytest.param(
        drop_column("machines", "site_type"),
        None,
        [
            "machines.csv, column site_type: missing required column "
            "(columns found: 'machine_id', 'location', 'capacity')",
            "Fix: add a column named site_type",
        ],
        1,  # and no KeyError from the location rule, which needs site_type
        id="machines-without-site-type",
    ),
    pytest.param(
        cell("orders", 2, "ts", "9999-01-01T00:00:00"),
        None,
        ["orders.csv, row 3, column ts: is outside the years 1900-2200 (value '9999-01-01T00:00:00')", "Fix: give"],
        1,
        id="year-9999",
    ),
    pytest.param(
        cell("weather", 1, "date", "1899-12-31"),
        None,
        ["weather.csv, row 2, column date: is outside the years 1900-2200"],
        1 + 1,  # and the weather lacks 2025-03-04: 2 of 3 days
        id="year-1899",
    ),
    pytest.param(
        cell("orders", 2, "qty", "99999999999999999999"),
        None,
        ["orders.csv, row 3, column qty: is out of range (larger than 2^53 = 9007199254740992 in magnitude)"],
        1,
        id="qty-beyond-int64",
    ),
    pytest.param(
        cell("inventory", 0, "shelf_qty", "-99999999999999999999"),
        None,
        ["inventory.csv, row 1, column shelf_qty: is out of range"],
        1,
        id="shelf-qty-beyond-int64",
    ),
    pytest.param(
        cell("orders", 2, "unit_price", "1e999"),
        None,
        ["orders.csv, row 3, column unit_price: is out of range (larger than 10^12 in magnitude) (value '1e999')"],
        1,
        id="price-infinite",
    ),
    pytest.param(
        None,
        as_utf16("machines.csv"),
        ["machines.csv: is not UTF-8 text: it is UTF-16", "Fix: re-save it as UTF-8", "CSV UTF-8 (Comma delimited)"],
        1,  # machine ids are not checked against a machines table that cannot be read
        id="utf-16",
    ),
    pytest.param(
        None,
        write("orders.csv", "order_id,machine_id\n".encode("utf-16-le")),
        ["orders.csv: is not UTF-8 text: it holds NUL bytes", "iconv -f UTF-16 -t UTF-8"],
        1,
        id="utf-16-without-bom",
    ),
    pytest.param(
        None,
        replace_with_folder("orders.csv"),
        ["orders.csv: is a folder, not a file", "Fix: put the table's file at orders.csv"],
        1,
        id="table-is-a-folder",
    ),
    pytest.param(
        None,
        replace_with_folder("source.yaml"),
        ["source.yaml: is a folder, not a file"],
        1,
        id="yaml-is-a-folder",
    ),
]


@pytest.mark.parametrize(("mutate_tables", "mutate_folder", "expected", "n_errors"), BROKEN)
def test_broken_source_is_refused_with_a_precise_line(tmp_path, mutate_tables, mutate_folder, expected, n_errors):
    tables = source_tables()
    if mutate_tables is not None:
        mutate_tables(tables)
    folder = write_source(tmp_path / "src", tables=tables)
    if mutate_folder is not None:
        mutate_folder(folder)
    report = check_source(folder)
    assert not report.ok
    assert report.summary is None
    text = report.format()
    lines = [line for line in text.splitlines() if all(s in line for s in expected)]
    assert lines, f"no line holds all of {expected}:\n{text}"
    assert report.n_errors == n_errors, text


def test_good_source_csv_summary(tmp_path):
    report = check_source(write_source(tmp_path / "src"))
    assert report.ok and report.errors == [] and report.n_errors == 0
    s = report.summary
    assert s is not None
    assert s.name == "tiny-op-2025"
    assert s.machines_by_site_type == {"worksite": 1, "campus": 1, "residential": 1}
    assert s.products_by_category == {"drinks": (2, 2), "snacks": (1, 1)}
    assert s.order_lines == {"completed": 6, "refunded": 1, "failed": 1}
    assert s.units_sold == 9
    assert (s.first_ts, s.last_ts) == (pd.Timestamp("2025-03-03 08:15"), pd.Timestamp("2025-03-05 18:40"))
    assert s.orders_have_time
    assert (s.machines_with_inventory, s.machines_without_inventory) == (2, ("M03",))
    assert s.duplicate_rows == {
        "machines.csv": 0,
        "products.csv": 0,
        "orders.csv": 1,
        "inventory.csv": 0,
        "weather.csv": 0,
        "calendar.csv": 0,
    }
    assert s.content_hash == source_hash(tmp_path / "src")
    text = report.format()
    assert "follows the raw-records contract" in text
    assert "order lines: 8 (completed 6, refunded 1, failed 1)" in text
    assert "inventory: 2 with records, 1 without (M03)" in text
    assert "exact duplicate rows: orders.csv 1" in text


def test_good_source_parquet(tmp_path):
    report = check_source(write_source(tmp_path / "src", fmt="parquet"))
    assert report.ok, report.format()
    assert report.summary is not None
    assert report.summary.units_sold == 9
    assert report.summary.duplicate_rows["orders.parquet"] == 1


def test_parquet_with_time_zone_is_refused(tmp_path):
    folder = write_source(tmp_path / "src", fmt="parquet")
    orders = pd.read_parquet(folder / "orders.parquet")
    orders["ts"] = orders["ts"].dt.tz_localize("Asia/Shanghai")
    orders.to_parquet(folder / "orders.parquet", index=False)
    report = check_source(folder)
    assert report.n_errors == 8
    assert "orders.parquet, rows 1, 2, 3, 4, 5 (+3 more), column ts: carries a time zone" in report.format()


def test_bom_and_crlf_tolerated(tmp_path):
    folder = write_source(tmp_path / "src")
    for name in ("orders.csv", "machines.csv"):
        data = (folder / name).read_bytes().replace(b"\n", b"\r\n")
        (folder / name).write_bytes(b"\xef\xbb\xbf" + data)
    report = check_source(folder)
    assert report.ok, report.format()


def test_extra_columns_ignored(tmp_path):
    tables = source_tables()
    tables["orders"]["payment"] = ["card"] * 8
    tables["machines"]["Notes"] = ["", "x", "has weird, text"]
    report = check_source(write_source(tmp_path / "src", tables=tables))
    assert report.ok, report.format()


def test_machines_without_inventory_table_all_listed(tmp_path):
    report = check_source(write_source(tmp_path / "src", tables={"inventory": None}))
    assert report.summary is not None
    assert not report.summary.has_inventory
    assert report.summary.machines_without_inventory == ("M01", "M02", "M03")
    assert "no inventory table" in report.format()


def test_every_violation_reported_with_the_total(tmp_path):
    tables = source_tables()
    tables["orders"]["qty"] = ["0", "0", "x", "1", "-1", "1", "1", "1"]
    tables["orders"].loc[7, "sku_id"] = "S9"
    tables["machines"].loc[1, "site_type"] = "Mall"
    tables["weather"].loc[0, "t_max_c"] = "warm"
    report = check_source(write_source(tmp_path / "src", tables=tables))
    assert report.n_errors == 3 + 1 + 1 + 1 + 1
    assert [(v.file, v.column, v.rows, v.count) for v in report.errors] == [
        ("machines.csv", "site_type", (2,), 1),
        ("orders.csv", "sku_id", (8,), 1),
        ("orders.csv", "qty", (3,), 1),
        ("orders.csv", "qty", (1, 2, 5), 3),
        ("weather.csv", "t_max_c", (1,), 1),
    ]
    assert "7 errors in 5 groups" in report.format()


def test_many_bad_rows_make_one_group_and_the_cap_counts_the_rest(tmp_path):
    n = 1000
    orders = pd.DataFrame(
        {
            "order_id": [f"o{i}" for i in range(n)],
            "machine_id": "M01",
            "sku_id": "S1",
            "ts": "2025-03-03T10:00:00",
            "qty": "0",
            "unit_price": "2",
            "status": "",
        }
    )
    orders.loc[n - 1, "unit_price"] = "-1"
    tables = source_tables()
    tables["machines"].loc[2, ["site_type", "location"]] = ["Moon", ""]
    tables["products"].loc[0, "ref_price"] = "free"
    report = check_source(write_source(tmp_path / "src", tables={**tables, "orders": orders}))
    assert report.n_errors == 1000 + 1 + 1 + 1
    assert len(report.errors) == 4
    qty = next(v for v in report.errors if v.column == "qty")
    assert (qty.count, qty.rows, qty.examples) == (1000, (1, 2, 3, 4, 5), ("'0'",))
    assert "orders.csv, rows 1, 2, 3, 4, 5 (+995 more), column qty: must be ≥ 1" in report.format()
    capped = report.format(max_errors=2).splitlines()
    assert len([line for line in capped if line.startswith("- ")]) == 2
    assert "... and 2 more groups (1,001 errors) not shown; raise --max-errors to see them." in capped


def test_holiday_country_needs_calendar_when_library_lacks_it(tmp_path, monkeypatch):
    import holidays

    monkeypatch.setattr(holidays, "list_supported_countries", lambda: {"US": []})
    with_calendar = check_source(write_source(tmp_path / "a"))
    assert with_calendar.ok
    without = check_source(write_source(tmp_path / "b", tables={"calendar": None}))
    assert without.n_errors == 1
    assert "source.yaml, key country: country 'CN' has no public-holiday calendar" in without.format()


def test_missing_folder(tmp_path):
    report = check_source(tmp_path / "nope")
    assert report.n_errors == 1
    assert "source folder not found" in report.format()


def file_state(folder):
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def test_source_folder_is_never_written(tmp_path):
    from autovend.data.load import load_source

    folder = write_source(tmp_path / "src", fmt="parquet")
    before, names = file_state(folder), sorted(os.listdir(folder))
    assert check_source(folder).ok
    load_source(folder)
    assert file_state(folder) == before
    assert sorted(os.listdir(folder)) == names


def test_read_only_source_folder(tmp_path):
    folder = write_source(tmp_path / "src")
    before = file_state(folder)
    for path in folder.iterdir():
        path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        report = check_source(folder)
    finally:
        folder.chmod(stat.S_IRWXU)
        for path in folder.iterdir():
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert report.ok, report.format()
    assert file_state(folder) == before


# --- CLI -----------------------------------------------------------------------------------


def test_cli_exit_0_and_summary(tmp_path):
    folder = write_source(tmp_path / "src")
    result = CliRunner().invoke(app, ["check", str(folder)])
    assert result.exit_code == 0, result.output
    assert f"{folder}: follows the raw-records contract." in result.output
    assert "completed 6, refunded 1, failed 1" in result.output
    assert f"content hash: {source_hash(folder)}" in result.output


def test_cli_exit_1_with_report_and_max_errors(tmp_path):
    tables = source_tables()
    tables["orders"].loc[0, "qty"] = "0"
    tables["machines"].loc[0, "site_type"] = "[bold]mall"  # printed as is, not as rich markup
    folder = write_source(tmp_path / "src", tables=tables)
    result = CliRunner().invoke(app, ["check", str(folder)])
    assert result.exit_code == 1
    assert "orders.csv, row 1, column qty: must be ≥ 1 (value '0')" in result.output
    assert "(value '[bold]mall')" in result.output
    capped = CliRunner().invoke(app, ["check", str(folder), "--max-errors", "1"])
    assert capped.exit_code == 1
    assert "... and 2 more groups" in capped.output


def test_cli_missing_folder_exits_1(tmp_path):
    result = CliRunner().invoke(app, ["check", str(tmp_path / "absent")])
    assert result.exit_code == 1
    assert "source folder not found" in result.output


# --- inputs that used to crash, and links -------------------------------------------------------


def test_table_linked_from_outside_the_source_is_refused_unread(tmp_path):
    secret = tmp_path / "elsewhere" / "machines.csv"
    secret.parent.mkdir()
    secret.write_text("machine_id,site_type\nTOP-SECRET-ROW,worksite\n")
    folder = write_source(tmp_path / "src")
    (folder / "machines.csv").unlink()
    (folder / "machines.csv").symlink_to(secret)
    report = check_source(folder)
    assert report.n_errors == 1
    text = report.format()
    assert "machines.csv: is a link to a file outside the source folder (not read)" in text
    assert "Fix: copy the file into the source folder as machines.csv" in text
    assert "TOP-SECRET" not in text and "elsewhere" not in text


def test_links_inside_the_source_folder_are_read(tmp_path):
    folder = write_source(tmp_path / "src")
    (folder / "exports").mkdir()
    (folder / "orders.csv").rename(folder / "exports" / "orders-2025.csv")
    (folder / "orders.csv").symlink_to(folder / "exports" / "orders-2025.csv")
    report = check_source(folder)
    assert report.ok, report.format()
    assert report.summary.units_sold == 9


def test_broken_link_and_yaml_linked_from_outside(tmp_path):
    folder = write_source(tmp_path / "src")
    (tmp_path / "meta.yaml").write_text((folder / "source.yaml").read_text())
    (folder / "source.yaml").unlink()
    (folder / "source.yaml").symlink_to(tmp_path / "meta.yaml")
    (folder / "weather.csv").unlink()
    (folder / "weather.csv").symlink_to(tmp_path / "gone.csv")
    report = check_source(folder)
    assert [(v.file, v.problem) for v in report.errors] == [
        ("source.yaml", "is a link to a file outside the source folder (not read)"),
        ("weather.csv", "is a link to nothing (its target does not exist)"),
    ]


def write_orders_parquet(folder, **columns):
    orders = typed_frame(source_tables()["orders"])
    for name, values in columns.items():
        orders[name] = values
    (folder / "orders.csv").unlink(missing_ok=True)
    orders.to_parquet(folder / "orders.parquet", index=False)


def test_parquet_timestamp_in_year_9999_is_an_error(tmp_path):
    import datetime as dt

    folder = write_source(tmp_path / "src")
    stamps = [dt.datetime(2025, 3, 3, 8, 15)] * 7 + [dt.datetime(9999, 12, 31)]
    write_orders_parquet(folder, ts=pd.Series(stamps, dtype="datetime64[us]"))
    report = check_source(folder)
    assert report.n_errors == 1
    assert "orders.parquet, row 8, column ts: is outside the years 1900-2200 (value '9999-12-31')" in report.format()


def test_parquet_column_of_lists_is_an_error_an_extra_one_is_ignored(tmp_path):
    folder = write_source(tmp_path / "src")
    write_orders_parquet(folder, qty=[[1]] * 8)
    report = check_source(folder)
    assert report.n_errors == 1
    assert (
        "orders.parquet, column qty: holds list<element: int64> values (lists or records), not one value per cell. "
        "Fix: store one plain value (number, text, date or time) per cell in qty"
    ) in report.format()
    write_orders_parquet(folder, tags=[["promo", "card"]] * 6 + [None, None])
    report = check_source(folder)
    assert report.ok, report.format()
    assert report.summary.duplicate_rows["orders.parquet"] == 1  # the extra column is compared as text


def parquet_year_9999(folder):
    import datetime as dt

    stamps = [dt.datetime(2025, 3, 3, 8, 15)] * 7 + [dt.datetime(9999, 12, 31)]
    write_orders_parquet(folder, ts=pd.Series(stamps, dtype="datetime64[us]"))


def parquet_lists(folder):
    write_orders_parquet(folder, qty=[[1]] * 8)


def link_outside(folder):
    outside = folder.parent / "outside.csv"
    (folder / "products.csv").rename(outside)
    (folder / "products.csv").symlink_to(outside)


CRASHES = {
    "no-site-type": (drop_column("machines", "site_type"), None, "machines.csv, column site_type: missing required"),
    "year-9999": (
        cell("orders", 2, "ts", "9999-01-01T00:00:00"),
        None,
        "orders.csv, row 3, column ts: is outside the years",
    ),
    "utf-16": (None, as_utf16("orders.csv"), "orders.csv: is not UTF-8 text"),
    "folder": (None, replace_with_folder("orders.csv"), "orders.csv: is a folder, not a file"),
    "parquet-year-9999": (None, parquet_year_9999, "orders.parquet, row 8, column ts: is outside the years"),
    "parquet-lists": (None, parquet_lists, "orders.parquet, column qty: holds list<element: int64> values"),
    "link-outside": (None, link_outside, "products.csv: is a link to a file outside the source folder (not read)"),
    "qty-int64": (cell("orders", 0, "qty", "99999999999999999999"), None, "orders.csv, row 1, column qty: is out of"),
}


@pytest.mark.parametrize("case", sorted(CRASHES))
def test_cli_turns_former_crashes_into_exit_1_with_the_message(tmp_path, case):
    mutate_tables, mutate_folder, message = CRASHES[case]
    tables = source_tables()
    if mutate_tables is not None:
        mutate_tables(tables)
    folder = write_source(tmp_path / "src", tables=tables)
    if mutate_folder is not None:
        mutate_folder(folder)
    result = CliRunner().invoke(app, ["check", str(folder)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_params_loosen_a_limit_and_print_warnings(tmp_path):
    tables = source_tables()
    tables["orders"].loc[0, "qty"] = "150"
    tables["orders"].loc[1, "unit_price"] = "13.5"  # 3 x the ref_price of S2: a warning
    folder = write_source(tmp_path / "src", tables=tables)
    strict = CliRunner().invoke(app, ["check", str(folder)])
    assert strict.exit_code == 1
    assert "orders.csv, row 1, column qty: is more than 100 units on one order line" in strict.output
    params = tmp_path / "params.yaml"
    params.write_text("check:\n  max_qty_per_line: 200\n")
    loose = CliRunner().invoke(app, ["check", str(folder), "--params", str(params), "--json", str(tmp_path / "s.json")])
    assert loose.exit_code == 0, loose.output
    assert "Warnings (1 group; they do not fail the check" in loose.output
    assert "warning: orders.csv, row 2, column unit_price: is more than 2 times the product's ref_price" in loose.output
    import json

    summary = json.loads((tmp_path / "s.json").read_text())
    assert len(summary["warnings"]) == 1 and "row 2, column unit_price" in summary["warnings"][0]


def test_a_cell_of_5_mb_is_named_by_file_row_and_column_with_the_real_fix(tmp_path):
    """It showed pyarrow's "straddling object straddles two block boundaries (try to increase block size?)"."""
    tables = source_tables()
    tables["products"].loc[1, "name"] = "x" * 5_000_000
    report = check_source(write_source(tmp_path / "src", tables=tables))
    assert report.n_errors == 1
    line = report.errors[0].format()
    assert line == (
        "products.csv, row 2, column name: a cell of 5,000,000 characters (starting on line 3 of the file): rows of "
        "over 1,048,576 bytes cannot be read. Fix: shorten the cell (a record needs no text of this size), or leave "
        "the column out of the export"
    )
    assert "straddl" not in report.format() and "block size" not in report.format()


def _many_orders(n: int) -> pd.DataFrame:
    orders = source_tables()["orders"].iloc[:6]
    many = pd.concat([orders] * (n // len(orders)), ignore_index=True)
    many["order_id"] = [f"o{i}" for i in range(len(many))]
    return many


def test_a_quote_never_closed_in_a_large_file_is_an_error_not_lost_rows(tmp_path):
    """Over one 1 MB block, pyarrow dropped the rest of the block after an unclosed quote and the check passed.

    30,000 order lines (1.4 MB): the quote opened on line 4 made the reader return about a fifth fewer rows.
    """
    tables = source_tables()
    tables["orders"] = _many_orders(30_000)
    folder = write_source(tmp_path / "src", tables=tables)
    path = folder / "orders.csv"
    lines = path.read_text().splitlines(keepends=True)
    assert lines[3].startswith("o2,")
    lines[3] = '"' + lines[3]
    path.write_text("".join(lines))
    assert path.stat().st_size > 1 << 20
    report = check_source(folder)
    assert not report.ok and report.n_errors == 1
    assert (
        report.errors[0]
        .format()
        .startswith(
            "orders.csv, row 3, column order_id: a double quote opens this cell on line 4 of the file and is never "
            "closed, so the rest of the file (29,998 lines) reads as one cell of "
        )
    )
    assert report.errors[0].format().endswith('Fix: close the quote, or double a quote meant as text ("")')


def test_cells_holding_line_breaks_and_blank_lines_are_read_as_before(tmp_path):
    """The cheap line count differs from the rows read here, and the careful count finds nothing lost."""
    tables = source_tables()
    tables["products"].loc[0, "name"] = "Water\n550 ml"
    folder = write_source(tmp_path / "src", tables=tables)
    path = folder / "machines.csv"
    path.write_text(path.read_text().replace("\n", "\n\n", 1))
    report = check_source(folder)
    assert report.ok, report.format()
    assert sum(report.summary.machines_by_site_type.values()) == 3
