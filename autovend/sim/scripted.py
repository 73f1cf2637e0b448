"""A simple scripted policy that keeps every machine stocked with a fixed assortment (tests, benchmarks).

It uses only what an agent may see (accessors and the agent-visible records) and keeps no state of
its own, so a run restored from a checkpoint continues exactly as the uninterrupted one. Each day:
on working days take off the shelves every unit that would be expired before the next working day
and restock every assortment product up to its facing; discard the warehouse units that would be
expired by then (on other days only the expired ones); order each product up to a cover of recent
sales plus what the shelves lack, when its stock position falls below `reorder_fraction` of that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from autovend.sim.results import DayReport
from autovend.sim.simulator import Simulator


def rotating_assortment(sim: Simulator, n_skus: int, step: int) -> dict[str, list[str]]:
    """Machine i carries catalog products i*step .. i*step + n_skus - 1 (wrapping around)."""
    K = sim.n_products
    return {d: [sim.sku_ids[(i * step + j) % K] for j in range(min(n_skus, K))] for i, d in enumerate(sim.device_ids)}


@dataclass(frozen=True)
class KeepStocked:
    """Order a fixed assortment and restock it on every working day.

    assortment: device_id -> sku_ids, or one list for every machine, or None for the first `n_skus`
    products of the catalog. facing: target units per product and machine (None: capacity //
    number of products). cover_days: days of recent network sales kept in stock beyond the
    shelves' needs. prior_daily_units: assumed sales per product and machine a day until
    `window_days` of history exist. restock_below: refill a product only when its shelf holds
    fewer units than this (None: whenever it is below its facing). review_days: orders are placed
    on days divisible by this.
    """

    assortment: Mapping[str, Sequence[str]] | Sequence[str] | None = None
    n_skus: int = 12
    facing: int | None = None
    cover_days: int = 8
    reorder_fraction: float = 0.5
    window_days: int = 7
    prior_daily_units: float = 1.0
    restock_below: int | None = None
    review_days: int = 1
    _cache: dict[int, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    def targets(self, sim: Simulator) -> np.ndarray:
        """(M, K) target shelf units (computed once per world)."""
        key = id(sim.world)
        if key not in self._cache:
            self._cache.clear()
            self._cache[key] = self._targets(sim)
        return self._cache[key]

    def _targets(self, sim: Simulator) -> np.ndarray:
        out = np.zeros((sim.n_machines, sim.n_products), dtype=np.int64)
        for m, device in enumerate(sim.device_ids):
            if self.assortment is None:
                skus: Sequence[str] = sim.sku_ids[: self.n_skus]
            elif isinstance(self.assortment, Mapping):
                skus = self.assortment.get(device, ())
            else:
                skus = self.assortment
            if not skus:
                continue
            most = int(sim.capacity[m]) // len(skus)
            out[m, [sim.sku_index(s) for s in skus]] = most if self.facing is None else min(self.facing, most)
        return out

    def act(self, sim: Simulator) -> None:
        """Take today's actions (no end_day)."""
        target = self.targets(sim)
        # units that would be expired before staff can next come: on a working day everything that
        # expires before the next working day; on other days what is expired already
        limit = sim.next_workday() - 1 if sim.is_workday else sim.day
        if sim.is_workday:
            stale, _ = sim.expired_by(limit)
            ms, ks = np.nonzero(stale)
            if len(ms):
                sim.reduce(
                    [
                        {"device_id": sim.device_ids[m], "sku_id": sim.sku_ids[k], "qty": int(stale[m, k])}
                        for m, k in zip(ms.tolist(), ks.tolist(), strict=True)
                    ]
                )
        _, old = sim.expired_by(limit)
        ks = np.flatnonzero(old)
        if len(ks):
            sim.discard([{"sku_id": sim.sku_ids[k], "qty": int(old[k])} for k in ks.tolist()])
        if sim.is_workday:
            self._restock(sim, target)
        if sim.day % self.review_days == 0:
            self._order(sim, target)

    def _restock(self, sim: Simulator, target: np.ndarray) -> None:
        shelf = sim.shelf_units()
        need = np.maximum(target - shelf, 0)
        if self.restock_below is not None:
            need[shelf >= self.restock_below] = 0
        avail = sim.warehouse_units()
        items = []
        for m, k in zip(*np.nonzero(need), strict=True):
            qty = int(min(need[m, k], avail[k]))
            if qty > 0:
                avail[k] -= qty
                items.append({"device_id": sim.device_ids[m], "sku_id": sim.sku_ids[k], "qty": qty})
        if items:
            sim.restock(items)

    def _order(self, sim: Simulator, target: np.ndarray) -> None:
        rate = self._recent_rate(sim)
        if sim.day <= self.window_days:
            rate = np.maximum(rate, self.prior_daily_units * (target > 0).sum(axis=0))
        gap = np.maximum(target - sim.shelf_units(), 0).sum(axis=0)
        level = np.ceil(rate * self.cover_days).astype(np.int64) + gap
        position = sim.warehouse_units() + sim.in_transit_units()
        carried = target.sum(axis=0) > 0
        ks = np.flatnonzero(carried & (position < self.reorder_fraction * level))
        if len(ks):
            sim.place_order([{"sku_id": sim.sku_ids[k], "qty": int(level[k] - position[k])} for k in ks.tolist()])

    def _recent_rate(self, sim: Simulator) -> np.ndarray:
        """Units sold a day per product over the last `window_days` settled days (network total)."""
        rate = np.zeros(sim.n_products)
        days = min(self.window_days, sim.day - 1)
        if days <= 0:
            return rate
        units = sim.units_sold_by_product(sim.day - days, sim.day - 1)  # the daily_sales sums, read without SQL
        nz = np.flatnonzero(units)
        rate[nz] = units[nz] / days
        return rate

    def run(self, sim: Simulator, days: int | None = None) -> list[DayReport]:
        """Act and end the day until the episode is over (or for `days` days); return the reports."""
        reports: list[DayReport] = []
        while not sim.done and (days is None or len(reports) < days):
            self.act(sim)
            reports.append(sim.end_day())
        return reports
