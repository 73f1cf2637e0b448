"""One missing-value mark in the command line's tables: None, text, NaN and infinity all print `MISSING`."""

from __future__ import annotations

import math

import pytest

from autovend.cli.run import SHOWN, _cell
from autovend.marks import MISSING, number_cell


@pytest.mark.parametrize("value", [None, "n/a", float("nan"), math.inf, -math.inf])
def test_a_missing_or_non_finite_value_prints_the_mark(value):
    assert number_cell(value) == MISSING == "–"
    for _, fmt, scale in SHOWN.values():  # `run`'s summary line and `compare`'s tables (it printed "nan")
        assert _cell(value, fmt, scale) == MISSING


def test_numbers_print_as_formatted():
    assert number_cell(1234.5) == "1,234.50"
    assert number_cell("0.1234", "{:.1f}", 100.0) == "12.3"
    assert _cell(0.05, *SHOWN["waste_rate"][1:]) == "5.00"
