"""The read-only view of a run (`Queries`): stock, prices, orders and visits as DataFrames and arrays.

Nothing here changes the state. DataFrames hold CNY; arrays are in world order (machines as in
`world.machines`, products as in `world.catalog`) and are copies.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from autovend.sim import inventory as inv
from autovend.sim.facts import IntArray, WorldFacts
from autovend.sim.money import from_fen
from autovend.sim.state import SimState

EXPIRING_WITHIN_DAYS = 7  # "expiring soon" = unexpired today and expired within this many days


class Queries:
    """Answers questions about the state of a run without changing it (see the `Simulator` accessors)."""

    def __init__(self, facts: WorldFacts, state: SimState) -> None:
        self._facts = facts
        self._state = state

    # ------------------------------------------------------------------ frames

    def devices(self) -> pd.DataFrame:
        """One row per machine with its shelf totals and visits."""
        f, s = self._facts, self._state
        d = s.day
        M = f.n_machines
        exp = np.zeros(M, dtype=np.int64)
        soon = np.zeros(M, dtype=np.int64)
        for (m, _), b in s.shelves.items():
            exp[m] += inv.expired(b, d)
            soon[m] += inv.expiring(b, d, EXPIRING_WITHIN_DAYS)
        units = s.shelf_q.sum(axis=1)
        since = pd.array([d - int(v) if v > 0 else None for v in s.last_visit], dtype="Int64")
        mach = f.world.machines
        return pd.DataFrame(
            {
                "device_id": f.device_ids,
                "location": mach["location"].astype(str).to_numpy(),
                "site_type": mach["site_type"].astype(str).to_numpy(),
                "capacity": f.capacity,
                "units_on_shelf": units,
                "n_skus": np.count_nonzero(s.shelf_q, axis=1),
                "free_capacity": f.capacity - units,
                "expired_units": exp,
                "expiring_7d_units": soon,
                "days_since_visit": since,
                "visited_today": [m in s.touched for m in range(M)],
            }
        )

    def shelf(self, device_id: str | None = None) -> pd.DataFrame:
        """Products on the shelves of one machine or all (rows with units > 0)."""
        f, s = self._facts, self._state
        d = s.day
        only = None if device_id is None else f.device_index[device_id]
        rows = []
        for (m, k), b in sorted(s.shelves.items()):
            if only is not None and m != only:
                continue
            rows.append(
                (
                    f.device_ids[m],
                    f.sku_ids[k],
                    inv.total(b),
                    inv.expired(b, d),
                    inv.expiring(b, d, EXPIRING_WITHIN_DAYS),
                    from_fen(int(s.price_fen[m, k])),
                    from_fen(int(f.ref_fen[k])),
                )
            )
        cols = ["device_id", "sku_id", "units", "expired_units", "expiring_7d_units", "price", "ref_price"]
        return pd.DataFrame(rows, columns=cols)

    def warehouse(self) -> pd.DataFrame:
        """Warehouse stock by SKU (rows with units > 0)."""
        f, s = self._facts, self._state
        d = s.day
        rows = []
        for k, b in sorted(s.warehouse.items()):
            n, e = inv.total(b), inv.expired(b, d)
            c = int(f.cost_fen[k])
            rows.append(
                (
                    f.sku_ids[k],
                    n,
                    e,
                    inv.expiring(b, d, EXPIRING_WITHIN_DAYS),
                    from_fen(c),
                    from_fen((n - e) * c),
                )
            )
        cols = ["sku_id", "units", "expired_units", "expiring_7d_units", "unit_cost", "value_at_cost"]
        return pd.DataFrame(rows, columns=cols)

    def warehouse_batches(self) -> pd.DataFrame:
        """Warehouse batches: sku_id, qty, arrival_day, expiry_day, expired (today)."""
        f, s = self._facts, self._state
        d = s.day
        rows = [
            (f.sku_ids[k], q, e - int(f.shelf_life[k]), e, e <= d) for k, b in sorted(s.warehouse.items()) for e, q in b
        ]
        return pd.DataFrame(rows, columns=["sku_id", "qty", "arrival_day", "expiry_day", "expired"])

    def shelf_batches(self, device_id: str | None = None) -> pd.DataFrame:
        """Shelf batches: device_id, sku_id, qty, arrival_day, expiry_day, expired (today)."""
        f, s = self._facts, self._state
        d = s.day
        only = None if device_id is None else f.device_index[device_id]
        rows = [
            (f.device_ids[m], f.sku_ids[k], q, e - int(f.shelf_life[k]), e, e <= d)
            for (m, k), b in sorted(s.shelves.items())
            if only is None or m == only
            for e, q in b
        ]
        return pd.DataFrame(rows, columns=["device_id", "sku_id", "qty", "arrival_day", "expiry_day", "expired"])

    def in_transit_rows(self) -> list[tuple[int, str, int, float, float, int, int, bool]]:
        """Orders not yet arrived, by order id: the rows of `in_transit` as tuples (no DataFrame)."""
        f, s = self._facts, self._state
        rows = []
        for oid in sorted({oid for ids in s.pending.values() for oid in ids}):  # a split order is pending twice
            o = s.orders[oid]
            left = o.qty - o.landed
            rows.append(
                (
                    oid,
                    f.sku_ids[o.k],
                    left,
                    from_fen(o.unit_cost_fen),
                    from_fen(left * o.unit_cost_fen),
                    o.placed_day,
                    o.eta_day,
                    o.delayed_on(s.day),
                )
            )
        return rows

    def in_transit(self) -> pd.DataFrame:
        """Orders not yet arrived (promised day and delay; the actual arrival day stays hidden)."""
        cols = ["order_id", "sku_id", "qty", "unit_cost", "value_at_cost", "placed_day", "eta_day", "delayed"]
        return pd.DataFrame(self.in_transit_rows(), columns=cols)

    def prices(self, device_id: str | None = None, *, changed_only: bool = False) -> pd.DataFrame:
        """Prices in force, for one machine or all: device_id, sku_id, price, ref_price."""
        f = self._facts
        pf = self._state.price_fen
        ms = np.arange(f.n_machines) if device_id is None else np.array([f.device_index[device_id]])
        mm, kk = np.nonzero(pf[ms] != f.ref_fen) if changed_only else np.indices((len(ms), f.n_products))
        mm, kk = ms[mm.ravel()], kk.ravel()
        return pd.DataFrame(
            {
                "device_id": f.device_arr[mm],
                "sku_id": f.sku_arr[kk],
                "price": pf[mm, kk] / 100.0,
                "ref_price": f.ref_fen[kk] / 100.0,
            }
        )

    # ------------------------------------------------------------------ single values

    def visits_today(self) -> dict[str, int]:
        """Machines touched today and their accepted operations."""
        return {self._facts.device_ids[m]: n for m, n in sorted(self._state.touched.items())}

    def price(self, device_id: str, sku_id: str) -> float:
        """Price in force (CNY) of a product at a machine; KeyError for unknown ids."""
        f = self._facts
        return from_fen(int(self._state.price_fen[f.device_index[device_id], f.sku_index[sku_id]]))

    def price_band(self, sku_id: str) -> tuple[float, float]:
        """Lowest and highest allowed price (CNY, inclusive) of a product."""
        f = self._facts
        k = f.sku_index[sku_id]
        return from_fen(int(f.price_lo_fen[k])), from_fen(int(f.price_hi_fen[k]))

    # ------------------------------------------------------------------ arrays

    def shelf_units(self) -> IntArray:
        """(M, K) units on shelves, expired included (a copy)."""
        return self._state.shelf_q.copy()

    def price_matrix_fen(self) -> IntArray:
        """(M, K) prices in force in fen (a copy)."""
        return self._state.price_fen.copy()

    def warehouse_units(self) -> IntArray:
        """(K,) units in the warehouse, expired included (a copy)."""
        return self._state.wh_q.copy()

    def in_transit_units(self) -> IntArray:
        """(K,) units ordered and not yet arrived (a copy)."""
        return self._state.transit_q.copy()

    def batch_arrays(self) -> dict[str, IntArray]:
        """Shelf and warehouse batches as flat arrays (one entry per batch)."""
        shelf = self.shelf_batch_arrays()
        wh = self.warehouse_batch_arrays()
        names = ("shelf_machine", "shelf_product", "shelf_qty", "shelf_expiry", "wh_product", "wh_qty", "wh_expiry")
        return dict(zip(names, (*shelf, *wh), strict=True))

    def shelf_batch_arrays(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """Shelf batches as flat arrays: machine, product, qty, expiry day (one entry per batch)."""
        flat: list[int] = []
        add = flat.extend
        for (m, k), b in self._state.shelves.items():
            for e, q in b:
                add((m, k, q, e))
        return _columns(flat, 4)  # type: ignore[return-value]

    def machine_batch_arrays(self, m: int) -> tuple[IntArray, IntArray, IntArray]:
        """Machine m's shelf batches as flat arrays: product, qty, expiry day (one entry per batch).

        Walks only the products on that shelf (nonzero units), in catalog order.
        """
        shelves = self._state.shelves
        flat: list[int] = []
        add = flat.extend
        for k in np.flatnonzero(self._state.shelf_q[m]).tolist():
            for e, q in shelves.get((m, k), ()):
                add((k, q, e))
        return _columns(flat, 3)  # type: ignore[return-value]

    def warehouse_batch_arrays(self) -> tuple[IntArray, IntArray, IntArray]:
        """Warehouse batches as flat arrays: product, qty, expiry day (one entry per batch)."""
        flat: list[int] = []
        add = flat.extend
        for k, b in self._state.warehouse.items():
            for e, q in b:
                add((k, q, e))
        return _columns(flat, 3)  # type: ignore[return-value]

    def expired_by(self, day: int | None = None) -> tuple[IntArray, IntArray]:
        """Units that are expired on `day` (default today): shelves (M, K), warehouse (K,)."""
        f, s = self._facts, self._state
        d = s.day if day is None else int(day)
        shelf = np.zeros((f.n_machines, f.n_products), dtype=np.int64)
        if s.shelf_book.expired(d)[0]:
            for (m, k), b in s.shelves.items():
                if b[0][0] <= d:
                    shelf[m, k] = inv.expired(b, d)
        wh = np.zeros(f.n_products, dtype=np.int64)
        if s.wh_book.expired(d)[0]:
            for k, b in s.warehouse.items():
                if b[0][0] <= d:
                    wh[k] = inv.expired(b, d)
        return shelf, wh

    def unit_flows(self) -> dict[str, IntArray]:
        """(K,) unit counts: ordered, in_transit, warehouse, shelves, sold, discarded."""
        s = self._state
        return {
            "ordered": s.ordered.copy(),
            "in_transit": s.transit_q.copy(),
            "warehouse": s.wh_q.copy(),
            "shelves": s.shelf_q.sum(axis=0),
            "sold": s.sold.copy(),
            "discarded": s.discarded.copy(),
        }


def _columns(flat: Sequence[int], width: int) -> tuple[IntArray, ...]:
    """The columns of a row-major flat list of integers, `width` to a row, as int64 arrays (empty for none).

    A flat list of Python ints converts to an array several times faster than a list of tuples.
    """
    table = np.array(flat, dtype=np.int64).reshape(-1, width)
    return tuple(table[:, i].copy() for i in range(width))
