"""Tests of the NJ vending adapter (its packaged mapping run by the generic adapter): the mapping rules on a tiny
hand-written export, then the real public file, whose output must stay byte-identical to the adapter's output before
it became a mapping (commit 27e5d1b)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from autovend.data.adapters import nj_vending
from autovend.data.adapters.ids import sku_ids, slugify
from autovend.data.adapters.nj_vending import (
    MAPPING_PATH,
    adapt_nj_vending,
    nj_mapping,
    read_nj_vending_csv,
    write_nj_vending,
)
from autovend.data.adapters.result import AdaptResult
from autovend.errors import AdaptError, OutputExistsError
from autovend.io import OUTPUT_MARKER
from tests.data.real_csv import REAL_CSV_MISSING, real_csv

REPO_ROOT = Path(__file__).resolve().parents[2]
REAL_CSV = real_csv()
needs_real_csv = pytest.mark.skipif(not REAL_CSV.is_file(), reason=REAL_CSV_MISSING)

HEADER = (
    "Status,Device ID,Location,Machine,Product,Category,Transaction,TransDate,Type,RCoil,RPrice,RQty,"
    "MCoil,MPrice,MQty,LineTotal,TransTotal,Prcd Date"
)
# (Status, Device ID, Location, Product, Category, Transaction, TransDate, RPrice, RQty); file line in comment
TINY_ROWS = [
    ("Processed", "M1", "Brunswick Sq Mall", "Chips A", "Food", "t1", "1/1/2022", "1.5", "1"),  # line 2
    ("Processed", "M1", "Brunswick Sq Mall", "Chips A", "Food", "t2", "1/2/2022", "2", "1"),  # line 3
    ("Processed", "M1", "Brunswick Sq Mall", "Chips A", "Food", "t3", "1/3/2022", "2", "2"),  # line 4
    ("Processed", "M1", "Brunswick Sq Mall", "Chips A", "Food", "t4", "1/3/2022", "1.5", "1"),  # line 5
    ("Processed", "M1", "Brunswick Sq Mall", "Cola B", "", "t4", "1/3/2022", "3", "1"),  # line 6
    ("Processed", "M1", "Brunswick Sq Mall", "", "Food", "t5", "1/4/2022", "1.5", "1"),  # line 7
    ("Pending", "M2", "Moon Base", "Cola B", "", "t6", "1/4/2022", "3", "1"),  # line 8
    ("Refunded", "M2", "Moon Base", "Water C", "Water", "t7", "12/31/2022", "1.25", "3"),  # line 9
    ("Processed", "M2", "Moon Base", "Water C", "Water", "t8", "12/31/2022", "1.25", "1"),  # line 10
    ("Unlinked", "M2", "Moon Base", "Water C", "Water", "t9", "2/30/2022", "1.25", "1"),  # line 11
    ("processed", "M3", "EB Public Library", "Water C", "Candy", "t10", "3/14/2022", "1", "1"),  # line 12
    ("Processed", "M3", "EB Public Library", "Water C", "Water", "t11", "3/15/2022", "1", "0"),  # line 13
]


def _tiny_csv(path: Path, rows: list[tuple[str, ...]] = TINY_ROWS) -> Path:
    """Write rows as the export does: UTF-8 with BOM, CRLF, all 18 columns."""
    lines = [HEADER]
    for status, device, location, product, category, trans, date, price, qty in rows:
        machine = f"{location} x{device}"
        lines.append(
            f"{status},{device},{location},{machine},{product},{category},{trans},{date},Cash,101,"
            f"{price},{qty},101,{price},{qty},{price},{price},{date}"
        )
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8-sig"))
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> AdaptResult:
    return adapt_nj_vending(read_nj_vending_csv(_tiny_csv(tmp_path / "tiny.csv")))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_contract_ok(folder: Path) -> None:
    """Run the contract checker when it is importable (it is written by another engineer)."""
    check = pytest.importorskip("autovend.data.check", reason="autovend.data.check not written yet")
    report = check.check_source(folder)
    assert report.ok, report.format(50)
    assert report.n_errors == 0


# --- the mapping rules, on the tiny export ---------------------------------------------------------


def test_tiny_counts_and_drop_reasons_by_line(tiny: AdaptResult) -> None:
    assert tiny.rows_read == 12
    assert tiny.rows_written == 8
    assert tiny.rows_dropped == 4
    assert [(g.reason, g.lines) for g in tiny.dropped] == [
        ("Product is blank", (7,)),
        ("Status 'Pending' is not in orders.status.values", (8,)),
        ("TransDate is not a date in the form %m/%d/%Y or %Y-%m-%d", (11,)),  # 30 February
        ("RQty is not a whole number >= 1", (13,)),
    ]
    assert [g.rows for g in tiny.dropped] == [(6,), (7,), (10,), (12,)]  # rows: 1-based, header excluded
    assert all(g.bad for g in tiny.dropped)


def test_tiny_modal_price_tie_goes_to_lower(tiny: AdaptResult) -> None:
    ref = dict(zip(tiny.products["name"], tiny.products["ref_price"], strict=True))
    # Chips A sold twice at 1.50 and twice at 2.00: the tie goes to 1.50.
    assert ref == {"Chips A": "1.50", "Cola B": "3.00", "Water C": "1.25"}


def test_tiny_categories_blank_and_unmapped_become_unknown(tiny: AdaptResult) -> None:
    cats = tiny.products.set_index("name")[["category_l1", "category_l2"]]
    assert cats.loc["Chips A"].tolist() == ["snacks", "food"]
    assert cats.loc["Cola B"].tolist() == ["unknown", "unknown"]
    # Water C: Water on 2 kept rows, Candy on 1 -> water wins, and the conflict is reported.
    assert cats.loc["Water C"].tolist() == ["drinks", "water"]
    l1, l2 = tiny.field("products.category_l1"), tiny.field("products.category_l2")
    assert l1.defaulted == l2.defaulted == ("Cola B",)
    assert l1.unmapped == l2.unmapped == {"": 1, "Candy": 1}  # written rows carrying them
    assert l1.policy == l2.policy == "unknown"
    assert tiny.conflicts_of("products", "Category") == {"Water C": {"Candy": 1, "Water": 2}}
    assert (l1.applied["Food"], l2.applied["Food"]) == ("snacks", "food")


def test_tiny_machines_and_unknown_location(tiny: AdaptResult) -> None:
    m = tiny.machines.set_index("machine_id")
    assert m.index.tolist() == ["M1", "M2", "M3"]
    assert m["site_type"].tolist() == ["commercial", "unknown", "public"]
    assert m["location"].tolist() == [
        "commercial/brunswick-sq-mall",
        "unknown/moon-base",
        "public/eb-public-library",
    ]
    assert m["capacity"].tolist() == ["", "", ""]
    assert m.loc["M2", "name"] == "Moon Base xM2"
    assert tiny.field("machines.site_type").unmapped == {"Moon Base": 2}  # the 2 written rows of M2
    assert tiny.field("machines.site_type").defaulted == ("M2",)
    assert tiny.conflicts_of("machines", "Location") == {}
    assert tiny.conflicts_of("machines", "Machine") == {}


def test_tiny_orders_columns_and_values(tiny: AdaptResult) -> None:
    o = tiny.orders
    assert list(o.columns[:7]) == ["order_id", "machine_id", "sku_id", "ts", "qty", "unit_price", "status"]
    assert o["order_id"].tolist() == ["t1", "t2", "t3", "t4", "t4", "t7", "t8", "t10"]
    assert o["ts"].tolist() == [
        "2022-01-01",
        "2022-01-02",
        "2022-01-03",
        "2022-01-03",
        "2022-01-03",
        "2022-12-31",
        "2022-12-31",
        "2022-03-14",
    ]
    assert list(o.columns[7:]) == ["payment", "coil"]  # extra columns
    assert set(o["payment"]) == {"cash"}
    assert set(o["coil"]) == {"101"}
    assert o["qty"].tolist() == [1, 1, 2, 1, 1, 3, 1, 1]
    assert o["unit_price"].tolist() == ["1.50", "2.00", "2.00", "1.50", "3.00", "1.25", "1.25", "1.00"]
    assert o["status"].tolist() == ["completed"] * 5 + ["refunded", "completed", "completed"]
    assert set(o["sku_id"]) == {"nj-chips-a", "nj-cola-b", "nj-water-c"}
    assert tiny.n_units == 11
    assert tiny.n_completed_units == 8
    # every cell value of the written rows, as written (matching ignores case); the Unlinked row was left out
    assert tiny.field("orders.status").applied == {
        "Processed": "completed",
        "Refunded": "refunded",
        "processed": "completed",
    }


def test_tiny_source_meta(tiny: AdaptResult) -> None:
    assert tiny.source["name"] == "nj-vending-2022"
    assert tiny.source["currency"] == "USD"
    assert tiny.source["timezone"] == "America/New_York"
    assert tiny.source["country"] == "US"
    assert tiny.source["licence"] == "unknown; public Kaggle dataset, see README"


# The files the adapter wrote for the tiny export before it became a mapping (commit 27e5d1b), byte for byte.
TINY_FILES = {
    "machines.csv": (
        "machine_id,site_type,location,capacity,name\n"
        "M1,commercial,commercial/brunswick-sq-mall,,Brunswick Sq Mall xM1\n"
        "M2,unknown,unknown/moon-base,,Moon Base xM2\n"
        "M3,public,public/eb-public-library,,EB Public Library xM3\n"
    ),
    "products.csv": (
        "sku_id,name,category_l1,category_l2,ref_price,unit_cost,shelf_life_days\n"
        "nj-chips-a,Chips A,snacks,food,1.50,,\n"
        "nj-cola-b,Cola B,unknown,unknown,3.00,,\n"
        "nj-water-c,Water C,drinks,water,1.25,,\n"
    ),
    "orders.csv": (
        "order_id,machine_id,sku_id,ts,qty,unit_price,status,payment,coil\n"
        "t1,M1,nj-chips-a,2022-01-01,1,1.50,completed,cash,101\n"
        "t2,M1,nj-chips-a,2022-01-02,1,2.00,completed,cash,101\n"
        "t3,M1,nj-chips-a,2022-01-03,2,2.00,completed,cash,101\n"
        "t4,M1,nj-chips-a,2022-01-03,1,1.50,completed,cash,101\n"
        "t4,M1,nj-cola-b,2022-01-03,1,3.00,completed,cash,101\n"
        "t7,M2,nj-water-c,2022-12-31,3,1.25,refunded,cash,101\n"
        "t8,M2,nj-water-c,2022-12-31,1,1.25,completed,cash,101\n"
        "t10,M3,nj-water-c,2022-03-14,1,1.00,completed,cash,101\n"
    ),
}


def test_tiny_files_are_byte_identical_to_the_adapter_before_the_mapping(tmp_path: Path) -> None:
    out = tmp_path / "nj"
    write_nj_vending(_tiny_csv(tmp_path / "tiny.csv"), out)
    for name, text in TINY_FILES.items():
        assert (out / name).read_bytes() == text.encode("utf-8"), name


def test_zero_price_only_product_is_dropped_not_priced_at_zero(tmp_path: Path) -> None:
    rows = [
        ("Processed", "M1", "GuttenPlans", "Free Gum", "Food", "t1", "1/1/2022", "0", "1"),
        ("Processed", "M1", "GuttenPlans", "Gum", "Food", "t2", "1/1/2022", "0", "1"),
        ("Processed", "M1", "GuttenPlans", "Gum", "Food", "t3", "1/1/2022", "1", "1"),
    ]
    res = adapt_nj_vending(read_nj_vending_csv(_tiny_csv(tmp_path / "z.csv", rows)))
    assert [(g.reason, g.lines) for g in res.dropped] == [("product never sold at a price > 0 (no ref_price)", (2,))]
    assert res.products[["name", "ref_price"]].values.tolist() == [["Gum", "1.00"]]
    assert res.orders["unit_price"].tolist() == ["0.00", "1.00"]


def test_missing_columns_are_named() -> None:
    with pytest.raises(AdaptError, match=r"lacks the columns \['RCoil', 'RPrice', 'RQty'\]"):
        adapt_nj_vending(pd.DataFrame(columns=[c for c in nj_mapping().columns() if c[0] != "R"]))


def test_missing_input_file(tmp_path: Path) -> None:
    with pytest.raises(AdaptError, match="input CSV not found"):
        read_nj_vending_csv(tmp_path / "nope.csv")


# --- sku ids -----------------------------------------------------------------------------------------


def test_slugify() -> None:
    assert slugify("BodyArmor  LYTE - Blueberry Pomegranate") == "bodyarmor-lyte-blueberry-pomegranate"
    assert slugify("Café & Crème") == "cafe-creme"


def test_sku_ids_stable_and_collision_free() -> None:
    names = ["Chips - BBQ", "Chips  BBQ", "chips bbq 2", "???", "Cola"]
    ids = sku_ids(names, "nj-")
    assert ids == sku_ids(reversed(names), "nj-")  # independent of order
    assert len(set(ids.values())) == len(names)
    assert ids["Cola"] == "nj-cola"
    assert ids["chips bbq 2"] == "nj-chips-bbq-2"
    for name in ("Chips - BBQ", "Chips  BBQ"):
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        assert ids[name] == f"nj-chips-bbq--{digest}"
    assert ids["???"].startswith("nj-unnamed--")


# --- writing the folder ------------------------------------------------------------------------------


def test_write_creates_a_contract_source_and_never_touches_the_input(tmp_path: Path) -> None:
    csv = _tiny_csv(tmp_path / "tiny.csv")
    before = (_sha256(csv), csv.stat().st_mtime_ns)
    out = tmp_path / "out" / "nj"
    res = write_nj_vending(csv, out)
    assert (_sha256(csv), csv.stat().st_mtime_ns) == before
    assert sorted(p.name for p in out.iterdir()) == [
        ".autovend-output.json",
        "machines.csv",
        "orders.csv",
        "products.csv",
        "source.yaml",
    ]
    assert [p.name for p in out.parent.iterdir()] == ["nj"]  # no temp folder left behind
    meta = yaml.safe_load((out / "source.yaml").read_text(encoding="utf-8"))
    assert meta["name"] == "nj-vending-2022"
    orders = pd.read_csv(out / "orders.csv", dtype=str, keep_default_na=False)
    assert len(orders) == res.rows_written == 8
    products = pd.read_csv(out / "products.csv", dtype=str, keep_default_na=False)
    assert products["unit_cost"].tolist() == ["", "", ""]
    assert b"\r\n" not in (out / "orders.csv").read_bytes()
    _assert_contract_ok(out)


def test_write_refuses_non_empty_folder_unless_forced(tmp_path: Path) -> None:
    csv = _tiny_csv(tmp_path / "tiny.csv")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(OutputExistsError, match="not empty.*--force"):
        write_nj_vending(csv, out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    write_nj_vending(csv, out, force=True)
    assert not (out / "keep.txt").exists()
    assert (out / "orders.csv").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "tiny.csv"]


def test_write_into_existing_empty_folder(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    write_nj_vending(_tiny_csv(tmp_path / "tiny.csv"), out)
    assert (out / "machines.csv").is_file()


def test_force_never_deletes_the_input(tmp_path: Path) -> None:
    csv = _tiny_csv(tmp_path / "tiny.csv")
    with pytest.raises(OutputExistsError, match="contains the input"):
        write_nj_vending(csv, tmp_path, force=True)
    assert csv.is_file()


def test_failure_leaves_nothing_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    csv = _tiny_csv(tmp_path / "tiny.csv")
    good = nj_vending.source_files

    def broken(result: AdaptResult) -> dict[str, str]:
        files = good(result)
        files["missing-dir/orders.csv"] = "x"  # writing this fails after the first files are written
        return files

    monkeypatch.setattr(nj_vending, "source_files", broken)
    out = tmp_path / "out"
    with pytest.raises(FileNotFoundError):
        write_nj_vending(csv, out)
    assert not out.exists()
    # a forced replacement that fails keeps the old folder as it was
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(FileNotFoundError):
        write_nj_vending(csv, out, force=True)
    assert [p.name for p in out.iterdir()] == ["old.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "tiny.csv"]


# --- the command line --------------------------------------------------------------------------------


def test_cli_writes_and_prints_the_report(tmp_path: Path) -> None:
    from autovend.cli import app

    csv = _tiny_csv(tmp_path / "tiny.csv")
    out = tmp_path / "src"
    result = CliRunner().invoke(app, ["adapt", "nj-vending", str(csv), "-o", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "rows read" in result.output
    assert "Product is blank" in result.output
    assert "Moon Base" in result.output
    assert (out / "products.csv").is_file()
    again = CliRunner().invoke(app, ["adapt", "nj-vending", str(csv), "-o", str(out)])
    assert again.exit_code == 0, again.output  # its own earlier output is replaced
    (out / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(app, ["adapt", "nj-vending", str(csv), "-o", str(out)])
    assert isinstance(refused.exception, OutputExistsError)
    assert "did not write there: notes.txt" in str(refused.exception) and "--force" in str(refused.exception)
    assert (out / "notes.txt").read_text() == "mine"
    forced = CliRunner().invoke(app, ["adapt", "nj-vending", str(csv), "-o", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert not (out / "notes.txt").exists()


def test_cli_main_exits_2_on_non_empty_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autovend.cli import main

    csv = _tiny_csv(tmp_path / "tiny.csv")
    out = tmp_path / "src"
    out.mkdir()
    (out / "x").write_text("x")
    monkeypatch.setattr(sys, "argv", ["autovend", "adapt", "nj-vending", str(csv), "-o", str(out)])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2


# --- the real public file ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real() -> AdaptResult:
    return adapt_nj_vending(read_nj_vending_csv(REAL_CSV))


@needs_real_csv
@pytest.mark.realdata
def test_real_counts_match_the_readme(real: AdaptResult) -> None:
    assert real.rows_read == 9_617
    assert len(real.machines) == 5
    assert [(g.reason, g.n_rows) for g in real.dropped] == [("Product is blank", 6)]
    assert real.dropped[0].lines == (1234, 1433, 1441, 5502, 6949, 7462)
    assert real.rows_written == 9_611
    assert real.orders["ts"].min() == "2022-01-01"
    assert real.orders["ts"].max() == "2022-12-31"
    assert real.orders["ts"].nunique() == 362
    # 185 product names in the README, one of which is the blank name of the dropped rows
    assert len(real.products) == 184
    assert real.n_units == 9_753  # 9,759 units in the file minus the 6 dropped one-unit rows
    assert real.orders["order_id"].nunique() == 9_111
    assert (real.orders["status"] == "completed").all()
    # 4 pairs of lines share transaction, product, price and qty; the coil (slot) tells them apart
    key = ["order_id", "sku_id", "unit_price", "qty"]
    assert real.orders.duplicated(key).sum() == 4
    assert real.orders.duplicated().sum() == 0


@needs_real_csv
@pytest.mark.realdata
def test_real_mappings(real: AdaptResult) -> None:
    m = real.machines.set_index("machine_id")
    assert m["site_type"].to_dict() == {
        "VJ300205292": "commercial",
        "VJ300320609": "office",
        "VJ300320611": "commercial",
        "VJ300320686": "worksite",
        "VJ300320692": "public",
    }
    assert real.field("machines.site_type").unmapped == {}
    # 267 blank rows in the README, 6 of them dropped
    assert real.field("products.category_l1").unmapped == {"": 261}
    assert len(real.field("products.category_l1").defaulted) == 8
    l1 = real.products["category_l1"].value_counts().to_dict()
    assert l1 == {"snacks": 124, "drinks": 52, "unknown": 8}
    assert real.conflicts_of("products", "Category") == {"Keto Krisp - Almond Butter": {"Carbonated": 27, "Food": 2}}
    assert real.conflicts_of("machines", "Location") == real.conflicts_of("machines", "Machine") == {}
    assert real.products["sku_id"].is_unique
    library = real.orders.loc[real.orders["machine_id"] == "VJ300320692", "ts"]
    assert library.min() == "2022-03-14"


@needs_real_csv
@pytest.mark.realdata
def test_real_source_passes_the_contract_check(tmp_path: Path) -> None:
    before = _sha256(REAL_CSV)
    write_nj_vending(REAL_CSV, tmp_path / "nj")
    assert _sha256(REAL_CSV) == before == "cb4e8371db53b2eafab47a5ae4e7e3b019b4c79db7fba769f4cd88e01fc9bacb"
    _assert_contract_ok(tmp_path / "nj")


# sha256 of the files `autovend adapt nj-vending` wrote from the 2022 file before the adapter became a mapping
# (commit 27e5d1b); the real-data pipeline (pipelines/nj-vending/dvc.yaml) depends on these bytes.
REAL_SHA256 = {
    "source.yaml": "e0bedc74fb764191978cfa914820d99f1214d12d7ede1e644c5756a86336994f",
    "machines.csv": "5fa98980699da173d2c52bac5f73a836a994e5540bea06abb6fad43a6198ce06",
    "products.csv": "7adc201a86df253555a4e3a00f30d389826580e7846cf56afd29672eb7440a3a",
    "orders.csv": "a05f701400e7fe203c778d54a32efd9b95258f9545c181415ffb5cf71e13ba11",
}


@needs_real_csv
@pytest.mark.realdata
def test_real_files_are_byte_identical_through_both_commands(tmp_path: Path) -> None:
    from autovend.cli import app

    for command in (["nj-vending"], ["table", "--map", str(MAPPING_PATH)]):
        out = tmp_path / command[0]
        result = CliRunner().invoke(app, ["adapt", *command, str(REAL_CSV), "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert (out / OUTPUT_MARKER).is_file()  # what autovend wrote there, so a later --force may replace it
        assert {p.name: _sha256(p) for p in out.iterdir() if p.name != OUTPUT_MARKER} == REAL_SHA256
