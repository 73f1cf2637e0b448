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


def test_a_count_takes_its_noun_in_the_right_number():
    from autovend.marks import counted

    assert [counted(n, "machine") for n in (0, 1, 2, 1200)] == [
        "0 machines",
        "1 machine",
        "2 machines",
        "1,200 machines",
    ]
    assert counted(1.0, "machine") == "1 machine" and counted(2, "child", "children") == "2 children"
    assert counted(None, "machine") == "None machines"  # no number: shown as given


def test_a_one_machine_worlds_verdict_says_1_machine():
    from autovend.export.validation import validation_text

    manifest = {"validation": {"verdict": "not_distinguishable", "shelves": "pre_window", "n_machines": 1, "key": []}}
    assert "(pre-window shelves (sales-only records), 1 machine)" in validation_text(manifest)
