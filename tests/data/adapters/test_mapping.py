"""Tests of the mapping model and loader: a good mapping loads, a bad one is refused naming the file, key and fix."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from autovend.data.adapters.mapping import KEEP, REFUSE, Mapped, load_mapping, parse_mapping
from autovend.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]

BASE: dict[str, Any] = {
    "source": {"name": "shop", "currency": "EUR", "timezone": "Europe/Paris", "country": "FR", "description": "x"},
    "orders": {
        "order_id": "Ticket",
        "machine_id": "Machine",
        "sku_id": "Article",
        "ts": {"column": "Date", "formats": ["%d/%m/%Y"]},
        "qty": "Qté",
        "unit_price": "Prix",
    },
    "products": {"category_l1": {"value": "snacks"}, "category_l2": "Famille"},
}


def _with(path: str, value: object) -> dict[str, Any]:
    """BASE with the dotted key `path` set to `value` (None deletes it)."""
    raw = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node = raw
    for key in parents:
        node = node.setdefault(key, {})
    if value is None:
        del node[last]
    else:
        node[last] = value
    return raw


def test_base_mapping_defaults() -> None:
    m = parse_mapping(BASE, "base.yaml")
    assert m.bad_rows == REFUSE
    assert m.file.delimiter == "," and m.money.decimal == "." and m.money.decimals == 2
    assert m.machines.site_type.value == "unknown"  # no machines section: every machine is unknown
    assert m.orders.qty.column == "Qté"  # a plain string names a column
    assert m.products.category_l1.value == "snacks"
    assert list(m.columns()) == ["Ticket", "Machine", "Article", "Date", "Qté", "Prix", "Famille"]


def test_otherwise_defaults_to_refuse_with_values_and_keep_without() -> None:
    assert Mapped(column="S", values={"a": "b"}).policy == REFUSE
    assert Mapped(column="S").policy == KEEP
    assert Mapped(column="S", values={"a": "b"}, otherwise="unknown").policy == "unknown"


def test_otherwise_takes_a_value_as_every_field_does() -> None:
    got = parse_mapping(_with("products.category_l2", {"column": "Famille", "values": {"Boissons": "drinks"},
                                                       "otherwise": {"value": "other"}}), "shop.yaml")  # fmt: skip
    assert got.products.category_l2.policy == "other" and "other" in got.products.category_l2.targets()
    with pytest.raises(ConfigError, match=r"would write 'keep', a word `otherwise` reads as its action"):
        parse_mapping(_with("products.category_l2", {"column": "Famille", "otherwise": {"value": "keep"}}), "m.yaml")
    with pytest.raises(ConfigError, match=r"given as text or as \{value: TEXT\}; got \{'column': 'X'\}"):
        parse_mapping(_with("products.category_l2", {"column": "Famille", "otherwise": {"column": "X"}}), "m.yaml")


def test_the_shipped_mappings_load() -> None:
    nj = load_mapping(ROOT / "autovend" / "data" / "adapters" / "nj_vending.yaml")
    assert nj.orders.sku_id.slug_prefix == "nj-"
    kiosk = load_mapping(ROOT / "examples" / "mappings" / "kiosk-eur.yaml")
    assert (kiosk.money.decimal, kiosk.file.delimiter, kiosk.source.currency) == (",", ";", "EUR")


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param("orders.qtty", "Qté", r"key orders\.qtty: Extra inputs are not permitted", id="typo"),
        pytest.param("products", None, r"key products: Field required", id="missing-section"),
        pytest.param("source.currency", "euro", r"key source\.currency: String should match", id="currency"),
        pytest.param(
            "machines.site_type",
            {"column": "Lieu", "values": {"Gare": "Train Station"}},
            r"machines\.site_type: 'Train Station' cannot be written; use a lower-case name",
            id="site-type-target",
        ),
        pytest.param(
            "orders.status",
            {"column": "Etat", "values": {"payé": "sold"}},
            r"orders\.status: 'sold' cannot be written; use one of completed, refunded, failed or drop",
            id="status-target",
        ),
        pytest.param(
            "orders.ts", {"column": "Date", "formats": ["%m/%Y"]}, r"does not give a full date", id="format-no-day"
        ),
        pytest.param(
            "orders.ts",
            {"column": "Date", "formats": ["%d/%m/%Y", "%d/%m/%Y %H:%M"]},
            r"mixes formats with and without a time of day",
            id="mixed-forms",
        ),
        pytest.param(
            "orders.ts", {"column": "Date", "formats": ["%d/%m/%Y %I:%M"]}, r"does not give the hour", id="12-hour"
        ),
        pytest.param(
            "orders.ts", {"column": "Date", "formats": ["%Y-%m-%dT%H:%M%z"]}, r"reads a time zone", id="offset"
        ),
        pytest.param("orders.machine_id", {"column": "M", "value": "m1"}, r"not both", id="column-and-value"),
        pytest.param(
            "products.category_l2",
            {"column": "Famille", "values": {"Boissons": "drinks"}, "otherwise": "drop"},
            r"drop is for order-line fields",
            id="drop-on-a-product",
        ),
        pytest.param(
            "machines.site_type",
            {"column": "Lieu", "values": {"Entrepôt": "drop"}},
            r"machines\.site_type: drop is for order-line fields",
            id="drop-target-on-a-machine",
        ),
        pytest.param(
            "orders.status",
            {"column": "Etat", "values": {"?": "keep"}},
            r"`values` maps '\?' to 'keep', which only `otherwise` can say",
            id="action-as-target",
        ),
        pytest.param(
            "products.category_l2",
            {"column": "Famille", "values": {"x": "a", "X ": "b"}},
            r"maps 'X ' twice",
            id="duplicate-key",
        ),
        pytest.param("orders.qty", {"value": "0"}, r"orders\.qty\.value", id="qty-zero"),
        pytest.param("money.thousands", ".", r"must differ from decimal", id="thousands-is-decimal"),
        pytest.param("orders.extra", {"status": "Etat"}, r"other than the contract's columns", id="extra-clash"),
        pytest.param("bad_rows", "skip", r"key bad_rows: Input should be 'refuse' or 'drop'", id="bad-rows"),
    ],
)
def test_bad_mappings_name_file_key_and_fix(path: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as exc:
        parse_mapping(_with(path, value), "shop.yaml")
    text = str(exc.value)
    assert text.startswith("shop.yaml: invalid mapping:")
    assert "Fix: correct these keys (see docs/data-contract.md" in text


def test_yaml_booleans_are_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "source: {name: s, currency: EUR, timezone: UTC, country: FR, description: x}\n"
        "orders: {order_id: T, machine_id: M, sku_id: A, ts: {column: D, formats: ['%Y-%m-%d']}, qty: Q,\n"
        "  unit_price: P, status: {column: Paid, values: {Yes: completed, No: failed}}}\n"
        "products: {category_l1: C, category_l2: C}\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError, match=r"key orders\.status\.values: YAML read a cell or value as the boolean True .*quote it"
    ):
        load_mapping(path)


def test_unreadable_and_missing_mapping_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mapping file not found"):
        load_mapping(tmp_path / "none.yaml")
    (tmp_path / "list.yaml").write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds a YAML mapping with source, orders and products"):
        load_mapping(tmp_path / "list.yaml")
    (tmp_path / "broken.yaml").write_text("source: {name: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping file .*broken.yaml: not valid YAML at line 2"):
        load_mapping(tmp_path / "broken.yaml")
