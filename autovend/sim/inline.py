"""The common item of restock, adjust_price and place_order carried out inline (the batch loops of `Actions`).

Each function goes through a list of items in order, as `Actions._batch` does: an item that is a
plain dict with known ids, an int qty (or a float price) and what it asks for at hand is carried out
here, with the same state changes, records and result as item by item; any other item goes through
the action's own one-item method (`one`), which rejects it with its code and message or carries it
out. Callers send here only lists, on an open day (and, for restock, a working day).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from autovend.sim import inventory as inv
from autovend.sim.accounting import Accounts
from autovend.sim.facts import WorldFacts
from autovend.sim.items import MAX_ITEM_QTY, ItemError, as_mapping
from autovend.sim.money import from_fen, to_fen
from autovend.sim.recorder import Recorder
from autovend.sim.results import Accepted, BatchResult, Rejected
from autovend.sim.state import SimState

Detail = dict[str, Any]
OneItem = Callable[[Mapping[str, Any]], Detail]


def _long_way(i: int, raw: Any, one: OneItem, accepted: list[Accepted], rejected: list[Rejected]) -> None:
    """Item i through the action's one-item method, as `Actions._batch` does it."""
    is_map = type(raw) is dict or isinstance(raw, Mapping)
    try:
        if not is_map:
            as_mapping(raw)  # raises invalid_item
        detail = one(raw)
    except ItemError as err:
        rejected.append(Rejected(i, dict(raw) if is_map else raw, err.code, err.message))
    else:
        accepted.append(Accepted(i, dict(raw), detail))


def restock(f: WorldFacts, s: SimState, recorder: Recorder, items: list[Any], one: OneItem) -> BatchResult:
    """`Actions.restock` on a working day.

    The inline items' shelf-event rows, expiry books and machines' last visits are booked at the end
    of the batch, or before any item that goes the long way.
    """
    d = s.day
    dev_index, sku_index, cap_units, unit_cost = f.device_index, f.sku_index, f.capacity_units, f.unit_cost
    device_ids, sku_ids = f.device_ids, f.sku_ids
    wh_q, shelf_q, shelf_n, warehouse, shelves, touched = (
        s.wh_q,
        s.shelf_q,
        s.shelf_n,
        s.warehouse,
        s.shelves,
        s.touched,
    )
    moved: dict[int, list[int]] = {}  # expiry day -> [units, cost] moved from the warehouse to the shelves
    events: list[tuple[Any, ...]] = []  # shelf_events rows
    visited: set[int] = set()
    accepted: list[Accepted] = []
    rejected: list[Rejected] = []

    def book() -> None:
        for e, (n, c) in moved.items():
            s.wh_book.remove(e, n, c)
            s.shelf_book.add(e, n, c)
        moved.clear()
        if events:
            recorder.records.insert("shelf_events", events)
            events.clear()
        if visited:
            s.last_visit[sorted(visited)] = d
            visited.clear()

    for i, raw in enumerate(items):
        if type(raw) is dict:
            v, w, qty = raw.get("device_id"), raw.get("sku_id"), raw.get("qty")
            m = dev_index.get(v) if type(v) is str else None
            k = sku_index.get(w) if type(w) is str else None
            if m is not None and k is not None and type(qty) is int and 0 < qty <= MAX_ITEM_QTY:
                on_shelf = int(shelf_n[m])
                if qty <= int(wh_q[k]) and qty <= cap_units[m] - on_shelf:
                    wb = warehouse[k]
                    front = wb[0]
                    if front[1] > qty:  # the front batch covers the restock
                        front[1] -= qty
                        parts: inv.Parts = [(front[0], qty)]
                    else:
                        parts = inv.take(wb, qty)
                        if not wb:
                            del warehouse[k]
                    wh_q[k] -= qty
                    sb = shelves.get((m, k))
                    if sb is None:
                        shelves[(m, k)] = [[e, q] for e, q in parts]
                    else:
                        inv.add(sb, parts)
                    uc = unit_cost[k]
                    for e, q in parts:
                        got = moved.get(e)
                        if got is None:
                            moved[e] = [q, q * uc]
                        else:
                            got[0] += q
                            got[1] += q * uc
                    units = int(shelf_q[m, k]) + qty
                    shelf_q[m, k] = units
                    shelf_n[m] = on_shelf + qty
                    expired = inv.split_expired(parts, d)[1] if parts[0][0] <= d else 0
                    touched[m] = touched.get(m, 0) + 1
                    visited.add(m)
                    events.append((d, device_ids[m], sku_ids[k], "restock", qty, expired))
                    detail = {
                        "device_id": device_ids[m],
                        "sku_id": sku_ids[k],
                        "qty": qty,
                        "expired_qty": expired,
                        "shelf_units": units,
                    }
                    accepted.append(Accepted(i, dict(raw), detail))
                    continue
        book()  # the items before are booked before this one goes the long way
        _long_way(i, raw, one, accepted, rejected)
    book()
    recorder.flush()
    return BatchResult("restock", d, tuple(accepted), tuple(rejected))


def adjust_price(f: WorldFacts, s: SimState, recorder: Recorder, items: list[Any], one: OneItem) -> BatchResult:
    """`Actions.adjust_price`; inline: a float price within the band."""
    d = s.day
    dev_index, sku_index, device_ids, sku_ids = f.device_index, f.sku_index, f.device_ids, f.sku_ids
    lo_fen, hi_fen = f.price_lo_fen, f.price_hi_fen
    price_fen = s.price_fen
    accepted: list[Accepted] = []
    rejected: list[Rejected] = []
    for i, raw in enumerate(items):
        if type(raw) is dict:
            v, w, p = raw.get("device_id"), raw.get("sku_id"), raw.get("price")
            m = dev_index.get(v) if type(v) is str else None
            k = sku_index.get(w) if type(w) is str else None
            if m is not None and k is not None and type(p) is float and -1e9 < p < 1e9:  # finite, fits in fen
                fen = to_fen(p)
                if int(lo_fen[k]) <= fen <= int(hi_fen[k]):
                    old = int(price_fen[m, k])
                    if fen != old:
                        price_fen[m, k] = fen
                        recorder.price_change(d, m, k, old, fen)
                    detail = {
                        "device_id": device_ids[m],
                        "sku_id": sku_ids[k],
                        "old_price": from_fen(old),
                        "new_price": from_fen(fen),
                        "changed": fen != old,
                    }
                    accepted.append(Accepted(i, dict(raw), detail))
                    continue
        _long_way(i, raw, one, accepted, rejected)
    recorder.flush()
    return BatchResult("adjust_price", d, tuple(accepted), tuple(rejected))


def place_order(
    f: WorldFacts, s: SimState, accounts: Accounts, recorder: Recorder, items: list[Any], one: OneItem
) -> BatchResult:
    """`Actions.place_order`; inline: no supplier or the default one.

    The units ordered and in transit of the inline items are booked at the end of the batch (the
    one-item method does not read them).
    """
    d = s.day
    sku_index, sku_ids, unit_cost = f.sku_index, f.sku_ids, f.unit_cost
    default = f.world.economics.default_supplier
    eta = d + f.world.economics.lead_time_nominal_days
    eta_date = f.days.date_str(eta)
    ordered: dict[int, int] = {}  # product -> units ordered inline
    accepted: list[Accepted] = []
    rejected: list[Rejected] = []
    for i, raw in enumerate(items):
        if type(raw) is dict:
            w, qty, supplier = raw.get("sku_id"), raw.get("qty"), raw.get("supplier_id")
            k = sku_index.get(w) if type(w) is str else None
            if (
                k is not None
                and type(qty) is int
                and 0 < qty <= MAX_ITEM_QTY
                and (supplier is None or (type(supplier) is str and supplier == default))
            ):
                oid = s.next_order_id
                s.next_order_id += 1
                lead = inv.lead_time(s.seed, oid, f.leads, f.lead_cdf)
                uc = unit_cost[k]
                order = inv.Order(
                    order_id=oid,
                    k=k,
                    qty=qty,
                    unit_cost_fen=uc,
                    supplier_id=default,
                    placed_day=d,
                    eta_day=eta,
                    arrival_day=d + lead,
                )
                s.orders[oid] = order
                s.pending.setdefault(order.arrival_day, []).append(oid)
                cost = qty * uc
                ref = f"order {oid}"
                accounts.charge("purchase", cost, ref)
                accounts.move_stock_value("purchase", cost, ref)
                ordered[k] = ordered.get(k, 0) + qty
                recorder.order(order, lead)
                detail = {
                    "order_id": oid,
                    "sku_id": sku_ids[k],
                    "qty": qty,
                    "unit_cost": from_fen(uc),
                    "total_cost": from_fen(cost),
                    "eta_day": eta,
                    "eta_date": eta_date,
                }
                accepted.append(Accepted(i, dict(raw), detail))
                continue
        _long_way(i, raw, one, accepted, rejected)
    for k, qty in ordered.items():
        s.ordered[k] += qty
        s.transit_q[k] += qty
    recorder.flush()
    return BatchResult("place_order", d, tuple(accepted), tuple(rejected))
