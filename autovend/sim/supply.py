"""Suppliers and deliveries: the terms of each supplier (`SupplierTerms`) and when an order lands (`schedule`).

The default supplier sells at the catalog unit cost, promises `Economics.lead_time_nominal_days` and delivers
after a lead time drawn from `Economics.lead_time_pmf`. A world's `Conditions` (`autovend.world.conditions`) may
add suppliers (their own price factor, promise and lead times), split some orders of a supplier into two
deliveries, and stop a supplier's deliveries for a window (what falls due then lands the day after).

Every draw is the order's own: its lead time is the uniform of its order number in the stream ("lead_time",
block) whatever the supplier (`autovend.sim.inventory.lead_time`), and a split draws three uniforms of the
stream ("delivery", block). A world without conditions draws nothing more than it always did, so its runs are
unchanged to the last unit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from autovend.rng import stream
from autovend.sim import inventory as inv
from autovend.world.conditions import Conditions, Split
from autovend.world.model import World

IntArray = np.ndarray
PREMIUM_KIND = "supplier_premium"  # the cost kind of what a supplier charges above the catalog unit cost


@dataclass(frozen=True, eq=False)
class SupplierTerms:
    """One supplier as the simulator uses it: prices in fen (None: the catalog unit costs), promise, lead times."""

    supplier_id: str
    price_factor: float
    premium_fen: IntArray | None  # (K,) fen charged above the catalog unit cost per unit; None: nothing
    promised_days: int
    leads: tuple[int, ...]
    cdf: tuple[float, ...]
    split: Split | None
    note: str = ""


def _premiums(cost_fen: IntArray, factor: float) -> IntArray | None:
    """Per-unit premium in fen of a supplier selling at `factor` x cost (half-up to the fen); None at factor 1."""
    if factor == 1.0:
        return None
    f = Decimal(repr(float(factor)))
    price = [int((Decimal(int(c)) * f).quantize(Decimal(1), rounding=ROUND_HALF_UP)) for c in cost_fen]
    return np.asarray(price, dtype=np.int64) - cost_fen


def supplier_terms(world: World, cost_fen: IntArray) -> dict[str, SupplierTerms]:
    """Every supplier of `world` by id, the default one first."""
    eco, cond = world.economics, world.conditions
    leads, cdf = inv.lead_time_table(eco.lead_time_pmf)
    out = {
        eco.default_supplier: SupplierTerms(
            eco.default_supplier, 1.0, None, eco.lead_time_nominal_days, leads, cdf, cond.split_of(eco.default_supplier)
        )
    }
    for s in cond.suppliers:
        leads, cdf = inv.lead_time_table(s.lead_time_pmf)
        out[s.supplier_id] = SupplierTerms(
            s.supplier_id,
            s.price_factor,
            _premiums(cost_fen, s.price_factor),
            s.promised_days,
            leads,
            cdf,
            cond.split_of(s.supplier_id),
            s.note,
        )
    return out


LEAD_BLOCK = inv.LEAD_BLOCK


@functools.lru_cache(maxsize=16)
def _split_block(seed: int, block: int) -> np.ndarray:
    """Three uniforms per order of block `block` (split or not, share, delay), from stream ("delivery", block)."""
    return stream(seed, "delivery", block).random((LEAD_BLOCK, 3))


@dataclass(frozen=True)
class Delivery:
    """When an order lands: `first_qty` units on `arrival_day`, the rest (`split_qty`) on `rest_day` (0: none)."""

    lead: int  # the drawn lead time (days after placement), before any outage
    arrival_day: int
    split_qty: int
    rest_day: int


def schedule(terms: SupplierTerms, conditions: Conditions, seed: int, order_id: int, day: int, qty: int) -> Delivery:
    """The delivery of order `order_id` of `qty` units placed on `day` with `terms` (module docstring)."""
    lead = inv.lead_time(seed, order_id, terms.leads, terms.cdf)
    arrival = day + lead
    if conditions.outages:
        arrival = conditions.delivery_day(terms.supplier_id, arrival)
    split = terms.split
    if split is None or qty < 2:
        return Delivery(lead, arrival, 0, 0)
    block, offset = divmod(int(order_id) - 1, LEAD_BLOCK)
    u_split, u_share, u_delay = (float(x) for x in _split_block(int(seed), block)[offset])
    if u_split >= split.probability:
        return Delivery(lead, arrival, 0, 0)
    share = split.min_share + u_share * (split.max_share - split.min_share)
    first = min(max(1, int(qty * share)), qty - 1)
    delay = split.min_delay_days + min(int(u_delay * (split.max_delay_days - split.min_delay_days + 1)), 99)
    delay = min(delay, split.max_delay_days)
    rest = conditions.delivery_day(terms.supplier_id, arrival + delay)
    return Delivery(lead, arrival, qty - first, rest)
