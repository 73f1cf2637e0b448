"""Reading the fields of one action item without ever raising: each helper returns a value or a rejection."""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral
from typing import Any

from autovend.sim.money import to_fen

MAX_ITEM_QTY = 1_000_000  # units; larger quantities in one item are rejected (qty_too_large)


class ItemError(Exception):
    """An item breaks a rule: `code` is one of `REJECTION_CODES`, the message tells how to fix it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def as_mapping(item: Any) -> Mapping[str, Any]:
    """The item itself if it is a mapping, else ItemError(invalid_item)."""
    if not isinstance(item, Mapping):
        raise ItemError("invalid_item", f"each item must be an object with named fields, got {type(item).__name__}")
    return item


def field_repr(value: Any, limit: int = 60) -> str:
    """A short printable form of a user value for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_qty(item: Mapping[str, Any], what: str = "qty") -> int:
    """A positive integer quantity (int or numpy integer, not bool) up to MAX_ITEM_QTY."""
    if "qty" not in item:
        raise ItemError("invalid_qty", f"the item has no qty; give {what} as a positive integer")
    qty = item["qty"]
    if type(qty) is int and 0 < qty <= MAX_ITEM_QTY:  # the common case, fast
        return qty
    if isinstance(qty, bool) or not isinstance(qty, Integral):
        raise ItemError("invalid_qty", f"qty must be a positive integer, got {field_repr(qty)}")
    n = int(qty)
    if n <= 0:
        raise ItemError("invalid_qty", f"qty must be a positive integer, got {n}")
    if n > MAX_ITEM_QTY:
        raise ItemError("qty_too_large", f"qty {n} exceeds the per-item limit of {MAX_ITEM_QTY}; split it")
    return n


def parse_price_fen(item: Mapping[str, Any], currency: str) -> int:
    """The price in hundredths, rounded half-up from the number given (int, float, Decimal; not bool or str).

    `currency`: the world's, named in the refusal.
    """
    if "price" not in item:
        raise ItemError("invalid_price", f"the item has no price; give it in {currency} as a number, e.g. 3.5")
    try:
        return to_fen(item["price"])
    except (TypeError, ValueError):
        raise ItemError(
            "invalid_price", f"price must be a finite number in {currency}, got {field_repr(item['price'])}"
        ) from None
