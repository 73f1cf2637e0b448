"""The agent-visible daily sales of a run as arrays (`SalesLog`), kept beside their `daily_sales` records.

Tools and scripted policies read recent sales by machine and product every day; reading them from
these arrays instead of the SQLite records leaves the records unwritten until someone queries them
(`autovend.sim.records.RecordStore`). The arrays hold exactly the rows of `daily_sales`, in record
order: one entry per machine and product with a sale on a settled day.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from autovend.sim.facts import IntArray, WorldFacts
from autovend.sim.records import RecordStore

FloatArray = npt.NDArray[np.float64]
DaySales = tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]  # machine, product, units, revenue, cost


@dataclass(eq=False)
class SalesLog:
    """Each settled day's `daily_sales` rows as arrays: machine and product indexes, units, revenue, cost (CNY).

    A log made for a restored run (`restored=True`) reads the days settled before it from the records
    on first use.
    """

    facts: WorldFacts
    records: RecordStore
    restored: bool = False
    _days: dict[int, DaySales] = field(default_factory=dict)

    def append(self, day: int, sales: DaySales) -> None:
        """The rows of settled day `day`."""
        self._load()
        self._days[day] = sales

    def day(self, day: int) -> DaySales:
        """The rows of day `day` (none for a day not settled)."""
        self._load()
        got = self._days.get(day)
        if got is None:
            i, f = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
            return i, i, i, f, f
        return got

    def units_by_product(self, first: int, last: int) -> IntArray:
        """(K,) units sold of each product on settled days `first`..`last`."""
        self._load()
        parts = [self._days[d] for d in range(max(first, 1), last + 1) if d in self._days]
        K = self.facts.n_products
        if not parts:
            return np.zeros(K, dtype=np.int64)
        product = np.concatenate([p[1] for p in parts])
        units = np.concatenate([p[2] for p in parts])
        return np.bincount(product, weights=units, minlength=K).astype(np.int64)  # exact: whole numbers < 2**53

    def _load(self) -> None:
        """Read the days settled before a restored run from its records (once)."""
        if not self.restored:
            return
        self.restored = False
        rows = self.records.connection.execute(
            "SELECT day, device_id, sku_id, units, revenue, cost FROM daily_sales ORDER BY day"
        ).fetchall()
        last = self.records.connection.execute("SELECT COALESCE(MAX(day), 0) FROM daily_summary").fetchone()[0]
        f = self.facts
        days, devices, skus, units, revenue, cost = zip(*rows, strict=True) if rows else ((),) * 6
        day = np.array(days, dtype=np.int64)
        cols = (
            np.array([f.device_index[d] for d in devices], dtype=np.int64),
            np.array([f.sku_index[s] for s in skus], dtype=np.int64),
            np.array(units, dtype=np.int64),
            np.array(revenue, dtype=np.float64),
            np.array(cost, dtype=np.float64),
        )
        bounds = np.searchsorted(day, np.arange(1, int(last) + 2)).tolist()
        for d, (lo, hi) in enumerate(itertools.pairwise(bounds), start=1):
            self._days[d] = tuple(c[lo:hi].copy() for c in cols)  # type: ignore[assignment]
