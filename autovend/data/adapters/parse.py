"""Parsing an export's text cells: amounts in integer minor units, whole numbers, timestamps, value maps.

Every function takes trimmed text (a blank cell is '') and returns the parsed values next to a boolean
mask of the cells that could not be parsed, so the adapter can name each bad row. Amounts are parsed
exactly (decimal arithmetic per distinct cell, never binary floats) into integer minor units (cents).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
import pandas as pd

from autovend.data.adapters.mapping import Money
from autovend.data.source import MAX_DECIMAL, MAX_INTEGER, YEARS

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_SPACES = re.compile(r"[\s\u00a0\u202f]+")  # includes the no-break and narrow no-break spaces of many locales


@dataclass(frozen=True, eq=False)
class Parsed:
    """Parsed cells (`values`, missing where `bad`) and the mask of cells that could not be parsed."""

    values: pd.Series
    bad: np.ndarray


def _plain(text: str, money: Money, symbols: bool) -> str:
    """A cell rewritten as a plain number: symbols, spaces and thousands separators removed, '.' as point."""
    if symbols:
        for symbol in sorted(money.currency_symbols, key=len, reverse=True):
            text = text.replace(symbol, "")
    text = _SPACES.sub("", text)
    if money.thousands:
        text = text.replace(money.thousands, "")
    return text.replace(",", ".") if money.decimal == "," else text


def _decimal(text: str, money: Money, symbols: bool) -> Decimal | None:
    """The exact value of one cell, or None when it is not a plain decimal number."""
    plain = _plain(text, money, symbols)
    if not _NUMBER.fullmatch(plain):
        return None
    try:
        return Decimal(plain)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        return None


def parse_minor_units(text: pd.Series, money: Money) -> Parsed:
    """Amounts >= 0 with at most `money.decimals` decimals as integer minor units (1,50 € -> 150).

    Blank cells, negative amounts, finer amounts (1.505 with 2 decimals) and amounts above 10^12 are bad.
    """
    scale = Decimal(10) ** money.decimals
    units: dict[str, int | None] = {}
    for cell in text.unique():
        value = _decimal(cell, money, symbols=True)
        ok = value is not None and value >= 0 and value <= Decimal(int(MAX_DECIMAL))
        scaled = value * scale if ok and value is not None else None
        units[cell] = int(scaled) if scaled is not None and scaled == scaled.to_integral_value() else None
    values = text.map(units).astype("Int64")
    return Parsed(values, values.isna().to_numpy())


def parse_whole(text: pd.Series, money: Money, minimum: int) -> Parsed:
    """Whole numbers >= `minimum` (the money separators apply: '1.000' is 1000 when thousands is '.')."""
    wholes: dict[str, int | None] = {}
    for cell in text.unique():
        value = _decimal(cell, money, symbols=False)
        ok = value is not None and value == value.to_integral_value() and minimum <= value <= MAX_INTEGER
        wholes[cell] = int(value) if ok and value is not None else None
    values = text.map(wholes).astype("Int64")
    return Parsed(values, values.isna().to_numpy())


@dataclass(frozen=True, eq=False)
class ParsedTimes:
    """Parsed timestamps; masks of cells that fit no format, fit two formats differently, or fall out of range."""

    values: pd.Series
    unreadable: np.ndarray
    ambiguous: np.ndarray
    out_of_years: np.ndarray


def parse_times(text: pd.Series, formats: tuple[str, ...]) -> ParsedTimes:
    """Read each cell with every format; the first that fits wins unless another fits with another time.

    Cells are parsed at microsecond resolution (any year strptime reads fits), checked against `YEARS`, and
    only then converted to nanoseconds, so a placeholder such as 9999-12-31 is a bad cell, not an overflow.
    """
    values = pd.Series(pd.NaT, index=text.index, dtype="datetime64[us]")
    ambiguous = np.zeros(len(text), dtype=bool)
    for fmt in formats:
        parsed = pd.to_datetime(text, format=fmt, errors="coerce").astype("datetime64[us]")
        fits = parsed.notna().to_numpy()
        taken = values.notna().to_numpy()
        ambiguous |= taken & fits & (parsed != values).to_numpy()
        values = values.where(taken, parsed)
    unreadable = values.isna().to_numpy()
    year = values.dt.year.to_numpy(dtype="float64", na_value=np.nan)
    out_of_years = ~unreadable & ~((year >= YEARS[0]) & (year <= YEARS[1]))
    bad = unreadable | ambiguous | out_of_years
    kept = values.where(~bad).astype("datetime64[ns]")
    return ParsedTimes(kept, unreadable, ambiguous & ~unreadable, out_of_years & ~ambiguous)


def format_minor_units(units: pd.Series, decimals: int) -> pd.Series:
    """Integer minor units as decimal text with `decimals` places: 150 -> '1.50' (2), 150 -> '150' (0)."""
    u = units.astype("int64")
    if decimals == 0:
        return u.astype(str)
    scale = 10**decimals
    return (u // scale).astype(str) + "." + (u % scale).astype(str).str.zfill(decimals)


def recode(text: pd.Series, values: dict[str, str]) -> pd.Series:
    """Cells mapped through a value map (keys trimmed and case-folded); cells not in it become missing."""
    folded = {key.strip().casefold(): target for key, target in values.items()}
    return text.str.casefold().map(folded).astype(object)
