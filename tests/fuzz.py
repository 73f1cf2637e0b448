"""Hypothesis strategies for hostile input at every door, and what a refused call must leave unchanged.

The values mix what an agent sends by mistake (wrong types, unknown fields, negative and absurd numbers) with
what a hostile client sends on purpose: lone UTF-16 surrogates, NUL, integers of thousands of digits, NaN and
Infinity, nesting over the 32-level limit, huge strings, keys given twice (in JSON texts). Each fuzz test
runs a bounded number of examples, derandomized so CI reruns the same ones (`fuzz(n)`).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from autovend.tools.registry import TOOLS

_FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)


def fuzz(max_examples: int) -> settings:
    """The fuzz tests' settings with `max_examples` examples (each door's count keeps its test within seconds)."""
    return settings(_FUZZ, max_examples=max_examples)


TOOL_NAMES = [t.name for t in TOOLS]
QUIET_TOOLS = [n for n in TOOL_NAMES if n != "end_day"]  # end_day settles days: a fuzz run stays on day 1
FIELDS = ["items", "sku_id", "device_id", "qty", "price", "text", "sql", "page", "page_size", "window_days",
          "days_ahead", "query", "category_l1", "sort_by", "supplier_id", "in_warehouse_only"]  # fmt: skip
IDS = ["SKU0001", "SKU0012", "CN_WORKSITE_01", "CN_CAMPUS_01", "default", "drinks"]

text = st.one_of(
    st.text(max_size=12),
    st.sampled_from(IDS),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "SKU\x00", "é" * 3, "\U0001f600", "'; DROP TABLE orders; --"]),
    st.integers(130_000, 140_000).map(lambda n: "x" * n),  # around the arguments' limit of 131,072 characters
)
numbers = st.one_of(
    st.integers(-5, 60),
    st.integers(),
    st.sampled_from([2**53 - 1, 2**53, 2**63, -(2**63) - 1, 10**30]),
    st.sampled_from([5000, -5000]).map(lambda e: (10 ** abs(e)) * (1 if e > 0 else -1)),  # 5,001 digits
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 2.0, 3.5, 1e308, -0.0]),
)
atoms = st.one_of(st.none(), st.booleans(), numbers, text)


def nested(levels: int, leaf: Any = 1) -> Any:
    """A value nested `levels` deep (objects and arrays alternating)."""
    value = leaf
    for i in range(levels):
        value = {"a": value} if i % 2 else [value]
    return value


values = st.one_of(
    st.recursive(
        atoms,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(FIELDS), text), inner, max_size=4)
        ),
        max_leaves=12,
    ),
    st.sampled_from([30, 31, 32, 33, 200, 5_000]).map(nested),
)
items = st.lists(
    st.one_of(st.fixed_dictionaries({}, optional={f: values for f in ("sku_id", "device_id", "qty", "price")}), values),
    max_size=4,
)
arguments = st.one_of(
    st.fixed_dictionaries({}, optional={"items": items}),
    st.dictionaries(st.sampled_from(FIELDS), values, max_size=3),
    st.dictionaries(text, values, max_size=2),
    values,  # not an object at all
)


def dumps_hostile(value: Any) -> str:
    """`value` as JSON text the way a careless or hostile client writes it (NaN as NaN, surrogates escaped).

    Python writes integers of any length here (its 4,300-digit guard is lifted for the call); a value nested too
    deep for its encoder is written as arrays 5,000 deep.
    """
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return json.dumps(value, ensure_ascii=True, allow_nan=True)
    except RecursionError:
        return "[" * 5000 + "]" * 5000
    finally:
        sys.set_int_max_str_digits(before)


json_texts = st.one_of(
    arguments.map(dumps_hostile),
    st.text(max_size=40),  # not JSON, mostly
    st.sampled_from(
        [
            '{"page": 1, "page": 2}',
            '{"items": [{"sku_id": "SKU0001", "qty": 1, "qty": 2}]}',
            '{"price_min": NaN}',
            '{"price_min": 1e999}',
            '{"text": "\\ud800"}',
            '{"page": 1' + "0" * 5000 + "}",
            "[" * 100_000 + "]" * 100_000,
            '{"page": ',
            "",
            "null",
        ]
    ),
)


def fingerprint(sim: Any, notebook: str) -> tuple[Any, ...]:
    """What a refused call must leave as it was: day, money, stock everywhere, prices, visits, the notebook."""
    return (
        sim.day,
        sim.cash_fen,
        sim.shelf_units().tobytes(),
        sim.warehouse_units().tobytes(),
        sim.in_transit_units().tobytes(),
        sim.price_matrix_fen().tobytes(),
        tuple(sorted(sim.visits_today().items())),
        tuple(sorted(sim.ledger_totals_fen().items())),
        notebook,
    )
