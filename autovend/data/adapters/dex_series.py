"""A series of EVA-DTS audits per machine into a source: sales between audits per selection and price, and visits.

    adapt_dex(audits, products, meta)  -> DexSource (the source's tables, the visits, what the checks found)

Per machine, consecutive audits give each selection's vends and their value between two reads (the counters are
cumulative). A DEX series does not know on which day of an interval a sale was made: the interval's vends are
spread over its days in proportion to the hours of the interval each day holds (largest remainders, earlier days
first on a tie), one order line per machine, product and day, at the interval's mean price (value / vends). The
read days are the service visits (`visits`: no counts, so no inventory table). Plausibility, each refusal in
words (`AdaptError`): one currency per machine; strictly increasing read times; counters that never fall (a
re-initialised machine starts a new series); at most `max_vends_per_day` vends of a selection a day; every product
id in the operator's products table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from autovend.data.adapters.dex import Audit, Selection
from autovend.errors import AdaptError

MAX_VENDS_PER_DAY = 500  # vends of one selection a day above this: a misread counter


@dataclass(frozen=True)
class DexSource:
    """The tables of the source, the visits (machine_id, ts) and counts of what the checks found."""

    source: dict[str, object]
    machines: pd.DataFrame
    products: pd.DataFrame
    orders: pd.DataFrame
    visits: pd.DataFrame
    notes: tuple[str, ...]


def spread(units: int, start: pd.Timestamp, end: pd.Timestamp) -> list[tuple[str, int]]:
    """`units` over the days of (start, end], in proportion to the hours each day holds: [(date, units), ...]."""
    days = pd.date_range(start.normalize(), end.normalize(), freq="D")
    total = (end - start).total_seconds()
    if total <= 0:
        return [(end.date().isoformat(), units)]
    shares = []
    for d in days:
        lo, hi = max(start, d), min(end, d + pd.Timedelta(days=1))
        shares.append(max(0.0, (hi - lo).total_seconds()) / total * units)
    base = [math.floor(s) for s in shares]
    order = sorted(range(len(days)), key=lambda i: (-(shares[i] - base[i]), i))
    for i in order[: units - sum(base)]:
        base[i] += 1
    return [(d.date().isoformat(), n) for d, n in zip(days, base, strict=True) if n > 0]


def _intervals(audits: list[Audit], max_per_day: int) -> tuple[list[dict[str, object]], list[str]]:
    """Order lines of one machine's series (sorted by read time) and notes; AdaptError on an implausible series."""
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    for i, (a, b) in enumerate(zip(audits, audits[1:], strict=False), start=1):
        if b.read_at <= a.read_at:
            raise AdaptError(
                f"{b.file}: machine {b.machine} is read at {b.read_at} and, in {a.file}, at {a.read_at}: two audits "
                "at one time, or out of order; leave the duplicate out"
            )
        if (a.currency or b.currency) and a.currency != b.currency:
            raise AdaptError(f"{b.file}: machine {b.machine} changes currency ({a.currency} to {b.currency})")
        start, end = pd.Timestamp(a.read_at), pd.Timestamp(b.read_at)
        days = max((end - start).total_seconds() / 86400, 1 / 24)
        for sel, now in sorted(b.selections.items()):
            before = a.selections.get(sel, Selection(sel, now.price, now.product, 0, 0, 0))
            vends, value = now.vends - before.vends, now.value - before.value
            if vends < 0 or value < 0:
                raise AdaptError(
                    f"{b.file} line {now.line}: selection {sel} of machine {b.machine} fell from {before.vends} vends "
                    f"(value {before.value}) at {a.read_at} to {now.vends} ({now.value}): the machine was "
                    "re-initialised between the reads; start a new series there (adapt the audits before and after "
                    "apart) or leave the audit out"
                )
            if vends == 0:
                continue
            if vends / days > max_per_day:
                raise AdaptError(
                    f"{b.file} line {now.line}: selection {sel} of machine {b.machine} sold {vends} in "
                    f"{days:.1f} days, over {max_per_day} a day: a misread counter? Correct or leave out the audit"
                )
            product = before.product or now.product
            if before.product and now.product and before.product != now.product:
                notes.append(f"machine {b.machine} selection {sel}: {before.product} -> {now.product} at {b.read_at}")
            if not product:
                raise AdaptError(f"{b.file} line {now.line}: selection {sel} names no product (PA103)")
            price = round(value / vends) if value else before.price
            for date, qty in spread(vends, start, end):
                rows.append(
                    {"order_id": f"{b.machine}-{i:04d}-{sel}-{date}", "machine_id": b.machine, "sku_id": product,
                     "ts": date, "qty": qty, "unit_price_minor": price, "status": "completed"}
                )  # fmt: skip
    return rows, notes


def adapt_dex(
    audits: list[Audit],
    products: pd.DataFrame,
    meta: dict[str, object],
    machines: pd.DataFrame | None = None,
    max_vends_per_day: int = MAX_VENDS_PER_DAY,
) -> DexSource:
    """The source of `audits` (sorted by machine and time): see the module docstring.

    products: the operator's table of product ids (sku_id, category_l1, category_l2, and optionally name,
    ref_price, unit_cost, shelf_life_days); machines: optional (machine_id, site_type, location, capacity);
    meta: source.yaml's name, timezone, country, description (currency from the audits' ID4 unless given).
    """
    by_machine: dict[str, list[Audit]] = {}
    for a in audits:
        by_machine.setdefault(a.machine, []).append(a)
    decimals = {a.decimals for a in audits}
    if len(decimals) != 1:
        raise AdaptError(f"the audits give {sorted(decimals)} decimal places (ID401); one source takes one currency")
    scale = 10 ** decimals.pop()
    currencies = {a.currency for a in audits if a.currency}
    currency = str(meta.get("currency") or "")
    if not currency:
        if len(currencies) != 1:
            raise AdaptError(f"the audits name {sorted(currencies) or 'no'} currency (ID402); give --currency")
        currency = currencies.pop()
    rows: list[dict[str, object]] = []
    notes: list[str] = []
    for series in by_machine.values():
        got, said = _intervals(series, max_vends_per_day)
        rows += got
        notes += said
    if not rows:
        raise AdaptError("the audits show no sale between two reads of a machine: give at least two audits a machine")
    orders = pd.DataFrame(rows)
    orders["unit_price"] = orders.pop("unit_price_minor") / scale
    missing = sorted(set(orders["sku_id"]) - set(products["sku_id"].astype(str)))
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise AdaptError(
            f"the products table lacks the product ids the audits name (PA103): {shown}; add a row for each "
            "(sku_id, category_l1, category_l2)"
        )
    products = products[products["sku_id"].astype(str).isin(set(orders["sku_id"]))].copy()
    if "ref_price" not in products or products["ref_price"].isna().any():
        common = orders.groupby("sku_id")["unit_price"].agg(lambda s: s.mode().min())
        given = products["ref_price"] if "ref_price" in products else pd.Series(float("nan"), index=products.index)
        products["ref_price"] = given.fillna(products["sku_id"].map(common))
    machine_ids = sorted(by_machine)
    table = pd.DataFrame({"machine_id": machine_ids, "site_type": "unknown"})
    if machines is not None:
        table = table.drop(columns="site_type").merge(machines.astype({"machine_id": str}), on="machine_id", how="left")
        table["site_type"] = table["site_type"].fillna("unknown")
    visits = pd.DataFrame(
        [(a.machine, a.read_at.isoformat(timespec="minutes")) for a in audits], columns=["machine_id", "ts"]
    )
    first, last = min(a.read_at for a in audits).date(), max(a.read_at for a in audits).date()
    source = {
        "name": meta["name"],
        "currency": currency,
        "timezone": meta["timezone"],
        "country": meta["country"],
        "description": str(meta.get("description") or "")
        or f"EVA-DTS audits of {len(machine_ids)} machines read from {first} to {last} ({len(audits)} audits); sales "
        "between two reads are spread over the days of the interval (the audits do not know the day of a sale)",
    }
    if meta.get("made_to_order"):
        source["made_to_order"] = True
    return DexSource(source, table, products, orders, visits, tuple(notes))
