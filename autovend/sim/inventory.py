"""Stock as dated batches: units of one SKU in one place, grouped by the day they expire.

A batch that lands in the warehouse on day a with shelf life L is unexpired on days a .. a+L-1 and
expired from day a+L on; its `expiry_day` is a+L. Units of one SKU with the same expiry day are
interchangeable (one unit cost per SKU), so a place holds a list of [expiry_day, qty] pairs sorted by
expiry day with qty > 0. Every move takes the earliest-expiring units first, so expired units (the
earliest) leave first. Moving units never changes their expiry day.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from autovend.rng import stream

Batches = list[list[int]]  # [[expiry_day, qty], ...], ascending expiry_day, qty > 0
Parts = list[tuple[int, int]]  # (expiry_day, qty) pieces taken from or added to a place


def total(batches: Batches) -> int:
    """Units in a place."""
    return sum(q for _, q in batches)


def expired(batches: Batches, day: int) -> int:
    """Units already expired on `day` (expiry_day <= day)."""
    n = 0
    for e, q in batches:
        if e > day:
            break
        n += q
    return n


def expiring(batches: Batches, day: int, within: int) -> int:
    """Units unexpired on `day` that expire within `within` days (day < expiry_day <= day + within)."""
    return sum(q for e, q in batches if day < e <= day + within)


def add(batches: Batches, parts: Iterable[tuple[int, int]]) -> None:
    """Put `parts` into a place, keeping it sorted and merging equal expiry days (in place)."""
    for e, q in parts:
        if q <= 0:
            continue
        i = len(batches)
        while i > 0 and batches[i - 1][0] > e:
            i -= 1
        if i > 0 and batches[i - 1][0] == e:
            batches[i - 1][1] += q
        else:
            batches.insert(i, [e, q])


def take(batches: Batches, qty: int) -> Parts:
    """Remove `qty` units, earliest-expiring first (in place); return the parts taken.

    Raises ValueError if the place holds fewer than `qty` units (callers check first); the place is
    then left as it was.
    """
    if qty <= 0:
        return []
    taken: Parts = []
    need = qty
    i = 0
    while need > 0:
        if i == len(batches):
            raise ValueError(f"cannot take {qty} units from a place holding {qty - need}")
        e, q = batches[i]
        n = q if q < need else need
        taken.append((e, n))
        need -= n
        i += 1
    # commit: drop the emptied batches, shrink the last one touched
    last_e, last_n = taken[-1]
    if last_n == batches[i - 1][1]:
        del batches[:i]
    else:
        batches[i - 1][1] -= last_n
        del batches[: i - 1]
    return taken


def split_expired(parts: Parts, day: int) -> tuple[int, int]:
    """(unexpired units, expired units) among `parts` on `day`."""
    exp = sum(q for e, q in parts if e <= day)
    return sum(q for _, q in parts) - exp, exp


def newly_expired(batches: Batches, day: int) -> int:
    """Units whose expiry day is exactly `day` (they turn expired at the start of `day`)."""
    return sum(q for e, q in batches if e == day)


@dataclass
class ExpiryBook:
    """Units of one place (all shelves, or the warehouse) and their cost, by expiry day.

    Kept in step with the batches, so the start of a day finds what expires (`on`) and the
    balance finds what is expired (`expired`) without walking every batch.
    """

    units: dict[int, int] = field(default_factory=dict)
    cost_fen: dict[int, int] = field(default_factory=dict)

    def add(self, expiry_day: int, qty: int, cost_fen: int) -> None:
        """Book `qty` units expiring on `expiry_day` worth `cost_fen` in all."""
        self.units[expiry_day] = self.units.get(expiry_day, 0) + qty
        self.cost_fen[expiry_day] = self.cost_fen.get(expiry_day, 0) + cost_fen

    def remove(self, expiry_day: int, qty: int, cost_fen: int) -> None:
        """Unbook units (the day's entry goes when it holds no unit)."""
        left = self.units[expiry_day] - qty
        if left:
            self.units[expiry_day] = left
            self.cost_fen[expiry_day] -= cost_fen
        else:
            del self.units[expiry_day]
            del self.cost_fen[expiry_day]

    def add_parts(self, parts: Parts, unit_cost_fen: int) -> None:
        """Book every (expiry_day, qty) part at one unit cost."""
        for e, q in parts:
            self.add(e, q, q * unit_cost_fen)

    def remove_parts(self, parts: Parts, unit_cost_fen: int) -> None:
        """Unbook every (expiry_day, qty) part at one unit cost."""
        for e, q in parts:
            self.remove(e, q, q * unit_cost_fen)

    def on(self, day: int) -> tuple[int, int]:
        """(units, cost) whose expiry day is exactly `day`."""
        return self.units.get(day, 0), self.cost_fen.get(day, 0)

    def expired(self, day: int) -> tuple[int, int]:
        """(units, cost) already expired on `day` (expiry day <= day)."""
        n = c = 0
        for e, q in self.units.items():
            if e <= day:
                n += q
                c += self.cost_fen[e]
        return n, c


@dataclass
class Order:
    """A purchase order: placed on `placed_day`, lands in the warehouse at the start of `arrival_day`.

    `arrival_day` is the actual day, hidden from the agent; the agent sees `eta_day` (placement plus
    the supplier's promise) and whether the order is delayed. A split order (`autovend.sim.supply`) lands
    `qty - split_qty` units on `arrival_day` and `split_qty` on `rest_day`; `landed` counts the units landed.
    `premium_fen`: what the supplier charged per unit above the unit cost (0 for the default supplier).
    """

    order_id: int
    k: int  # product index in catalog order
    qty: int
    unit_cost_fen: int
    supplier_id: str
    placed_day: int
    eta_day: int
    arrival_day: int
    arrived: bool = False
    split_qty: int = 0
    rest_day: int = 0
    landed: int = 0
    premium_fen: int = 0

    def landing_qty(self) -> int:
        """Units of this order that land at its next delivery (the first part of a split order, else the rest)."""
        if self.split_qty and not self.landed:
            return self.qty - self.split_qty
        return self.qty - self.landed

    def delayed_on(self, day: int) -> bool:
        """True when `day` is past the promised day and the order has not arrived."""
        return not self.arrived and day > self.eta_day


def lead_time_table(pmf: Mapping[int, float]) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Lead times sorted ascending and their cumulative probabilities (for `lead_time`)."""
    leads = tuple(sorted(int(x) for x in pmf))
    return leads, tuple(float(c) for c in np.cumsum([pmf[x] for x in leads]))


LEAD_BLOCK = 4096  # orders per block of lead-time uniforms


@functools.lru_cache(maxsize=16)
def _lead_block(seed: int, block: int) -> np.ndarray:
    """Uniforms of orders block*LEAD_BLOCK+1 .. (block+1)*LEAD_BLOCK, from stream ("lead_time", block)."""
    return stream(seed, "lead_time", block).random(LEAD_BLOCK)


def lead_time(seed: int, order_id: int, leads: Sequence[int], cdf: Sequence[float]) -> int:
    """Actual lead time (days) of order `order_id` (1, 2, ...), from its own uniform u.

    The uniform of order i is entry (i-1) % 4096 of block (i-1) // 4096 of the named stream
    ("lead_time", block): fixed by the seed and the order's number.

    `leads` ascending with cumulative probabilities `cdf` (see `lead_time_table`): the lead time is
    the first one with u < cdf[i] (the last one if rounding leaves cdf[-1] just below u).
    """
    block, offset = divmod(int(order_id) - 1, LEAD_BLOCK)
    u = float(_lead_block(int(seed), block)[offset])
    i = bisect.bisect_right(cdf, u)
    return int(leads[min(i, len(leads) - 1)])
