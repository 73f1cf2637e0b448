"""Tests of the generic adapter: the documented EUR example end to end, then each rule on small exports."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from autovend.data.adapters.files import read_export, source_files, write_table_source
from autovend.data.adapters.mapping import load_mapping, parse_mapping
from autovend.data.adapters.table import adapt_table
from autovend.data.check import check_source
from autovend.errors import AdaptError, OutputExistsError
from autovend.io import OUTPUT_MARKER

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE_CSV = ROOT / "examples" / "mappings" / "kiosk-eur.csv"
EXAMPLE_MAP = ROOT / "examples" / "mappings" / "kiosk-eur.yaml"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- the documented example: ';' cells, day-first date-times, '1,20 €' prices, German names ----------------


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kiosk") / "src"
    write_table_source(EXAMPLE_CSV, EXAMPLE_MAP, out)
    return out


def _read(folder: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(folder / name, dtype=str, keep_default_na=False)


def test_example_passes_the_contract_check(example: Path) -> None:
    report = check_source(example)
    assert report.ok, report.format(50)
    assert report.summary.order_lines == {"completed": 9, "refunded": 1, "failed": 1}
    assert report.summary.units_sold == 13
    assert report.summary.warnings == ()


def test_example_orders(example: Path) -> None:
    orders = _read(example, "orders.csv")
    assert list(orders.columns) == ["order_id", "machine_id", "sku_id", "ts", "qty", "unit_price", "status", "payment"]
    assert len(orders) == 11  # 12 rows, the refill (row 9) left out
    first = orders.iloc[0].to_dict()
    assert first == {
        "order_id": "B-1001",
        "machine_id": "A-01",
        "sku_id": "4711",
        "ts": "2025-02-03T07:45:00",  # 03.02.2025 07:45, day first
        "qty": "1",
        "unit_price": "1.20",  # 1,20 €
        "status": "completed",
        "payment": "card",
    }
    assert orders.loc[orders["order_id"] == "B-1006", "ts"].item() == "2025-02-13T18:45:00"
    assert orders.loc[orders["order_id"] == "B-1004", "status"].item() == "refunded"  # Storno
    assert orders.loc[orders["order_id"] == "B-1009", "status"].item() == "failed"  # Abbruch
    assert orders["unit_price"].tolist()[4:7] == ["1.20", "1.90", "2.20"]


def test_example_machines_products_and_meta(example: Path) -> None:
    machines = _read(example, "machines.csv").set_index("machine_id")
    assert machines["site_type"].to_dict() == {"A-01": "worksite", "A-02": "campus", "A-03": "public"}
    assert machines.loc["A-01", "location"] == "worksite/werk-2-kantine"
    assert set(machines["capacity"]) == {"360"}
    products = _read(example, "products.csv").set_index("sku_id")
    assert products.loc["4711"].to_dict() == {
        "name": "Mineralwasser still 0,5 l",
        "category_l1": "drinks",
        "category_l2": "bottled_water",
        "ref_price": "1.20",  # sold at 1,20 on 3 lines and 1,40 on 1
        "unit_cost": "",
        "shelf_life_days": "",
    }
    assert products.loc["7302", "ref_price"] == "1.90"  # 1,90 twice, 2,20 once
    meta = yaml.safe_load((example / "source.yaml").read_text(encoding="utf-8"))
    assert (meta["currency"], meta["timezone"], meta["country"]) == ("EUR", "Europe/Berlin", "DE")


def test_example_report_counts_the_refill_as_left_out_on_purpose() -> None:
    mapping = load_mapping(EXAMPLE_MAP)
    result = adapt_table(read_export(EXAMPLE_CSV, mapping.file), mapping, EXAMPLE_CSV.name)
    assert [(g.reason, g.rows, g.bad) for g in result.dropped] == [
        ("Buchungsart is 'Befüllung' (drop_rows)", (9,), False)
    ]
    assert result.field("orders.extra.payment").applied == {"Bar": "cash", "Karte": "card"}
    assert result.conflicts == ()


def test_adapting_twice_gives_the_same_bytes_and_never_touches_the_inputs(tmp_path: Path) -> None:
    before = (_sha256(EXAMPLE_CSV), _sha256(EXAMPLE_MAP))
    write_table_source(EXAMPLE_CSV, EXAMPLE_MAP, tmp_path / "a")
    write_table_source(EXAMPLE_CSV, EXAMPLE_MAP, tmp_path / "b")
    assert (_sha256(EXAMPLE_CSV), _sha256(EXAMPLE_MAP)) == before
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [OUTPUT_MARKER, "machines.csv", "orders.csv", "products.csv", "source.yaml"]
    assert [_sha256(tmp_path / "a" / n) for n in names] == [_sha256(tmp_path / "b" / n) for n in names]


# --- small exports for each rule -----------------------------------------------------------------------------

MAPPING: dict[str, Any] = {
    "source": {"name": "shop", "currency": "EUR", "timezone": "Europe/Paris", "country": "FR", "description": "x"},
    "money": {"decimal": ",", "currency_symbols": ["€"]},
    "orders": {
        "order_id": "Ticket",
        "machine_id": "Machine",
        "sku_id": "Article",
        "ts": {"column": "Date", "formats": ["%d/%m/%Y"]},
        "qty": "Qté",
        "unit_price": "Prix",
    },
    "machines": {"site_type": {"column": "Lieu", "values": {"Gare": "public", "Usine": "worksite"}}},
    "products": {
        "category_l1": {"column": "Rayon", "values": {"Boissons": "drinks", "Snacks": "snacks"}},
        "category_l2": {"value": "all"},
    },
}
COLUMNS = ["Ticket", "Machine", "Lieu", "Article", "Rayon", "Date", "Qté", "Prix"]
ROWS = [
    ["T1", "M1", "Gare", "eau", "Boissons", "13/02/2025", "1", "1,20 €"],
    ["T2", "M1", "Gare", "eau", "Boissons", "14/02/2025", "2", "1,20 €"],
    ["T3", "M2", "Usine", "chips", "Snacks", "14/02/2025", "1", "1,80 €"],
]


def _mapping(**changes: Any) -> Any:
    """MAPPING with top-level or dotted keys replaced, validated."""
    raw = copy.deepcopy(MAPPING)
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = raw
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return parse_mapping(raw, "shop.yaml")


def _frame(rows: list[list[str]], columns: list[str] = COLUMNS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns, dtype=object)


def test_small_export_adapts() -> None:
    result = adapt_table(_frame(ROWS), _mapping(), "shop.csv")
    assert result.orders["unit_price"].tolist() == ["1.20", "1.20", "1.80"]
    assert result.orders["ts"].tolist() == ["2025-02-13", "2025-02-14", "2025-02-14"]
    assert result.orders["status"].tolist() == ["completed"] * 3  # no status column: every line is a sale
    assert result.machines["site_type"].tolist() == ["public", "worksite"]
    assert result.machines["name"].tolist() == result.products["name"].tolist() == ["", ""]  # not mapped: blank
    assert result.products[["sku_id", "category_l1", "category_l2"]].values.tolist() == [
        ["chips", "snacks", "all"],
        ["eau", "drinks", "all"],
    ]
    assert result.n_units == 4


def test_bad_rows_are_refused_with_file_rows_column_and_fix() -> None:
    rows = [*ROWS, ["T4", "M1", "Gare", "eau", "Boissons", "31/02/2025", "1", "1,20 €"]]
    rows += [["T5", "M1", "Gare", "eau", "Boissons", "14/02/2025", "1", "zwei"]]
    rows += [["T6", "", "Gare", "eau", "Boissons", "14/02/2025", "1", "1,20"]]
    with pytest.raises(AdaptError) as exc:
        adapt_table(_frame(rows), _mapping(), "shop.csv")
    lines = str(exc.value).splitlines()
    assert lines[0] == "shop.csv: 3 rows cannot be read as the mapping says (bad_rows: refuse):"
    assert (
        lines[1] == "  shop.csv, row 6, column Machine: Machine is blank. Fix: give every line a machine id in Machine"
    )
    assert lines[2] == (
        "  shop.csv, row 4, column Date: Date is not a date in the form %d/%m/%Y (value '31/02/2025'). "
        "Fix: write it as %d/%m/%Y, or add the export's form to orders.ts.formats"
    )
    assert lines[3].startswith("  shop.csv, row 5, column Prix: Prix is not an amount >= 0 with at most 2 decimals")
    assert "(value 'zwei')" in lines[3]
    assert lines[4].startswith("Then: fix these rows or the mapping, or set bad_rows: drop")


def test_bad_rows_dropped_and_counted_when_the_mapping_says_so() -> None:
    rows = [*ROWS, ["T4", "M1", "Gare", "eau", "Boissons", "31/02/2025", "1", "1,20 €"]]
    rows += [["T5", "M1", "Gare", "eau", "Boissons", "14/02/2025", "0", "1,20"]]
    result = adapt_table(_frame(rows), _mapping(bad_rows="drop"), "shop.csv")
    assert [(g.reason, g.rows) for g in result.dropped] == [
        ("Date is not a date in the form %d/%m/%Y", (4,)),
        ("Qté is not a whole number >= 1", (5,)),
    ]
    assert result.rows_written == 3


def test_ambiguous_dates_are_bad_rows() -> None:
    mapping = _mapping(orders__ts={"column": "Date", "formats": ["%d/%m/%Y", "%m/%d/%Y"]}, bad_rows="drop")
    rows = [*ROWS, ["T4", "M1", "Gare", "eau", "Boissons", "03/02/2025", "1", "1,20 €"]]
    result = adapt_table(_frame(rows), mapping, "shop.csv")
    assert [(g.reason, g.rows) for g in result.dropped] == [
        ("Date reads as different dates in the forms %d/%m/%Y or %m/%d/%Y", (4,))
    ]


def test_status_map_drop_and_refuse() -> None:
    columns = [*COLUMNS, "Etat"]
    rows = [r + [s] for r, s in zip(ROWS, ["payé", "annulé", "test"], strict=True)]
    status = {"column": "Etat", "values": {"Payé": "completed", "Annulé": "refunded"}}
    with pytest.raises(AdaptError, match=r"row 3, column Etat: Etat 'test' is not in orders\.status\.values"):
        adapt_table(_frame(rows, columns), _mapping(orders__status=status), "shop.csv")
    result = adapt_table(_frame(rows, columns), _mapping(orders__status={**status, "otherwise": "drop"}), "shop.csv")
    assert result.orders["status"].tolist() == ["completed", "refunded"]
    assert [(g.reason, g.rows, g.bad) for g in result.dropped] == [
        ("Etat 'test' is not in orders.status.values (otherwise: drop)", (3,), False)
    ]


def test_drop_rows_and_blank_rows_are_left_out_on_purpose_even_when_refusing() -> None:
    rows = [*ROWS, ["", "M1", "Gare", "", "", "", "", ""], [""] * len(COLUMNS), [" "] * len(COLUMNS)]
    mapping = _mapping(drop_rows=[{"column": "Ticket", "values": [""]}])
    result = adapt_table(_frame(rows), mapping, "shop.csv")
    assert [(g.reason, g.rows, g.bad) for g in result.dropped] == [
        ("every cell the mapping reads is blank", (5, 6), False),
        ("Ticket is '' (drop_rows)", (4,), False),
    ]
    assert result.rows_written == 3


def test_unmapped_product_value_is_refused_naming_the_rows() -> None:
    rows = [*ROWS, ["T4", "M2", "Usine", "gum", "Confiserie", "14/02/2025", "1", "0,50"]]
    with pytest.raises(AdaptError) as exc:
        adapt_table(_frame(rows), _mapping(), "shop.csv")
    assert str(exc.value).splitlines()[1] == (
        "  shop.csv, row 4, column Rayon: product 'gum' has Rayon 'Confiserie', which products.category_l1.values "
        "does not map (value 'Confiserie'). Fix: add 'Confiserie' to products.category_l1.values in the mapping, "
        "or set products.category_l1.otherwise (e.g. unknown)"
    )


def test_unmapped_value_takes_otherwise_and_is_reported() -> None:
    rows = [*ROWS, ["T4", "M3", "Hôpital", "gum", "", "14/02/2025", "1", "0,50"]]
    mapping = _mapping(
        machines__site_type={"column": "Lieu", "values": {"Gare": "public", "Usine": "worksite"}, "otherwise": "other"},
        products__category_l1={
            "column": "Rayon",
            "values": {"Boissons": "drinks", "Snacks": "snacks"},
            "otherwise": "unknown",
        },
    )
    result = adapt_table(_frame(rows), mapping, "shop.csv")
    assert result.machines.set_index("machine_id")["site_type"].to_dict() == {
        "M1": "public",
        "M2": "worksite",
        "M3": "other",
    }
    site = result.field("machines.site_type")
    assert (site.unmapped, site.defaulted, site.policy) == ({"Hôpital": 1}, ("M3",), "other")
    l1 = result.field("products.category_l1")
    assert (l1.unmapped, l1.defaulted) == ({"": 1}, ("gum",))  # blank on every row of gum


def test_kept_site_type_must_be_a_contract_name() -> None:
    mapping = _mapping(machines__site_type="Lieu")  # cells written as they are
    with pytest.raises(
        AdaptError, match=r"machine 'M1' would get site_type 'Gare' from Lieu 'Gare', which is not a lower-case name"
    ):
        adapt_table(_frame(ROWS), mapping, "shop.csv")


def test_product_conflicts_take_the_most_frequent_value() -> None:
    rows = [*ROWS, ["T4", "M1", "Gare", "eau", "Snacks", "15/02/2025", "1", "1,20"]]
    result = adapt_table(_frame(rows), _mapping(), "shop.csv")
    assert result.products.set_index("sku_id").loc["eau", "category_l1"] == "drinks"
    assert result.conflicts_of("products", "Rayon") == {"eau": {"Boissons": 2, "Snacks": 1}}


def test_ref_price_from_a_column_and_a_product_never_sold_at_a_price() -> None:
    columns = [*COLUMNS, "Tarif", "Achat"]
    rows = [r + ["1,50", "0,40"] for r in ROWS]
    rows[2][8:] = ["2,00", ""]
    mapping = _mapping(products__ref_price="Tarif", products__unit_cost="Achat")
    result = adapt_table(_frame(rows, columns), mapping, "shop.csv")
    products = result.products.set_index("sku_id")
    assert products["ref_price"].to_dict() == {"chips": "2.00", "eau": "1.50"}
    assert products["unit_cost"].to_dict() == {"chips": "", "eau": "0.40"}
    free = [*ROWS, ["T4", "M1", "Gare", "gum", "Snacks", "15/02/2025", "1", "0"]]
    result = adapt_table(_frame(free), _mapping(bad_rows="drop"), "shop.csv")
    assert [(g.reason, g.rows) for g in result.dropped] == [("product never sold at a price > 0 (no ref_price)", (4,))]


def test_derived_order_ids_constants_and_slug_sku_ids() -> None:
    mapping = _mapping(
        orders__order_id={"columns": ["Machine", "Date"]},
        orders__qty={"value": 1},
        orders__sku_id={"column": "Article", "slug_prefix": "fr-"},
        machines__capacity={"value": 200},
    )
    result = adapt_table(_frame(ROWS), mapping, "shop.csv")
    assert result.orders["order_id"].tolist() == ["M1|13/02/2025", "M1|14/02/2025", "M2|14/02/2025"]
    assert result.orders["qty"].tolist() == [1, 1, 1]
    assert sorted(result.products["sku_id"]) == ["fr-chips", "fr-eau"]
    assert result.machines["capacity"].tolist() == ["200", "200"]
    per_row = adapt_table(_frame(ROWS), _mapping(orders__order_id={"per_row": True}), "shop.csv")
    assert per_row.orders["order_id"].tolist() == ["1", "2", "3"]


def test_missing_columns_name_the_mapping_keys() -> None:
    frame = _frame(ROWS).rename(columns={"Prix": "Price", "Lieu": "Site"})
    with pytest.raises(
        AdaptError,
        match=r"shop\.csv lacks the columns \['Lieu', 'Prix'\] that the mapping names "
        r"\('Lieu' at machines\.site_type; 'Prix' at orders\.unit_price\)",
    ):
        adapt_table(frame, _mapping(), "shop.csv")


# --- reading and writing files -------------------------------------------------------------------------------


def test_read_export_with_another_encoding_and_refuse_utf16(tmp_path: Path) -> None:
    text = "Ticket;Caf\u00e9\nT1;cr\u00e8me\n"
    (tmp_path / "latin.csv").write_bytes(text.encode("cp1252"))
    mapping = _mapping(file={"encoding": "cp1252", "delimiter": ";"})
    assert read_export(tmp_path / "latin.csv", mapping.file).to_dict("records") == [{"Ticket": "T1", "Café": "crème"}]
    with pytest.raises(
        AdaptError, match=r"latin\.csv, line 1: the byte 0xe9 cannot be read as utf-8 text\. Fix: set file\.encoding"
    ):
        read_export(tmp_path / "latin.csv")
    (tmp_path / "wide.csv").write_bytes(text.encode("utf-16"))
    with pytest.raises(AdaptError, match="is UTF-16 text, not UTF-8. Fix: set file.encoding: utf-16"):
        read_export(tmp_path / "wide.csv")


def test_output_folder_safety(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(OutputExistsError, match="not empty.*--force"):
        write_table_source(EXAMPLE_CSV, EXAMPLE_MAP, out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    mapping = out / "m.yaml"
    mapping.write_bytes(EXAMPLE_MAP.read_bytes())
    with pytest.raises(OutputExistsError, match="contains the input"):
        write_table_source(EXAMPLE_CSV, mapping, out, force=True)
    assert mapping.is_file()
    write_table_source(EXAMPLE_CSV, EXAMPLE_MAP, out, force=True)
    assert sorted(p.name for p in out.iterdir()) == [
        OUTPUT_MARKER,
        "machines.csv",
        "orders.csv",
        "products.csv",
        "source.yaml",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary folder left behind


def test_source_yaml_round_trips_the_mapping_source() -> None:
    mapping = load_mapping(EXAMPLE_MAP)
    result = adapt_table(read_export(EXAMPLE_CSV, mapping.file), mapping)
    assert yaml.safe_load(source_files(result)["source.yaml"]) == mapping.source.model_dump(
        exclude_none=True, exclude_defaults=True
    )
