"""A run folder as day-by-day states for the replay: the ledger, every shelf, the warehouse, the calls, the notebook.

`Timeline.of(run)` rebuilds, from the agent-visible records alone, the stock at the close of every settled day:

- shelf units of product k on machine m = restocked minus reduced or delisted minus sold, on days <= d;
- warehouse units of k = arrived plus taken back from shelves minus restocked minus discarded, on days <= d
  (expired units included, as the daily report counts them);
- the price in force = the last price change on a day <= d (the reference price when none);

and `timeline.day(d)` gives a `DayView`: the day's ledger row (daily.csv), the shelves and the warehouse at
the close of the day, the day's tool calls with their results and the notebook as the agent left it that day
(the text of its last accepted write_memory on a day <= d).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.evaluation.rundata import RunData

IntArray = npt.NDArray[np.int64]
EVENT_SIGN = {"restock": 1, "reduce": -1, "delist": -1}


@dataclass(frozen=True)
class ShelfItem:
    """Units of one product on one machine at the close of a day, at the price in force."""

    sku_id: str
    name: str
    units: int
    price: float


@dataclass(frozen=True)
class MachineDay:
    """One machine at the close of a day: its shelf and the day's sales there."""

    device_id: str
    location: str
    capacity: int
    units: int
    sold: int
    revenue: float
    items: tuple[ShelfItem, ...]


@dataclass(frozen=True)
class WarehouseItem:
    """Units of one product in the warehouse at the close of a day."""

    sku_id: str
    name: str
    units: int


@dataclass(frozen=True)
class CallView:
    """One tool call as the trajectory holds it."""

    seq: int
    tool: str
    arguments: Any
    ok: bool
    result: Any  # the result content (ok) or None
    error: str | None


@dataclass(frozen=True)
class DayView:
    """What the replay shows for one settled day (see the module docstring)."""

    day: int
    date: str
    ledger: dict[str, float]  # the day's row of daily.csv (cash, net_assets, inventory_at_cost, revenue, ...)
    machines: tuple[MachineDay, ...]
    warehouse: tuple[WarehouseItem, ...]
    calls: tuple[CallView, ...]
    notebook: str

    def to_json(self) -> dict[str, Any]:
        """The view as a JSON object (the replay's `/api/runs/<i>/days/<d>`)."""
        return {
            "day": self.day,
            "date": self.date,
            "ledger": self.ledger,
            "machines": [
                {
                    "device_id": m.device_id,
                    "location": m.location,
                    "capacity": m.capacity,
                    "units": m.units,
                    "sold": m.sold,
                    "revenue": m.revenue,
                    "items": [[i.sku_id, i.name, i.units, i.price] for i in m.items],
                }
                for m in self.machines
            ],
            "warehouse": [[w.sku_id, w.name, w.units] for w in self.warehouse],
            "calls": [
                {
                    "seq": c.seq,
                    "tool": c.tool,
                    "arguments": c.arguments,
                    "ok": c.ok,
                    "result": c.result,
                    "error": c.error,
                }
                for c in self.calls
            ],
            "notebook": self.notebook,
        }


def _cumulative(
    frame: pd.DataFrame, n_days: int, shape: tuple[int, ...], index: list[IntArray], values: IntArray, shift: int = 0
) -> IntArray:
    """Cumulative sums over days 0..n_days of `values` added at (day + shift, *index)."""
    delta = np.zeros((n_days + 2, *shape), dtype=np.int64)
    if len(frame):
        np.add.at(delta, (frame["day"].to_numpy(dtype=np.int64) + shift, *index), values)
    return np.cumsum(delta, axis=0)[: n_days + 1]


class Timeline:
    """The stock of every settled day of a run, and the day views built from it (module docstring)."""

    def __init__(self, run: RunData) -> None:
        self.run = run
        world = run.world
        self.n_days = run.days
        self.device_ids = [str(d) for d in world.machines["device_id"]]
        self.locations = [str(x) for x in world.machines.get("location", world.machines["device_id"])]
        self.capacity = [int(c) for c in world.machines["capacity"]]
        catalog = world.catalog
        self.sku_ids = [str(s) for s in catalog["sku_id"]]
        self.names = [str(n) for n in catalog["name"]] if "name" in catalog else list(self.sku_ids)
        self.ref_price = catalog["ref_price"].to_numpy(dtype=float)
        self._machine = {d: i for i, d in enumerate(self.device_ids)}
        self._product = {s: i for i, s in enumerate(self.sku_ids)}
        self.daily = run.daily.reset_index(drop=True)
        self.shelf, self.warehouse = self._stock()
        self._calls = self._calls_by_day()

    def _stock(self) -> tuple[IntArray, IntArray]:
        """Shelf units (days + 1, M, K) and warehouse units (days + 1, K) at the close of each day (row 0: start)."""
        rec, n, M, K = self.run.records, self.n_days, len(self.device_ids), len(self.sku_ids)
        events = rec["shelf_events"]
        events = events[events["day"] <= n]
        sales = rec["daily_sales"]
        sales = sales[sales["day"] <= n]
        m_ev = events["device_id"].astype(str).map(self._machine).to_numpy(dtype=np.int64)
        k_ev = events["sku_id"].astype(str).map(self._product).to_numpy(dtype=np.int64)
        moved = events["kind"].map(EVENT_SIGN).to_numpy(dtype=np.int64) * events["qty"].to_numpy(dtype=np.int64)
        m_sa = sales["device_id"].astype(str).map(self._machine).to_numpy(dtype=np.int64)
        k_sa = sales["sku_id"].astype(str).map(self._product).to_numpy(dtype=np.int64)
        shelf = _cumulative(events, n, (M, K), [m_ev, k_ev], moved)
        shelf -= _cumulative(sales, n, (M, K), [m_sa, k_sa], sales["units"].to_numpy(dtype=np.int64))
        arrivals = rec["arrivals"]
        arrivals = arrivals[arrivals["day"] <= n]
        discards = rec["discards"]
        discards = discards[discards["day"] <= n]
        k_ar = arrivals["sku_id"].astype(str).map(self._product).to_numpy(dtype=np.int64)
        k_di = discards["sku_id"].astype(str).map(self._product).to_numpy(dtype=np.int64)
        wh = _cumulative(arrivals, n, (K,), [k_ar], arrivals["qty"].to_numpy(dtype=np.int64))
        wh -= _cumulative(events, n, (K,), [k_ev], moved)
        wh -= _cumulative(discards, n, (K,), [k_di], discards["qty"].to_numpy(dtype=np.int64))
        return shelf, wh

    def _calls_by_day(self) -> dict[int, list[CallView]]:
        out: dict[int, list[CallView]] = {}
        for c in self.run.calls:
            view = CallView(
                int(c.get("seq", 0)),
                str(c.get("tool")),
                c.get("arguments"),
                bool(c.get("ok")),
                c.get("result") if c.get("ok") else None,
                c.get("error"),
            )
            out.setdefault(int(c.get("day", 0)), []).append(view)
        return out

    def calls(self, day: int) -> tuple[CallView, ...]:
        """The tool calls made on `day`, in order."""
        return tuple(self._calls.get(int(day), ()))

    def notebook(self, day: int) -> str:
        """The notebook at the close of `day`: the text of the last accepted write_memory on a day <= `day`."""
        text = ""
        for d in sorted(k for k in self._calls if k <= day):
            for c in self._calls[d]:
                if c.tool == "write_memory" and c.ok and isinstance(c.arguments, dict):
                    text = str(c.arguments.get("text", ""))
        return text

    def prices(self, day: int) -> dict[tuple[int, int], float]:
        """(machine, product) -> the price in force on `day`, for those whose price was ever changed."""
        ch = self.run.records["price_changes"]
        ch = ch[ch["day"] <= day]
        out: dict[tuple[int, int], float] = {}
        for dev, sku, price in zip(ch["device_id"].astype(str), ch["sku_id"].astype(str), ch["new_price"], strict=True):
            out[(self._machine[dev], self._product[sku])] = float(price)
        return out

    def day(self, day: int) -> DayView:
        """The view of settled day `day` (1..n_days); ValueError outside that range."""
        if not 1 <= day <= self.n_days:
            raise ValueError(f"day must be between 1 and {self.n_days} (the days settled), got {day}")
        row = self.daily.iloc[day - 1]
        ledger = {c: float(row[c]) for c in self.daily.columns if c not in ("day", "date")}
        sales = self.run.records["daily_sales"]
        sales = sales[sales["day"] == day]
        sold = sales.groupby("device_id")["units"].sum()
        revenue = sales.groupby("device_id")["revenue"].sum()
        prices = self.prices(day)
        machines = []
        for m, dev in enumerate(self.device_ids):
            q = self.shelf[day, m]
            items = tuple(
                ShelfItem(self.sku_ids[k], self.names[k], int(q[k]), prices.get((m, k), float(self.ref_price[k])))
                for k in np.flatnonzero(q).tolist()
            )
            machines.append(
                MachineDay(
                    dev,
                    self.locations[m],
                    self.capacity[m],
                    int(q.sum()),
                    int(sold.get(dev, 0)),
                    round(float(revenue.get(dev, 0.0)), 2),
                    items,
                )
            )
        wh = self.warehouse[day]
        warehouse = tuple(WarehouseItem(self.sku_ids[k], self.names[k], int(wh[k])) for k in np.flatnonzero(wh))
        return DayView(day, str(row["date"]), ledger, tuple(machines), warehouse, self.calls(day), self.notebook(day))

    @classmethod
    def of(cls, run: RunData) -> Timeline:
        """The timeline of a loaded run."""
        return cls(run)
