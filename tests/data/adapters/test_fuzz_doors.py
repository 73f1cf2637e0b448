"""Fuzzing the file doors: random exports (cells, quotes, delimiters, line ends, bytes, compression) through
`adapt table`, random network files and random settings YAML. Each either works or ends in the project's
documented error (AdaptError / ExportError / ConfigError), never another exception, and a refused adapt
writes nothing. Bounded: a fixed number of small examples each, derandomized (the same examples every run), so
CI time stays flat and a failure reproduces."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from autovend.config import read_yaml_value
from autovend.data.adapters.files import write_table_source
from autovend.errors import AdaptError, ConfigError, ExportError
from autovend.export.network import read_network
from autovend.io import OUTPUT_MARKER
from autovend.sweep.spec import parse_spec

# bounded by the number and size of examples, not by a clock: no deadline, so a loaded machine cannot fail it
BOUNDED = settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None
)
HEADER = ["Ticket", "Machine", "Article", "Date", "Qty", "Price", "Pay"]
VALID = {
    "Ticket": ["T1", "T2", "A-9"],
    "Machine": ["M1", "M2"],
    "Article": ["eau", "chips", "Coca 0,5 l"],
    "Date": ["13/02/2025", "14/02/2025"],
    "Qty": ["1", "2"],
    "Price": ["1,20", "1,80 €"],
    "Pay": ["cash", "card", ""],
}
ODD = {
    "Ticket": [""],
    "Machine": [""],
    "Article": ["", " "],
    "Date": ["31/12/9999", "29/02/2025", "01/01/1600", "2025-02-13"],
    "Qty": ["0", "-1", "1e3", "99999999999999999999", "1,5"],
    "Price": ["0", "-3", "1,234", "NaN", "1e300", "€"],
    "Pay": ["[/x]", ":a:"],
}
MAPPING: dict[str, Any] = {
    "source": {"name": "shop", "currency": "EUR", "timezone": "Europe/Paris", "country": "FR", "description": "x"},
    "file": {"delimiter": ";", "max_text_mb": 1},
    "money": {"decimal": ",", "currency_symbols": ["€"]},
    "orders": {
        "order_id": "Ticket",
        "machine_id": "Machine",
        "sku_id": "Article",
        "ts": {"column": "Date", "formats": ["%d/%m/%Y"]},
        "qty": "Qty",
        "unit_price": "Price",
        "extra": {"payment": {"column": "Pay", "values": {"cash": "cash", "card": "card"}, "otherwise": "keep"}},
    },
    "products": {"category_l1": {"value": "drinks"}, "category_l2": {"value": "all"}},
}
HOSTILE = st.text(alphabet=st.sampled_from(list(";\",\n\r\t \x00\u00a0€[]/:\\'ab9é")), max_size=12)


def _cell(column: str) -> st.SearchStrategy[str]:
    valid = st.sampled_from(VALID[column])
    return st.one_of(*[valid] * 24, st.sampled_from(ODD[column]), HOSTILE)  # mostly valid, some odd or hostile


ROW = st.tuples(*(_cell(c) for c in HEADER)).map(list)
CLEAN_ROW = st.tuples(*(st.sampled_from(VALID[c]) for c in HEADER)).map(list)
EXPORT = st.fixed_dictionaries(
    {
        "header": st.one_of(*[st.just(HEADER)] * 6, st.lists(st.sampled_from([*HEADER, "", "X"]), max_size=9)),
        "rows": st.one_of(
            st.lists(CLEAN_ROW, min_size=1, max_size=6),  # the path that writes a source
            st.lists(st.one_of(ROW, ROW, ROW, st.lists(HOSTILE, max_size=9)), max_size=8),
        ),
        "end": st.sampled_from(["\n", "\r\n", "\r", ""]),
        "quote_cells": st.booleans(),
        "gzip": st.booleans(),
        "cut": st.one_of(st.just(0), st.just(0), st.integers(min_value=0, max_value=40)),
        "noise": st.one_of(*[st.just(b"")] * 6, st.binary(min_size=1, max_size=4)),  # bytes that may not be text
        "at": st.integers(min_value=0, max_value=200),
        "bad_rows": st.sampled_from(["refuse", "drop", "drop"]),
    }
)


def _text(parts: dict[str, Any]) -> bytes:
    def line(cells: list[str]) -> str:
        if parts["quote_cells"]:
            cells = ['"' + c.replace('"', '""') + '"' for c in cells]
        return ";".join(cells)

    text = parts["end"].join(line(r) for r in [parts["header"], *parts["rows"]]) + parts["end"]
    data = text.encode("utf-8")
    at = min(parts["at"], len(data))
    data = data[:at] + parts["noise"] + data[at:]
    if parts["cut"]:
        data = data[: max(len(data) - parts["cut"], 0)]
    return gzip.compress(data) if parts["gzip"] else data


CLEAN = {"header": HEADER, "rows": [["T1", "M1", "eau", "13/02/2025", "1", "1,20", "cash"]], "end": "\n"}


@BOUNDED
@given(EXPORT)
@example({**CLEAN, "quote_cells": False, "gzip": False, "cut": 0, "noise": b"", "at": 0, "bad_rows": "refuse"})
@example({**CLEAN, "quote_cells": True, "gzip": True, "cut": 0, "noise": b"", "at": 0, "bad_rows": "drop"})
def test_any_export_is_adapted_or_refused_with_nothing_written(parts: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        export, mapping, out = folder / "shop.csv", folder / "map.yaml", folder / "out"
        export.write_bytes(_text(parts))
        mapping.write_text(yaml.safe_dump({**MAPPING, "bad_rows": parts["bad_rows"]}), encoding="utf-8")
        try:
            result = write_table_source(export, mapping, out)
        except AdaptError as exc:
            event("refused: " + ("bad rows" if "rows cannot be read" in str(exc) else str(exc).split(":")[1][:30]))
            assert not out.exists()
            assert sorted(p.name for p in folder.iterdir()) == ["map.yaml", "shop.csv"]  # no temporary folder
        else:
            event("adapted")
            assert result.rows_written > 0
            names = sorted(p.name for p in out.iterdir())
            assert names == [OUTPUT_MARKER, "machines.csv", "orders.csv", "products.csv", "source.yaml"]


NETWORK_CELL = st.one_of(
    st.sampled_from(["A1", "a1", "worksite", "campus/x", "200", "0", "-5", "1e3", "10000000000000000", "²", ""]),
    HOSTILE,
)


@BOUNDED
@given(
    st.lists(st.lists(NETWORK_CELL, min_size=0, max_size=4), max_size=6),
    st.sampled_from([["device_id", "location"], ["device_id", "location", "capacity"], ["device_id", "capacity"]]),
)
def test_any_network_file_is_read_or_refused(rows: list[list[str]], header: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.csv"
        path.write_bytes("\n".join(",".join(r) for r in [header, *rows]).encode("utf-8", "surrogatepass"))
        try:
            devices = read_network(path)
        except ExportError as exc:
            assert str(exc)
        else:
            assert all(d.capacity is None or 1 <= d.capacity <= 100_000 for d in devices)
            assert len({d.device_id.casefold() for d in devices}) == len(devices)


YAML_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)
SPEC = st.one_of(
    YAML_VALUE,
    st.fixed_dictionaries(
        {"worlds": YAML_VALUE, "agents": YAML_VALUE, "seeds": YAML_VALUE},
        optional={"days": YAML_VALUE, "limits": YAML_VALUE},
    ),
)


@BOUNDED
@given(SPEC, st.binary(max_size=40))
@example(None, b"\x00")  # found by this test: a NUL byte escaped the reader as yaml's ReaderError
def test_any_sweep_spec_and_any_yaml_bytes_are_read_or_refused(spec: Any, noise: bytes) -> None:
    try:
        parse_spec(spec, "sweep.yaml")
    except ConfigError as exc:
        assert str(exc)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.yaml"
        path.write_bytes(yaml.safe_dump(spec).encode() + noise)
        try:
            read_yaml_value(path, "spec")
        except ConfigError as exc:
            assert "s.yaml" in str(exc)
