"""The shelves as customers met them, rebuilt from the agent-visible records alone.

Units of product k on machine m when demand is realised on day d = everything restocked minus
everything reduced or delisted on days <= d, minus everything sold on days < d (the day's physical
actions come before its sales). Prices in force on day d are the last price change made on a day <= d
(the reference price when none). Nothing here reads the simulator's state or the hidden log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.distinct import distinct
from autovend.world.model import World

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

EVENT_SIGN = {"restock": 1, "reduce": -1, "delist": -1}


@dataclass(frozen=True, eq=False)
class ShelfPanel:
    """Every (day, machine, product) with units on the shelf at demand time, as flat arrays (sorted).

    day, machine, product, q, price: one entry per stocked slot; `units` (days + 1, M) all units on
    each machine at demand time (row 0 unused).
    """

    day: IntArray
    machine: IntArray
    product: IntArray
    q: IntArray
    price: FloatArray
    units: IntArray

    @property
    def n_days(self) -> int:
        """Days covered."""
        return self.units.shape[0] - 1

    @cached_property
    def _key(self) -> IntArray:
        """day * (M + 1) + machine of every entry (sorted, since entries are sorted by day and machine)."""
        return self.day * (self.units.shape[1] + 1) + self.machine

    def rows(self, day: int, machine: int) -> slice:
        """The slice of entries of one machine-day (entries are sorted by day, machine, product)."""
        target = int(day) * (self.units.shape[1] + 1) + int(machine)
        lo, hi = np.searchsorted(self._key, [target, target + 1])
        return slice(int(lo), int(hi))

    def padded(self, days: npt.ArrayLike, machines: npt.ArrayLike) -> tuple[IntArray, IntArray, FloatArray]:
        """Product, units and price of the given machine-days as (R, S) arrays padded with q = 0."""
        stride = self.units.shape[1] + 1
        key = self._key
        target = np.asarray(days, dtype=np.int64) * stride + np.asarray(machines, dtype=np.int64)
        lo = np.searchsorted(key, target)
        n = np.searchsorted(key, target + 1) - lo
        width = max(int(n.max(initial=0)), 1)
        slot = np.arange(width)
        inside = slot[None, :] < n[:, None]
        src = np.where(inside, lo[:, None] + slot[None, :], 0)
        if len(key) == 0:
            return np.zeros(inside.shape, dtype=np.int64), np.zeros(inside.shape, dtype=np.int64), np.ones(inside.shape)
        product = np.where(inside, self.product[src], 0)
        q = np.where(inside, self.q[src], 0)
        price = np.where(inside, self.price[src], 1.0)
        return product, q, price


def _indexes(world: World) -> tuple[dict[str, int], dict[str, int]]:
    devices = {str(d): i for i, d in enumerate(world.machines["device_id"])}
    skus = {str(s): i for i, s in enumerate(world.catalog["sku_id"])}
    return devices, skus


def shelf_panel(world: World, records: Mapping[str, pd.DataFrame], n_days: int) -> ShelfPanel:
    """Rebuild the stocked slots of days 1..n_days from shelf_events, daily_sales and price_changes."""
    devices, skus = _indexes(world)
    M = world.n_machines
    events = records["shelf_events"]
    sales = records["daily_sales"]
    used = distinct(np.array([skus[s] for s in events["sku_id"].astype(str)], dtype=np.int64))
    col = np.full(world.n_products, -1, dtype=np.int64)
    col[used] = np.arange(len(used))
    delta = np.zeros((n_days + 2, M, max(len(used), 1)), dtype=np.int64)
    if len(events):
        ev = events[events["day"] <= n_days]
        sign = ev["kind"].map(EVENT_SIGN).to_numpy(dtype=np.int64)
        m = ev["device_id"].astype(str).map(devices).to_numpy(dtype=np.int64)
        k = col[ev["sku_id"].astype(str).map(skus).to_numpy(dtype=np.int64)]
        np.add.at(delta, (ev["day"].to_numpy(dtype=np.int64), m, k), sign * ev["qty"].to_numpy(dtype=np.int64))
    if len(sales):
        sa = sales[sales["day"] < n_days]
        m = sa["device_id"].astype(str).map(devices).to_numpy(dtype=np.int64)
        k = col[sa["sku_id"].astype(str).map(skus).to_numpy(dtype=np.int64)]
        np.add.at(delta, (sa["day"].to_numpy(dtype=np.int64) + 1, m, k), -sa["units"].to_numpy(dtype=np.int64))
    q = np.cumsum(delta, axis=0)[: n_days + 1]
    if (q < 0).any():
        d, m, j = (int(x[0]) for x in np.nonzero(q < 0))
        raise ValueError(
            f"the records imply a negative shelf ({world.machines['device_id'].iloc[m]}, "
            f"{world.catalog['sku_id'].iloc[used[j]]}, day {d}); they are inconsistent"
        )
    units = q.sum(axis=2)
    dd, mm, jj = np.nonzero(q)
    kk = used[jj] if len(used) else jj
    ref = world.catalog["ref_price"].to_numpy(dtype=float)
    price = ref[kk].copy()
    changes = records["price_changes"]
    if len(changes) and len(dd):
        price = _prices_in_force(changes, devices, skus, world.n_products, dd, mm, kk, price)
    return ShelfPanel(day=dd, machine=mm, product=kk, q=q[dd, mm, jj], price=price, units=units)


def _prices_in_force(
    changes: pd.DataFrame,
    devices: dict[str, int],
    skus: dict[str, int],
    n_products: int,
    day: IntArray,
    machine: IntArray,
    product: IntArray,
    default: FloatArray,
) -> FloatArray:
    """The last change on a day <= `day` of each (machine, product); `default` where none was made."""
    ch = pd.DataFrame(
        {
            "key": changes["device_id"].astype(str).map(devices).to_numpy(dtype=np.int64) * n_products
            + changes["sku_id"].astype(str).map(skus).to_numpy(dtype=np.int64),
            "day": changes["day"].to_numpy(dtype=np.int64),
            "price": changes["new_price"].to_numpy(dtype=float),
        }
    )
    ch = ch.sort_values(["day"], kind="stable")  # within a day the record order = the order of the changes
    left = pd.DataFrame({"key": machine * n_products + product, "day": day, "pos": np.arange(len(day))})
    merged = pd.merge_asof(left.sort_values("day", kind="stable"), ch, on="day", by="key", direction="backward")
    out = default.copy()
    found = merged["price"].notna().to_numpy()
    out[merged["pos"].to_numpy()[found]] = merged["price"].to_numpy()[found]
    return out
