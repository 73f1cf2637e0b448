"""Tests of the cell parsers: amounts in minor units, whole numbers, timestamps in declared formats."""

from __future__ import annotations

import pandas as pd
import pytest

from autovend.data.adapters.mapping import Money
from autovend.data.adapters.parse import (
    format_minor_units,
    parse_minor_units,
    parse_times,
    parse_whole,
    recode,
)

EURO = Money(decimal=",", thousands=".", currency_symbols=("€", "EUR"), decimals=2)


def _cells(*values: str) -> pd.Series:
    return pd.Series(list(values), dtype=object)


def test_amounts_with_comma_decimals_euro_sign_and_thousands() -> None:
    parsed = parse_minor_units(_cells("1,20 €", "EUR 2,5", "1.250,00\u00a0€", "0", "3"), EURO)
    assert parsed.values.tolist() == [120, 250, 125_000, 0, 300]
    assert not parsed.bad.any()


@pytest.mark.parametrize(
    "cell",
    [
        pytest.param("1,205 €", id="finer-than-cents"),
        pytest.param("-1,20", id="negative"),
        pytest.param("zwei", id="words"),
        pytest.param("", id="blank"),
        pytest.param("1,2,3", id="two-separators"),
        pytest.param("2000000000000,00", id="above-10^12"),
        pytest.param("1e3", id="scientific"),
    ],
)
def test_bad_amounts_are_flagged(cell: str) -> None:
    parsed = parse_minor_units(_cells("1,00", cell), EURO)
    assert parsed.bad.tolist() == [False, True]
    assert parsed.values.isna().tolist() == [False, True]


def test_dot_decimals_are_exact_and_trailing_zeros_are_fine() -> None:
    parsed = parse_minor_units(_cells("0.29", "1.10", "1.500", "4.35"), Money())
    assert parsed.values.tolist() == [29, 110, 150, 435]  # 0.29 * 100 is 28.999... in binary floats


def test_zero_decimal_currency() -> None:
    yen = Money(decimals=0, currency_symbols=("¥",))
    parsed = parse_minor_units(_cells("¥150", "150.5"), yen)
    assert parsed.values.tolist()[0] == 150
    assert parsed.bad.tolist() == [False, True]
    assert format_minor_units(pd.Series([150, 7]), 0).tolist() == ["150", "7"]


def test_format_minor_units() -> None:
    assert format_minor_units(pd.Series([150, 5, 100_000]), 2).tolist() == ["1.50", "0.05", "1000.00"]
    assert format_minor_units(pd.Series([1234]), 3).tolist() == ["1.234"]


def test_whole_numbers() -> None:
    parsed = parse_whole(_cells("1", "2,0", "1.000", "0", "1,5", "", "x"), EURO, minimum=1)
    assert parsed.values.tolist()[:3] == [1, 2, 1000]
    assert parsed.bad.tolist() == [False, False, False, True, True, True, True]


def test_day_first_times() -> None:
    parsed = parse_times(_cells("13.02.2025 18:45", "3.2.2025 07:05", "31.02.2025 08:00", ""), ("%d.%m.%Y %H:%M",))
    assert parsed.values[:2].dt.strftime("%Y-%m-%dT%H:%M:%S").tolist() == ["2025-02-13T18:45:00", "2025-02-03T07:05:00"]
    assert parsed.unreadable.tolist() == [False, False, True, True]
    assert not parsed.ambiguous.any()


def test_formats_are_tried_in_order_and_disagreement_is_ambiguous() -> None:
    cells = _cells("13/02/2025", "02/13/2025", "05/05/2025", "03/02/2025")
    parsed = parse_times(cells, ("%d/%m/%Y", "%m/%d/%Y"))
    assert parsed.values[:3].dt.strftime("%Y-%m-%d").tolist() == ["2025-02-13", "2025-02-13", "2025-05-05"]
    assert parsed.ambiguous.tolist() == [False, False, False, True]  # 3 February or 2 March
    assert parsed.values.isna().tolist() == [False, False, False, True]


def test_times_outside_the_contract_years() -> None:
    parsed = parse_times(_cells("1899-12-31", "2024-01-01", "2201-01-01"), ("%Y-%m-%d",))
    assert parsed.out_of_years.tolist() == [True, False, True]
    assert parsed.unreadable.tolist() == [False, False, False]


def test_recode_ignores_case_and_blanks_around_keys() -> None:
    coded = recode(_cells("verkauf", "STORNO", "Befüllung", ""), {" Verkauf ": "completed", "Storno": "refunded"})
    assert coded.tolist()[:2] == ["completed", "refunded"]
    assert coded.isna().tolist() == [False, False, True, True]
