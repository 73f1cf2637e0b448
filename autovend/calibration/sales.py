"""The records the panel is built from, reduced one part of a source at a time: daily sales and shelf counts.

A part is a whole orders or inventory table (a flat source) or one partition file of a partitioned source
(`autovend.data.parts`). `part_sales` reduces its typed rows to what `panel` needs: the completed order lines of
kept products summed per machine, product and day (machines coded in the source's machines table, days counted
from 1970-01-01), with the counts and dates the panel's frame is set from; and the shelf counts of kept products
with every visit. `combine` settles, from all parts, which machines enter the panel and its first and last days;
`Pieces` then cuts the parts' rows into the machine ranges whose cells are built together.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.data.keys import by_key
from autovend.distinct import distinct

EPOCH = pd.Timestamp("1970-01-01")


@dataclass(frozen=True, eq=False)
class SalesCodes:
    """What a part is reduced with: the machines' and kept products' codes and the window's end."""

    machine_ids: pd.Series  # machine id -> code (its row in the machines table)
    kept: pd.Series  # sku id -> k (kept products only)
    until: pd.Timestamp | None


@dataclass(frozen=True, eq=False)
class PartSales:
    """One part's reduction (module docstring); machine codes are rows of the machines table."""

    stem: str
    sales: pd.DataFrame  # m, k, day, units, revenue: completed lines of kept products, summed, in (m, k, day) order
    units_all: int  # units of completed lines in the window (every product)
    units_kept: int
    first_ts: pd.Timestamp | None  # of the completed lines of kept products
    last_ts: pd.Timestamp | None
    inv: pd.DataFrame  # m, k, ts, shelf_qty: counts of kept products, in the table's order
    visits: pd.DataFrame  # m, ts of every count (any product), distinct


def _day(ts: pd.Series | np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of each timestamp's date."""
    return ((pd.Series(ts).dt.normalize() - EPOCH) // pd.Timedelta(days=1)).to_numpy(dtype=np.int64)


def _empty_sales() -> pd.DataFrame:
    ints = np.zeros(0, np.int64)
    return pd.DataFrame({"m": ints, "k": ints, "day": ints, "units": ints, "revenue": np.zeros(0)})


def _empty_inv() -> tuple[pd.DataFrame, pd.DataFrame]:
    ints = np.zeros(0, np.int64)
    ts = np.zeros(0, "datetime64[ns]")
    return pd.DataFrame({"m": ints, "k": ints, "ts": ts, "shelf_qty": ints}), pd.DataFrame({"m": ints, "ts": ts})


def part_sales(stem: str, table: pd.DataFrame, codes: SalesCodes) -> PartSales:
    """The reduction of one part (a checked table's typed rows) of the orders or the inventory."""
    inv, visits = _empty_inv()
    if stem == "inventory":
        if codes.until is not None:
            table = table[(table["ts"] < codes.until).to_numpy()]
        m = by_key(table["machine_id"], codes.machine_ids, -1, np.int64)
        k = by_key(table["sku_id"], codes.kept, -1, np.int64)
        counted = k >= 0
        inv = pd.DataFrame(
            {
                "m": m[counted],
                "k": k[counted],
                "ts": table["ts"].to_numpy()[counted],
                "shelf_qty": table["shelf_qty"].to_numpy()[counted],
            }
        )
        visits = pd.DataFrame({"m": m, "ts": table["ts"].to_numpy()}).drop_duplicates(ignore_index=True)
        return PartSales(stem, _empty_sales(), 0, 0, None, None, inv, visits)
    done = (table["status"] == "completed").to_numpy(dtype=bool, copy=True)
    if codes.until is not None:
        done &= (table["ts"] < codes.until).to_numpy()
    qty = table["qty"].to_numpy()
    units_all = int(np.sum(qty, where=done))
    k_all = by_key(table["sku_id"], codes.kept, -1, np.int64)
    rows = np.flatnonzero(done & (k_all >= 0))
    if len(rows) == 0:
        return PartSales(stem, _empty_sales(), units_all, 0, None, None, inv, visits)
    ts = table["ts"].to_numpy()[rows]
    sales = (
        pd.DataFrame(
            {
                "m": by_key(table["machine_id"], codes.machine_ids, -1, np.int64)[rows],
                "k": k_all[rows],
                "day": _day(ts),
                "qty": qty[rows],
                "revenue": qty[rows] * table["unit_price"].to_numpy()[rows],
            }
        )
        .groupby(["m", "k", "day"], as_index=False)[["qty", "revenue"]]
        .sum()
        .rename(columns={"qty": "units"})
    )
    first, last = pd.Timestamp(ts.min()), pd.Timestamp(ts.max())
    return PartSales(stem, sales, units_all, int(qty[rows].sum()), first, last, inv, visits)


@dataclass(frozen=True)
class PartFacts:
    """The small facts of a part that settle the panel's machines and days (`combine`)."""

    units_all: int
    units_kept: int
    first_ts: pd.Timestamp | None
    last_ts: pd.Timestamp | None
    sold: np.ndarray  # machine codes with a completed line of a kept product
    counted: np.ndarray  # machine codes with a visit
    first_visit: pd.Series  # machine code -> its first visit's time
    weight: pd.Series  # machine code -> sales rows plus count rows (the work of building its cells)


def facts(part: PartSales) -> PartFacts:
    """The facts of a part (computed where the part is; they travel instead of its rows)."""
    weight = part.sales.groupby("m").size().add(part.inv.groupby("m").size(), fill_value=0).astype(np.int64)
    return PartFacts(
        part.units_all,
        part.units_kept,
        part.first_ts,
        part.last_ts,
        distinct(part.sales["m"].to_numpy()),
        distinct(part.visits["m"].to_numpy()),
        part.visits.groupby("m")["ts"].min(),
        weight,
    )


@dataclass(frozen=True)
class Frame:
    """What every part says together: the machines of the panel, its first day, the weights of its machines."""

    keep: np.ndarray  # (source machines,) the panel's code of each machine of the machines table, -1 if left out
    sold: np.ndarray  # bool per source machine
    inventoried: np.ndarray  # bool per source machine: it has a visit
    units_all: int
    units_kept: int
    first_ts: pd.Timestamp | None  # of the completed kept lines
    last_ts: pd.Timestamp | None
    first_visit: pd.Timestamp | None  # of the panel's machines' visits
    weight: np.ndarray  # (panel machines,) sales and count rows


def combine(parts: list[PartFacts], n_machines: int) -> Frame:
    """The panel's frame from every part's facts (parts in the source's order)."""
    sold = np.zeros(n_machines, bool)
    inventoried = np.zeros(n_machines, bool)
    for p in parts:
        sold[p.sold] = True
        inventoried[p.counted[p.counted >= 0]] = True
    keep = np.where(sold, np.cumsum(sold) - 1, -1)
    firsts = [p.first_ts for p in parts if p.first_ts is not None]
    lasts = [p.last_ts for p in parts if p.last_ts is not None]
    visit_firsts = [v for p in parts for m, v in p.first_visit.items() if m >= 0 and sold[m]]
    weight = np.zeros(int(sold.sum()), np.int64)
    for p in parts:
        w = p.weight[p.weight.index >= 0]
        codes = keep[w.index.to_numpy()]
        ok = codes >= 0
        np.add.at(weight, codes[ok], w.to_numpy()[ok])
    return Frame(
        keep,
        sold,
        inventoried & sold,
        sum(p.units_all for p in parts),
        sum(p.units_kept for p in parts),
        min(firsts) if firsts else None,
        max(lasts) if lasts else None,
        min(visit_firsts) if visit_firsts else None,
        weight,
    )


@dataclass(frozen=True)
class Pieces:
    """A part's rows of one range of the panel's machines, coded in the panel (m) and its days (d)."""

    sales: pd.DataFrame  # m, k, d, units, revenue
    inv: pd.DataFrame  # m, k, ts, shelf_qty
    visits: pd.DataFrame  # m, ts

    def of(self, lo: int, hi: int) -> Pieces:
        """The rows of machines lo..hi-1 (in their order)."""

        def part(frame: pd.DataFrame) -> pd.DataFrame:
            m = frame["m"].to_numpy()
            return frame[(m >= lo) & (m < hi)]

        return Pieces(part(self.sales), part(self.inv), part(self.visits))


def cut(part: PartSales, keep: np.ndarray, start_day: int, bounds: list[tuple[int, int]]) -> tuple[Pieces, ...]:
    """The part's rows in each machine range [lo, hi) of the panel (machines left out are dropped)."""
    out = []
    s_m = keep[part.sales["m"].to_numpy()] if len(part.sales) else np.zeros(0, np.int64)
    i_m = keep[part.inv["m"].to_numpy()] if len(part.inv) else np.zeros(0, np.int64)
    v_raw = part.visits["m"].to_numpy()
    v_m = np.where(v_raw >= 0, keep[np.maximum(v_raw, 0)], -1) if len(v_raw) else np.zeros(0, np.int64)
    for lo, hi in bounds:
        s = (s_m >= lo) & (s_m < hi)
        sales = pd.DataFrame(
            {
                "m": s_m[s],
                "k": part.sales["k"].to_numpy()[s],
                "d": part.sales["day"].to_numpy()[s] - start_day,
                "units": part.sales["units"].to_numpy()[s],
                "revenue": part.sales["revenue"].to_numpy()[s],
            }
        )
        i = (i_m >= lo) & (i_m < hi)
        inv = pd.DataFrame(
            {
                "m": i_m[i],
                "k": part.inv["k"].to_numpy()[i],
                "ts": part.inv["ts"].to_numpy()[i],
                "shelf_qty": part.inv["shelf_qty"].to_numpy()[i],
            }
        )
        v = (v_m >= lo) & (v_m < hi)
        visits = pd.DataFrame({"m": v_m[v], "ts": part.visits["ts"].to_numpy()[v]})
        out.append(Pieces(sales, inv, visits))
    return tuple(out)


def join(pieces: list[Pieces]) -> Pieces:
    """The pieces of one machine range from every part, as one: sales summed per cell, in (m, k, d) order.

    A cell whose lines lie in one part keeps that part's sums (a flat source, or one partitioned by machine or
    month); one split over parts is summed in the parts' order.
    """
    sales = [p.sales for p in pieces if len(p.sales)]
    if len(sales) == 1:
        joined = sales[0]
    elif sales:
        stacked = pd.concat(sales, ignore_index=True)
        key = stacked[["m", "k", "d"]]
        if key.duplicated().any():
            stacked = stacked.groupby(["m", "k", "d"], as_index=False, sort=True)[["units", "revenue"]].sum()
        else:
            stacked = stacked.sort_values(["m", "k", "d"], kind="stable", ignore_index=True)
        joined = stacked
    else:
        joined = pd.DataFrame({c: pieces[0].sales[c] for c in ("m", "k", "d", "units", "revenue")})
    inv = pd.concat([p.inv for p in pieces], ignore_index=True) if len(pieces) > 1 else pieces[0].inv
    visits = pd.concat([p.visits for p in pieces], ignore_index=True) if len(pieces) > 1 else pieces[0].visits
    return Pieces(joined.reset_index(drop=True), inv, visits.drop_duplicates(ignore_index=True))
