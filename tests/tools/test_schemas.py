"""Messages for malformed arguments quote what the caller sent, and never more than a short prefix of it."""

from __future__ import annotations

import pytest

from autovend.tools.schemas import QUOTE_CHARS, clip, quote

from .conftest import fail

HUGE = "k" * 1_000_000
LARGE = "k" * 100_000  # within the arguments' limit of 131,072 characters (autovend.tools.guard)
LONG = "k" * 1_200  # 100 items of it fit in that limit


@pytest.mark.parametrize(
    "value,shown",
    [
        ("SKU0001", "'SKU0001'"),
        (True, "true"),
        (None, "null"),
        (2.5, "2.5"),
        ("x" * 60, "'" + "x" * 60 + "'"),
        ("x" * 61, "'" + "x" * 60 + "...' (61 characters)"),
        ("it's" * 20, '"' + ("it's" * 15) + '..." (80 characters)'),
        (list(range(100)), repr(list(range(100)))[:60] + "... (100 items)"),
    ],
)
def test_quote(value, shown):
    assert quote(value) == shown


def test_clip():
    assert QUOTE_CHARS == 60
    assert clip("CN_OFFICE_01") == "CN_OFFICE_01"
    assert clip(HUGE) == "k" * 60 + "... (1,000,000 characters)"
    assert clip("abcdef", 3) == "abc... (6 characters)"


def test_a_huge_unknown_key_or_value_is_quoted_not_echoed(session):
    msg = fail(session, "place_order", {"items": [{"sku_id": "SKU0001", "qty": 1, LARGE: 1}]})
    assert f"items[0].{'k' * 60}... (100,000 characters) is not a known field (allowed: sku_id, qty," in msg
    assert len(msg) < 400
    msg = fail(session, "place_order", {"items": [{"sku_id": "SKU0001", "qty": LONG}] * 100})
    assert f"items[0].qty must be a whole number (JSON integer), got '{'k' * 60}...' (1,200 characters)" in msg
    assert "; and 92 more" in msg and len(msg) < 8 * 200
    msg = fail(session, "get_device_detail", {"device_id": "CN_WORKSITE_01", LARGE: 1})
    assert f"{'k' * 60}... (100,000 characters) is not a known field" in msg and len(msg) < 400
    msg = fail(session, "get_device_detail", {"device_id": "CN_WORKSITE_01", HUGE: 1})  # over the limit
    assert "the arguments: 1,000,035 characters as JSON, over the limit of 131,072" in msg and len(msg) < 400
