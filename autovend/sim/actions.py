"""The agent's actions (`Actions`): orders, prices and discards (remote), restock, reduce and delist (physical).

Every action takes a list of item dicts and returns a `BatchResult`: items are checked one by one,
in order, against the state left by the items before; a rejected item changes nothing and triggers
no visit. Physical actions need a working day; each machine they touch pays one visit at the close.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autovend.sim import inline, supply
from autovend.sim import inventory as inv
from autovend.sim.accounting import Accounts
from autovend.sim.facts import WorldFacts
from autovend.sim.items import ItemError, as_mapping, field_repr, parse_price_fen, parse_qty
from autovend.sim.money import from_fen
from autovend.sim.recorder import Recorder
from autovend.sim.results import Accepted, BatchResult, Rejected
from autovend.sim.state import SimState

PHYSICAL_ACTIONS = ("restock", "reduce", "delist")

Detail = dict[str, Any]  # what an accepted item did (the `detail` of `Accepted`)


class Actions:
    """Carries out the agent's actions on the state of a run, with their money and records."""

    def __init__(self, facts: WorldFacts, state: SimState, accounts: Accounts, recorder: Recorder) -> None:
        self._facts = facts
        self._state = state
        self._accounts = accounts
        self._recorder = recorder

    # ------------------------------------------------------------------ remote actions

    def place_order(self, items: Sequence[Any]) -> BatchResult:
        """Order warehouse stock: items {sku_id, qty, supplier_id?}; cash is debited at once."""
        if self._state.done or not isinstance(items, list) or not self._facts.plain_orders:
            return self._batch("place_order", items, self._order_one)
        return inline.place_order(self._facts, self._state, self._accounts, self._recorder, items, self._order_one)

    def _order_one(self, item: Mapping[str, Any]) -> Detail:
        f, s = self._facts, self._state
        k = self._sku(item)
        qty = parse_qty(item)
        supplier = item.get("supplier_id")
        default = f.world.economics.default_supplier
        terms = f.suppliers.get(default if supplier is None else supplier) if isinstance(supplier, str | None) else None
        if terms is None:
            if len(f.suppliers) == 1:
                fix = f"use {default!r} or omit it"
            else:
                fix = f"use one of {', '.join(repr(x) for x in f.suppliers)} or omit it for {default!r}"
            raise ItemError("unknown_supplier", f"supplier_id {field_repr(supplier)} does not exist; {fix}")
        oid = s.next_order_id
        s.next_order_id += 1
        plan = supply.schedule(terms, f.conditions, s.seed, oid, s.day, qty)
        premium = 0 if terms.premium_fen is None else int(terms.premium_fen[k])
        order = inv.Order(
            order_id=oid,
            k=k,
            qty=qty,
            unit_cost_fen=int(f.cost_fen[k]),
            supplier_id=terms.supplier_id,
            placed_day=s.day,
            eta_day=s.day + terms.promised_days,
            arrival_day=plan.arrival_day,
            split_qty=plan.split_qty,
            rest_day=plan.rest_day,
            premium_fen=premium,
        )
        s.orders[oid] = order
        s.pending.setdefault(order.arrival_day, []).append(oid)
        if plan.split_qty:
            s.pending.setdefault(plan.rest_day, []).append(oid)
        cost = qty * order.unit_cost_fen
        self._accounts.charge("purchase", cost, f"order {oid}")
        self._accounts.move_stock_value("purchase", cost, f"order {oid}")
        if premium:
            self._accounts.charge(supply.PREMIUM_KIND, qty * premium, f"order {oid}")
        s.ordered[k] += qty
        s.transit_q[k] += qty
        self._recorder.order(order, plan.lead)
        detail: Detail = {
            "order_id": oid,
            "sku_id": f.sku_ids[k],
            "qty": qty,
            "unit_cost": from_fen(order.unit_cost_fen),
            "total_cost": from_fen(cost + qty * premium),
            "eta_day": order.eta_day,
            "eta_date": f.days.date_str(order.eta_day),
        }
        if terms.supplier_id != default:
            detail["supplier_id"] = terms.supplier_id
            detail["unit_price"] = from_fen(order.unit_cost_fen + premium)
            detail["premium"] = from_fen(qty * premium)
        return detail

    def adjust_price(self, items: Sequence[Any]) -> BatchResult:
        """Set prices per machine and SKU: items {device_id, sku_id, price}, within the price band."""
        if self._state.done or not isinstance(items, list):
            return self._batch("adjust_price", items, self._price_one)
        return inline.adjust_price(self._facts, self._state, self._recorder, items, self._price_one)

    def _price_one(self, item: Mapping[str, Any]) -> Detail:
        f, s = self._facts, self._state
        m = self._device(item)
        k = self._sku(item)
        p = parse_price_fen(item, f.world.economics.currency)
        lo, hi = int(f.price_lo_fen[k]), int(f.price_hi_fen[k])
        if not lo <= p <= hi:
            a, b = f.world.economics.price_band
            ref = from_fen(int(f.ref_fen[k]))
            raise ItemError(
                "price_out_of_band",
                f"price {from_fen(p):.2f} of {f.sku_ids[k]} is outside "
                f"{from_fen(lo):.2f}-{from_fen(hi):.2f} "
                f"({a} to {b} x the reference price {ref:.2f}); pick a price in that range",
            )
        old = int(s.price_fen[m, k])
        if p != old:
            s.price_fen[m, k] = p
            self._recorder.price_change(s.day, m, k, old, p)
        return {
            "device_id": f.device_ids[m],
            "sku_id": f.sku_ids[k],
            "old_price": from_fen(old),
            "new_price": from_fen(p),
            "changed": p != old,
        }

    def discard(self, items: Sequence[Any]) -> BatchResult:
        """Destroy warehouse units: items {sku_id, qty}, earliest-expiring first."""
        return self._batch("discard", items, self._discard_one)

    def _discard_one(self, item: Mapping[str, Any]) -> Detail:
        f, s = self._facts, self._state
        k = self._sku(item)
        qty = parse_qty(item)
        have = int(s.wh_q[k])
        if qty > have:
            raise ItemError(
                "insufficient_stock",
                f"the warehouse holds {have} units of {f.sku_ids[k]}; discard at most {have}",
            )
        parts = self._take_warehouse(k, qty)
        unexpired, expired = inv.split_expired(parts, s.day)
        loss = unexpired * int(f.cost_fen[k])
        s.discarded[k] += qty
        s.day_discard_fen += loss
        if loss:
            self._accounts.move_stock_value("discard", -loss, f.sku_ids[k])
        self._recorder.discard(s.day, k, qty, expired, loss)
        return {
            "sku_id": f.sku_ids[k],
            "qty": qty,
            "expired_qty": expired,
            "cost_written_off": from_fen(loss),
        }

    # ------------------------------------------------------------------ physical actions

    def restock(self, items: Sequence[Any]) -> BatchResult:
        """Move warehouse units onto a shelf: items {device_id, sku_id, qty}; working days only."""
        s = self._state
        f = self._facts
        if s.done or not isinstance(items, list) or not f.days.is_workday(s.day) or f.conditions.breakdowns:
            return self._batch("restock", items, self._restock_one, physical=True)
        return inline.restock(self._facts, self._state, self._recorder, items, self._restock_one)

    def _restock_one(self, item: Mapping[str, Any]) -> Detail:
        f, s = self._facts, self._state
        m = self._device(item)
        k = self._sku(item)
        qty = parse_qty(item)
        broken = f.conditions.broken(f.device_ids[m], s.day) if f.conditions.breakdowns else None
        if broken is not None:
            raise ItemError(
                "machine_out_of_order",
                f"{f.device_ids[m]} is out of order until day {broken.last_day} ({f.days.date_str(broken.last_day)}): "
                f"it cannot be restocked before day {broken.last_day + 1} (reduce and delist still work)",
            )
        have = int(s.wh_q[k])
        if qty > have:
            raise ItemError(
                "insufficient_stock",
                f"the warehouse holds {have} units of {f.sku_ids[k]}; order more or restock at most {have}",
            )
        on_shelf = int(s.shelf_n[m])
        cap = f.capacity_units[m]
        if qty > cap - on_shelf:
            raise ItemError(
                "capacity_exceeded",
                f"{f.device_ids[m]} holds {on_shelf} of {cap} units; restock at most {cap - on_shelf} "
                "(or reduce/delist other products to make room)",
            )
        parts = self._take_warehouse(k, qty)
        inv.add(s.shelves.setdefault((m, k), []), parts)
        s.shelf_book.add_parts(parts, f.unit_cost[k])
        units = int(s.shelf_q[m, k]) + qty
        s.shelf_q[m, k] = units
        s.shelf_n[m] = on_shelf + qty
        expired = inv.split_expired(parts, s.day)[1] if parts[0][0] <= s.day else 0
        self._visit(m, k, "restock", qty, expired)
        return {
            "device_id": f.device_ids[m],
            "sku_id": f.sku_ids[k],
            "qty": qty,
            "expired_qty": expired,
            "shelf_units": units,
        }

    def reduce(self, items: Sequence[Any]) -> BatchResult:
        """Return shelf units to the warehouse: items {device_id, sku_id, qty}, earliest-expiring first."""
        return self._batch("reduce", items, self._reduce_one, physical=True)

    def _reduce_one(self, item: Mapping[str, Any]) -> Detail:
        f = self._facts
        m = self._device(item)
        k = self._sku(item)
        qty = parse_qty(item)
        have = int(self._state.shelf_q[m, k])
        if qty > have:
            raise ItemError(
                "insufficient_shelf_stock",
                f"{f.device_ids[m]} holds {have} units of {f.sku_ids[k]}; reduce at most {have} (or delist it)",
            )
        return self._unshelve(m, k, qty, "reduce")

    def delist(self, items: Sequence[Any]) -> BatchResult:
        """Return all shelf units of a product to the warehouse: items {device_id, sku_id}."""
        return self._batch("delist", items, self._delist_one, physical=True)

    def _delist_one(self, item: Mapping[str, Any]) -> Detail:
        f = self._facts
        m = self._device(item)
        k = self._sku(item)
        have = int(self._state.shelf_q[m, k])
        if have == 0:
            raise ItemError("not_on_shelf", f"{f.device_ids[m]} holds no unit of {f.sku_ids[k]}; nothing to delist")
        return self._unshelve(m, k, have, "delist")

    def _unshelve(self, m: int, k: int, qty: int, kind: str) -> Detail:
        f, s = self._facts, self._state
        parts = inv.take(s.shelves[(m, k)], qty)
        if not s.shelves[(m, k)]:
            del s.shelves[(m, k)]
        inv.add(s.warehouse.setdefault(k, []), parts)
        s.shelf_book.remove_parts(parts, f.unit_cost[k])
        s.wh_book.add_parts(parts, f.unit_cost[k])
        s.wh_q[k] += qty
        s.shelf_q[m, k] -= qty
        s.shelf_n[m] -= qty
        _, expired = inv.split_expired(parts, s.day)
        self._visit(m, k, kind, qty, expired)
        return {
            "device_id": f.device_ids[m],
            "sku_id": f.sku_ids[k],
            "qty": qty,
            "expired_qty": expired,
            "shelf_units": int(s.shelf_q[m, k]),
        }

    def _take_warehouse(self, k: int, qty: int) -> inv.Parts:
        s = self._state
        parts = inv.take(s.warehouse[k], qty)
        if not s.warehouse[k]:
            del s.warehouse[k]
        s.wh_q[k] -= qty
        s.wh_book.remove_parts(parts, self._facts.unit_cost[k])
        return parts

    def _visit(self, m: int, k: int, kind: str, qty: int, expired: int) -> None:
        s = self._state
        s.touched[m] = s.touched.get(m, 0) + 1
        s.last_visit[m] = s.day
        self._recorder.shelf_event(s.day, m, k, kind, qty, expired)

    def _not_workday(self) -> ItemError:
        """The rejection of every physical item on a day off."""
        f, d = self._facts, self._state.day
        info = f.days.info(d)
        why = f"a {info.day_type}" + (f" ({info.holiday_name})" if info.holiday_name else "")
        nxt = f.days.next_workday(d)
        when = f"the next working day is day {nxt} ({f.world.date_of(nxt)})" if nxt else "no working day follows"
        return ItemError("not_workday", f"day {d} ({info.date}) is {why}, staff make no site visits; {when}")

    # ------------------------------------------------------------------ item plumbing

    def _device(self, item: Mapping[str, Any]) -> int:
        f = self._facts
        v = item.get("device_id")
        m = f.device_index.get(v) if isinstance(v, str) else None
        if m is None:
            raise ItemError(
                "unknown_device",
                f"device_id {field_repr(item.get('device_id'))} is not one of the {f.n_machines} machines "
                f"(e.g. {f.device_ids[0]!r}); check the device list",
            )
        return m

    def _sku(self, item: Mapping[str, Any]) -> int:
        f = self._facts
        v = item.get("sku_id")
        k = f.sku_index.get(v) if isinstance(v, str) else None
        if k is None:
            raise ItemError(
                "unknown_sku",
                f"sku_id {field_repr(item.get('sku_id'))} is not in the catalog (e.g. {f.sku_ids[0]!r}); "
                "search the catalog for valid ids",
            )
        return k

    def _batch(
        self,
        action: str,
        items: Sequence[Any],
        one: Callable[[Mapping[str, Any]], Detail],
        *,
        physical: bool = False,
    ) -> BatchResult:
        """Check and carry out items one by one; collect accepted and rejected items."""
        s = self._state
        s.check_open(self._facts.horizon_days)
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
            raise TypeError(f"{action} takes a list of item dicts, got {type(items).__name__}")
        day_off = self._not_workday() if physical and not self._facts.days.is_workday(s.day) else None
        accepted: list[Accepted] = []
        rejected: list[Rejected] = []
        for i, raw in enumerate(items):
            is_map = type(raw) is dict or isinstance(raw, Mapping)
            try:
                if not is_map:
                    as_mapping(raw)  # raises invalid_item
                if day_off is not None:
                    raise ItemError(day_off.code, day_off.message)
                detail = one(raw)
            except ItemError as err:
                rejected.append(Rejected(i, dict(raw) if is_map else raw, err.code, err.message))
            else:
                accepted.append(Accepted(i, dict(raw), detail))
        self._recorder.flush()
        return BatchResult(action, s.day, tuple(accepted), tuple(rejected))
