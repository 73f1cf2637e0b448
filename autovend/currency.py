"""The words of a world's money: its ISO 4217 code and the name of its hundredth part, for every text a reader sees.

Money is exact integer hundredths inside the simulator (`autovend.sim.money`) whatever the currency; prompts,
tool descriptions and schemas, reports, the console and leaderboards name the world's currency
(`World.economics.currency`) and its minor unit ("USD, rounded to the cent"), never a literal one.

Texts that are written once for every world (the tools' argument and result models, whose JSON schemas are
built at import) hold the placeholders `{currency}`, `{minor_unit}` and `{minor_units}`; `fill_money` puts a
world's words in, in every string of a JSON-like value.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# ISO 4217 code -> (one minor unit, several): the hundredth part as people call it.
MINOR_UNITS: dict[str, tuple[str, str]] = {
    "AUD": ("cent", "cents"),
    "CAD": ("cent", "cents"),
    "CHF": ("rappen", "rappen"),
    "CNY": ("fen", "fen"),
    "CZK": ("haler", "haleru"),
    "EUR": ("cent", "cents"),
    "GBP": ("penny", "pence"),
    "HKD": ("cent", "cents"),
    "INR": ("paisa", "paise"),
    "MXN": ("centavo", "centavos"),
    "NZD": ("cent", "cents"),
    "PLN": ("grosz", "groszy"),
    "RUB": ("kopek", "kopeks"),
    "SGD": ("cent", "cents"),
    "UAH": ("kopiyka", "kopiykas"),
    "USD": ("cent", "cents"),
}
DEFAULT_MINOR = ("hundredth", "hundredths")  # a currency not in the table


def minor_unit(code: str, plural: bool = False) -> str:
    """The name of a hundredth of `code` ("fen", "cent", "kopiyka"; plural "cents"); "hundredth" if unknown."""
    one, many = MINOR_UNITS.get(code.upper(), DEFAULT_MINOR)
    return many if plural else one


def money_words(code: str) -> dict[str, str]:
    """The placeholders' values for `code`: currency, minor_unit, minor_units."""
    return {"currency": code, "minor_unit": minor_unit(code), "minor_units": minor_unit(code, plural=True)}


def money_note(code: str) -> str:
    """How money is given, for a schema or a table: 'USD, rounded to the cent.'."""
    return f"{code}, rounded to the {minor_unit(code)}."


MIXED = "the worlds' currencies"  # what several worlds of different currencies are counted in


def common_currency(codes: Iterable[str]) -> str:
    """The one currency of several runs or worlds, or `MIXED` when they differ (or there are none)."""
    found = sorted(set(codes))
    return found[0] if len(found) == 1 else MIXED


def fill_text(text: str, words: dict[str, str]) -> str:
    """`text` with each placeholder `{key}` of `words` replaced by its value (other braces are left alone)."""
    if "{" not in text:
        return text
    for key, value in words.items():
        text = text.replace("{" + key + "}", value)
    return text


def fill_money(value: Any, words: dict[str, str]) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with the placeholders of `words` filled in every string."""
    if isinstance(value, str):
        return fill_text(value, words)
    if isinstance(value, dict):
        return {fill_text(k, words) if isinstance(k, str) else k: fill_money(v, words) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_money(v, words) for v in value]
    if isinstance(value, tuple):
        return tuple(fill_money(v, words) for v in value)
    return value
