"""The price table: the shipped file, matching model names, the cost arithmetic, bad tables."""

from __future__ import annotations

from pathlib import Path

import pytest

import autovend
from autovend.agents.llm.pricing import DEFAULT_PRICES, Price, load_price_table, parse_price_table
from autovend.errors import ConfigError


def test_cost_arithmetic():
    p = Price(input=2.0, cached_input=0.5, output=8.0, entry="x")
    # 10,000 input of which 6,000 cached, 800 output: (4,000 * 2.0 + 6,000 * 0.5 + 800 * 8.0) / 1e6
    assert p.cost(10_000, 6_000, 800) == pytest.approx((8_000 + 3_000 + 6_400) / 1e6) == pytest.approx(0.0174)
    assert p.cost(100, 500, 0) == pytest.approx(100 * 0.5 / 1e6)  # cached can never exceed input


def test_the_shipped_table():
    table = load_price_table()
    assert DEFAULT_PRICES.name == "prices.yaml" and table.as_of
    assert DEFAULT_PRICES.parent == Path(autovend.__file__).parent / "agents" / "llm"  # package data, no checkout
    assert table.price("gpt-4.1-mini") == Price(0.4, 0.1, 1.6, "gpt-4.1-mini")
    assert table.price("openai/gpt-4.1-mini").entry == "gpt-4.1-mini"  # a router's provider prefix
    assert table.price("GPT-4o").entry == "gpt-4o"  # case does not matter
    local = table.price("qwen2.5:7b")
    assert (local.entry, local.input, local.output) == ("default", 0.0, 0.0)


def test_globs_longest_match_and_default_cached_price():
    table = parse_price_table(
        {
            "models": {
                "default": {"input": 1.0, "output": 1.0},
                "acme-*": {"input": 3.0, "output": 9.0},
                "acme-mini*": {"input": 0.3, "output": 0.9},
                "acme-large": {"input": 5.0, "cached_input": 1.0, "output": 15.0},
            }
        }
    )
    assert table.price("acme-large").entry == "acme-large"  # exact before globs
    assert table.price("acme-mini-2025").entry == "acme-mini*"  # the longest glob
    assert table.price("acme-medium").entry == "acme-*"
    assert table.price("acme-medium").cached_input == 3.0  # no cached price: the input price
    assert table.price("other").entry == "default"


@pytest.mark.parametrize(
    "data,text",
    [
        pytest.param({"models": {"m": {"input": 1.0}}}, "needs input and output", id="no-output"),
        pytest.param({"models": {"m": {"input": -1.0, "output": 1.0}}}, "negative price", id="negative"),
        pytest.param({"models": {"m": {"input": "cheap", "output": 1.0}}}, "must be numbers", id="text"),
        pytest.param({"currency": "CNY", "models": {}}, "must be in USD", id="currency"),
        pytest.param({"unit_tokens": 0, "models": {}}, "unit_tokens must be a positive integer", id="unit"),
        pytest.param({"prices": {}}, "a 'models' mapping", id="no-models"),
    ],
)
def test_bad_tables(data, text):
    with pytest.raises(ConfigError, match=text):
        parse_price_table(data)


def test_no_entry_and_no_default():
    table = parse_price_table({"models": {"a": {"input": 1.0, "output": 1.0}}})
    with pytest.raises(ConfigError, match="has no price .* and there is no 'default' entry"):
        table.price("b")


def test_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the price table"):
        load_price_table(tmp_path / "missing.yaml")
