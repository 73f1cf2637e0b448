"""Step 5, continued: serving one machine at a visit.

At a visit: units that would expire before the next visit come off (and are discarded), the
assortment is reviewed, dropped products still on the shelf are taken off when the carried ones
need their room, and the shelf is filled from the warehouse (never beyond stock or capacity, never
with units that would expire before the next service): first the carried products' expected
needs to the next visit, then a facing each of paid-for stock that no machine carries (it sells
rather than being thrown away), then the rest of the carried products' targets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from autovend.agents.baseline.assortment import review
from autovend.agents.baseline.calls import batched
from autovend.agents.baseline.observe import ShelfLine, read_shelf
from autovend.agents.baseline.state import IntArray, Memory
from autovend.agents.baseline.targets import fit_within, machine_targets
from autovend.agents.baseline.visits import machine_cycle, next_service
from autovend.sim import EXPIRING_WITHIN_DAYS

if TYPE_CHECKING:
    from autovend.agents.baseline.estimate import Estimates
    from autovend.session import ToolSession


@dataclass
class _Visit:
    """One visit to machine m on day d, as it goes."""

    m: int
    d: int
    device: str
    nxt: int  # the next service day
    long_gap: bool  # the next service is beyond the "expiring soon" window (holidays ahead)
    expiry: dict[int, int] = field(default_factory=dict)  # product -> earliest expiry day on the shelf after it
    soon: dict[int, int] = field(default_factory=dict)  # product -> its units on the shelf expiring soon
    delisted: list[int] = field(default_factory=list)  # products taken off the shelf entirely
    reduced: bool = False  # expiring units were taken off

    @property
    def unknown_expiry(self) -> int:
        """The earliest day units not counted as expiring soon can expire."""
        return self.d + EXPIRING_WITHIN_DAYS + 1


def returned(k: int, units: int, next_exp: int, d: int, avail: IntArray, wh_next_expiry: IntArray) -> None:
    """Book units taken off a shelf (none expiring soon) back into the warehouse (`avail`, `wh_next_expiry`).

    They may expire before the warehouse's other units: restocks take them first, so the warehouse's
    next expiry becomes theirs (or, when the shelf's earliest units were the soon-expiring ones, the
    first day they could expire).
    """
    if units <= 0:
        return
    avail[k] += units
    first = next_exp if next_exp > d + EXPIRING_WITHIN_DAYS else d + EXPIRING_WITHIN_DAYS + 1
    wh_next_expiry[k] = first if wh_next_expiry[k] <= 0 else min(int(wh_next_expiry[k]), first)


def serve(
    session: ToolSession, mem: Memory, m: int, d: int, est: Estimates, avail: IntArray, wh_next_expiry: IntArray
) -> None:
    """Serve machine m: take off expiring units, review the assortment, make room, fill to target.

    `avail` (usable warehouse units) and `wh_next_expiry` are updated with what goes out and comes back.
    """
    s = mem.s
    s.cycle[m] = machine_cycle(mem, est, m)
    nxt = next_service(mem, m, d, d, int(s.cycle[m]))
    v = _Visit(m=m, d=d, device=mem.st.device_ids[m], nxt=nxt, long_gap=nxt > d + EXPIRING_WITHIN_DAYS)
    _take_off_expiring(session, mem, v, read_shelf(session, mem, m), avail, wh_next_expiry)
    review(mem, est, m, d, avail)
    s.phase_out[m] &= s.shelf[m] > 0
    _make_room(session, mem, v, est, avail, wh_next_expiry)
    restocked = _fill(session, mem, v, est, avail, wh_next_expiry)
    if restocked or v.reduced or v.delisted:
        s.last_visit[m] = d
        if not s.first_visit[m] and restocked:
            s.first_visit[m] = d
    s.must_visit_by[m] = min(v.expiry.values(), default=0)


def _take_off_expiring(
    session: ToolSession,
    mem: Memory,
    v: _Visit,
    detail: list[ShelfLine],
    avail: IntArray,
    wh_next_expiry: IntArray,
) -> None:
    """Units that would expire before the next service come off and are thrown away.

    Before a long gap (holidays) the whole product comes off instead; its fresh units go back to the
    warehouse and can go out again.
    """
    s, st = mem.s, mem.st
    reduce_items: list[dict[str, Any]] = []
    delist_items: list[dict[str, Any]] = []
    waste: list[dict[str, Any]] = []
    for line in detail:
        k = line.k
        if line.expired == 0 and not (line.next_expiry and line.next_expiry <= v.nxt):
            if line.next_expiry:
                v.expiry[k] = line.next_expiry
            if line.expiring:
                v.soon[k] = line.expiring
            continue
        sku = st.sku_ids[k]
        stale = line.expired + line.expiring
        if not v.long_gap:
            qty = min(line.units, stale)
            reduce_items.append({"device_id": v.device, "sku_id": sku, "qty": qty})
            waste.append({"sku_id": sku, "qty": qty})
            s.shelf[v.m, k] -= qty
            if s.shelf[v.m, k]:
                v.expiry[k] = v.unknown_expiry
        else:
            delist_items.append({"device_id": v.device, "sku_id": sku})
            if stale:
                waste.append({"sku_id": sku, "qty": stale})
            returned(k, line.units - stale, line.next_expiry, v.d, avail, wh_next_expiry)
            s.shelf[v.m, k] = 0
            v.delisted.append(k)
    if reduce_items:
        batched(session, "reduce", reduce_items)
        v.reduced = True
    if delist_items:
        batched(session, "delist", delist_items)
    if waste:
        batched(session, "discard", waste)


def _make_room(
    session: ToolSession, mem: Memory, v: _Visit, est: Estimates, avail: IntArray, wh_next_expiry: IntArray
) -> None:
    """Dropped products still on the shelf come off when the carried ones' mean needs want their room.

    The best sellers among them stay longest; their units expiring soon are discarded, the rest go back.
    """
    s, st = mem.s, mem.st
    m, d = v.m, v.d
    cap = int(st.capacity[m])
    spare = cap - int(machine_targets(mem, est, m, v.nxt - d, room=cap, fill=False, safety=False).sum())
    old = np.flatnonzero(s.phase_out[m])
    old = old[np.lexsort((old, -est.mu[m, old]))]  # the best sellers among them stay longest
    keep = np.cumsum(s.shelf[m, old]) <= spare
    out = old[~keep].tolist()
    if not out:
        return
    batched(session, "delist", [{"device_id": v.device, "sku_id": st.sku_ids[k]} for k in out])
    stale_units = [{"sku_id": st.sku_ids[k], "qty": v.soon[k]} for k in out if v.soon.get(k)]
    if stale_units:  # the warehouse keeps no unit that expires soon
        batched(session, "discard", stale_units)
    for k in out:
        returned(k, int(s.shelf[m, k]) - v.soon.get(k, 0), v.expiry.get(k, 0), d, avail, wh_next_expiry)
        s.shelf[m, k] = 0
        s.phase_out[m, k] = False
        v.expiry.pop(k, None)
    v.delisted.extend(out)


def _fill(
    session: ToolSession, mem: Memory, v: _Visit, est: Estimates, avail: IntArray, wh_next_expiry: IntArray
) -> bool:
    """Restock from the warehouse; whether a restock was sent.

    First the carried products' mean needs, then a facing each of uncarried paid-for stock, then the
    carried products' share of the room left.
    """
    s, st = mem.s, mem.st
    m, d = v.m, v.d
    cap = int(st.capacity[m])
    usable = avail.copy()
    if v.long_gap:
        usable[v.delisted] = 0
        usable[(wh_next_expiry > 0) & (wh_next_expiry <= v.nxt)] = 0
    ks = np.flatnonzero(s.active[m])
    free = cap - int(s.shelf[m].sum())
    base = np.maximum(machine_targets(mem, est, m, v.nxt - d, fill=False, safety=False) - s.shelf[m, ks], 0)
    base = fit_within(np.minimum(base, usable[ks]), free)
    room = free - int(base.sum())
    clear, clear_qty = _clearance(mem, est, m, usable, room)
    room -= int(clear_qty.sum())
    held = int(s.shelf[m, ~s.active[m]].sum()) + int(clear_qty.sum())
    full = np.maximum(machine_targets(mem, est, m, v.nxt - d, room=cap - held) - s.shelf[m, ks] - base, 0)
    need = base + fit_within(np.minimum(full, usable[ks] - base), max(room, 0))
    items = []
    pairs = [*zip(ks.tolist(), need.tolist(), strict=True), *zip(clear.tolist(), clear_qty.tolist(), strict=True)]
    for k, q in pairs:
        if q > 0:
            items.append({"device_id": v.device, "sku_id": st.sku_ids[k], "qty": int(q)})
            # restocks take the earliest-expiring warehouse units; the ones expiring soon were discarded
            first = int(wh_next_expiry[k]) if wh_next_expiry[k] > d + EXPIRING_WITHIN_DAYS else v.unknown_expiry
            v.expiry[k] = min(v.expiry.get(k, first), first)
    if not items:
        return False
    for res in batched(session, "restock", items):
        for acc in res.content.get("accepted", []):
            k = st.sku_index[acc["sku_id"]]
            avail[k] -= int(acc["qty"])
            s.shelf[m, k] += int(acc["qty"])
    s.phase_out[m, clear] = s.shelf[m, clear] > 0  # cleared stock sells down like a dropped product
    return True


def _clearance(mem: Memory, est: Estimates, m: int, usable: IntArray, room: int) -> tuple[IntArray, IntArray]:
    """Uncarried paid-for stock to put on machine m, a facing each while `room` lasts, most promising first."""
    s, cfg = mem.s, mem.cfg
    clear = np.zeros(0, dtype=np.int64)
    if room >= cfg.facing_units:
        dead = (usable > 0) & ~s.active.any(axis=0) & ~s.dropped[m] & ~s.phase_out[m] & (s.shelf[m] == 0)
        clear = np.flatnonzero(dead)
        clear = clear[np.lexsort((clear, -est.prior[m, clear] * est.margin[m, clear]))]
        clear = clear[: room // cfg.facing_units]
    return clear, np.minimum(usable[clear], cfg.facing_units)
