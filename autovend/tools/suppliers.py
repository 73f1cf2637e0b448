"""What the tools tell an agent of a world's conditions (`autovend.world.conditions`): its suppliers and notices.

A world as exported has one supplier and no notice: every text here is then what it always was (the place_order
description says "the only supplier", the prompts and results gain nothing). A world with more suppliers names
them in the place_order description and the system prompt, and get_catalog lists them (`supplier_rows`) with the
outage that holds their deliveries today, if any; the daily observation shows the notices of the day.
"""

from __future__ import annotations

from typing import Any

from autovend.world.model import World


def _terms(s: Any) -> str:
    return f"'{s.supplier_id}' ({s.price_factor:g} x the unit cost, delivery promised in {s.promised_days} days)"


def supplier_others(world: World) -> str:
    """The end of the place_order description's supplier sentence: ', the only supplier' or the other suppliers."""
    extra = world.conditions.suppliers
    if not extra:
        return ", the only supplier"
    return (
        "; the others are "
        + ", ".join(_terms(s) for s in extra)
        + ": the premium above the unit cost is a cost of the day, not stock value"
    )


def supplier_line(world: World) -> str:
    """The system prompt's sentence on other suppliers (empty for a world with one supplier)."""
    extra = world.conditions.suppliers
    if not extra:
        return ""
    return (
        " Besides the default supplier you may order from "
        + ", ".join(_terms(s) for s in extra)
        + " with place_order's supplier_id; stock counts at its unit cost, and what a supplier charges above it is a"
        " cost of the day."
    )


def supplier_rows(world: World, day: int) -> list[dict[str, Any]] | None:
    """get_catalog's `suppliers`: every supplier with its terms and today's outage (None for one supplier)."""
    cond, eco = world.conditions, world.economics
    if not cond.suppliers:
        return None
    rows: list[dict[str, Any]] = [
        {
            "supplier_id": eco.default_supplier,
            "price_factor": 1.0,
            "promised_days": int(eco.lead_time_nominal_days),
            "note": "the default supplier",
        }
    ]
    rows += [
        {"supplier_id": s.supplier_id, "price_factor": s.price_factor, "promised_days": s.promised_days, "note": s.note}
        for s in cond.suppliers
    ]
    for row in rows:
        held = [o for o in cond.outages if o.supplier_id == row["supplier_id"] and o.covers(day)]
        row["deliveries_held_until_day"] = max(o.last_day for o in held) if held else None
    return rows


def notices(world: World, day: int) -> list[str]:
    """The notices of `day` (the daily observation's `notices`, absent when there is none)."""
    return world.conditions.notices_on(day)
