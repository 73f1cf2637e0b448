"""The words of a world's money: the minor unit by ISO code, placeholders filled, one currency of several runs."""

from __future__ import annotations

from autovend.currency import MIXED, common_currency, fill_money, minor_unit, money_note, money_words


def test_the_minor_unit_by_iso_code_with_a_default():
    assert [minor_unit(c) for c in ("CNY", "USD", "UAH", "usd")] == ["fen", "cent", "kopiyka", "cent"]
    assert [minor_unit(c, plural=True) for c in ("CNY", "USD", "UAH", "GBP")] == ["fen", "cents", "kopiykas", "pence"]
    assert minor_unit("XAF") == "hundredth" and minor_unit("XAF", plural=True) == "hundredths"
    assert money_note("UAH") == "UAH, rounded to the kopiyka."


def test_placeholders_are_filled_in_every_string_and_other_braces_stay():
    schema = {
        "description": "Price in {currency}, to the {minor_unit}; {n} items",
        "items": [{"description": "{minor_units} of {currency}"}, 3, None],
        "{currency}": ("{currency}",),
    }
    filled = fill_money(schema, money_words("USD"))
    assert filled == {
        "description": "Price in USD, to the cent; {n} items",
        "items": [{"description": "cents of USD"}, 3, None],
        "USD": ("USD",),
    }
    assert schema["description"].startswith("Price in {currency}")  # the template is not changed


def test_one_currency_for_several_runs():
    assert common_currency(["USD", "USD"]) == "USD"
    assert common_currency(["USD", "UAH"]) == MIXED == common_currency([])
