"""The panel's cells, built from the records' events (counts, sales, the gaps between sales).

The shelf rules are `autovend.calibration.panel`'s. Machines are independent here, so the cells are
built for blocks of whole machines (`machine_blocks`, about BLOCK_ROWS sales and count rows each): the
working arrays (a dozen values a cell) are held for one block at a time, and memory grows with the
cells the panel keeps, never with machines x products x days.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd


def day_index(ts: pd.Series, start: pd.Timestamp) -> np.ndarray:
    """Day code of each timestamp: whole days since `start` (a midnight)."""
    return ((ts.dt.normalize() - start) // pd.Timedelta(days=1)).to_numpy(dtype=np.int64)


@dataclass(frozen=True)
class Keys:
    """One int64 key per machine x product x day cell, ordered as (m, k, d): (m * K + k) * n_days + d."""

    n_products: int
    n_days: int

    def of(self, m: np.ndarray, k: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The keys of the cells (m, k, d)."""
        return (m.astype(np.int64) * self.n_products + k) * self.n_days + d

    def split(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(m, k, d) of the keys."""
        pair, d = np.divmod(key, self.n_days)
        m, k = np.divmod(pair, self.n_products)
        return m, k, d


def _cells_frame(
    keys: Keys, key: np.ndarray, units: np.ndarray, q: np.ndarray, censored: np.ndarray, known: np.ndarray
) -> pd.DataFrame:
    """The cells with these keys as a frame with the panel's cell columns (revenue and price come later)."""
    m, k, d = (c.astype(np.int32) for c in keys.split(key))  # int32 codes: a panel may hold tens of millions
    return pd.DataFrame(
        {"m": m, "k": k, "d": d, "units": units.astype(np.int32), "q": q, "censored": censored, "known": known}
    )


def _concat_sorted(parts: list[pd.DataFrame], keys: Keys) -> pd.DataFrame:
    """Cell frames of disjoint machines, in (m, k, d) order."""
    key = np.concatenate([keys.of(p["m"].to_numpy(), p["k"].to_numpy(), p["d"].to_numpy()) for p in parts])
    order = np.argsort(key, kind="stable")
    del key
    # column by column, so at most one column is held twice (a panel may hold tens of millions of cells)
    return pd.DataFrame({c: np.concatenate([p[c].to_numpy() for p in parts])[order] for c in parts[0].columns})


BLOCK_ROWS = 1 << 19  # sales and count rows per block of machines whose cells are built together


@dataclass(frozen=True)
class Records:
    """What the cells are built from: the (m, k, d) sales in (m, k, d) order and the kept products' counts."""

    sales: pd.DataFrame  # m, k, d, units, revenue
    inv: pd.DataFrame | None  # m, k, ts, shelf_qty
    visits: pd.DataFrame | None  # m, ts of every visit
    has_inv: np.ndarray  # (machines,) whether the machine has inventory records
    start_ts: pd.Timestamp

    def blocks(self) -> list[tuple[int, int]]:
        """Consecutive machine ranges [lo, hi) of about BLOCK_ROWS sales and count rows each (whole machines)."""
        n = len(self.has_inv)
        weight = np.bincount(self.sales["m"].to_numpy(), minlength=n)
        if self.inv is not None:
            weight = weight + np.bincount(self.inv["m"].to_numpy(), minlength=n)
        return machine_blocks(weight)

    def of(self, lo: int, hi: int) -> Records:
        """The records of machines lo..hi-1."""
        s_m = self.sales["m"].to_numpy()
        sales = self.sales.iloc[int(np.searchsorted(s_m, lo)) : int(np.searchsorted(s_m, hi))]

        def part(frame: pd.DataFrame | None) -> pd.DataFrame | None:
            if frame is None:
                return None
            m = frame["m"].to_numpy()
            return frame[(m >= lo) & (m < hi)]

        return Records(sales, part(self.inv), part(self.visits), self.has_inv, self.start_ts)


def machine_blocks(weight: np.ndarray, size: int | None = None) -> list[tuple[int, int]]:
    """Consecutive machine ranges [lo, hi) holding about `size` (default BLOCK_ROWS) of `weight` each."""
    size = BLOCK_ROWS if size is None else size
    bounds, held = [0], 0
    for m, w in enumerate(weight.tolist()):
        if held and w and held + w > size:  # machines without rows join the block they follow
            bounds.append(m)
            held = 0
        held += w
    return list(zip(bounds, [*bounds[1:], len(weight)], strict=True))


def cells_by_block(rec: Records, keys: Keys, gap: int, products: pd.DataFrame) -> tuple[pd.DataFrame, dict[int, float]]:
    """The panel's cells and the largest counts of the machines with inventory.

    Machines are independent here, so they are taken in blocks (`Records.blocks`): the working arrays
    (a dozen values per cell) are held for one block at a time, and the panel's memory grows with its
    cells only. Each block's cells come out in (m, k, d) order, so their concatenation is in order.
    """
    blocks = rec.blocks()
    cells = _Columns()
    cap_est: dict[int, float] = {}
    for lo, hi in blocks:
        block, cap = block_cells(rec.of(lo, hi) if len(blocks) > 1 else rec, keys, gap, products)
        cap_est.update(cap)
        cells.add(block)
        del block
    return cells.frame(), cap_est


def block_cells(part: Records, keys: Keys, gap: int, products: pd.DataFrame) -> tuple[pd.DataFrame, dict[int, float]]:
    """The cells of one block of whole machines (in (m, k, d) order) and the largest counts of its machines."""
    with_inv = part.has_inv[part.sales["m"].to_numpy()]
    known, cap = known_shelves(part.sales[with_inv], part.inv, part.visits, part.start_ts, keys)
    rule = sales_rule_shelves(part.sales[~with_inv], gap, keys)
    return attach_sales(_concat_sorted([known, rule], keys), part.sales, products), cap


class _Columns:
    """Frames with the same columns collected block by block, then stacked one column at a time."""

    def __init__(self) -> None:
        self.single: pd.DataFrame | None = None  # the first block's frame, while it is the only one
        self.parts: dict[str, list[np.ndarray]] = {}
        self.blocks = 0

    def add(self, frame: pd.DataFrame) -> None:
        """Keep a block's frame; once there are two, every block's columns are held as arrays of their own."""
        self.blocks += 1
        if self.blocks == 1:
            self.single = frame
            return
        if self.single is not None:
            self._own(self.single)
            self.single = None
        self._own(frame)

    def _own(self, frame: pd.DataFrame) -> None:
        for name in frame.columns:  # copies, so the block's working frame (and its 2-D blocks) can go
            self.parts.setdefault(name, []).append(np.array(frame[name].to_numpy(), copy=True))

    def frame(self) -> pd.DataFrame:
        """The blocks one after the other; each column's pieces are freed as soon as it is stacked."""
        if self.single is not None:
            return self.single
        return pd.DataFrame({name: np.concatenate(self.parts.pop(name)) for name in list(self.parts)}, copy=False)


def rule_cells_by_block(
    cells: pd.DataFrame, has_inv: np.ndarray, keys: Keys, gap: int, products: pd.DataFrame
) -> Iterator[pd.DataFrame]:
    """The sales rule applied to the machines with inventory records, rebuilt from their sale cells.

    Every sale of such a machine is a cell (an order line sells at least one unit). Blocks of whole
    machines, in machine order, of a quarter of BLOCK_ROWS sales (a sale spreads over many rule cells).
    """
    m = cells["m"].to_numpy()
    sold = np.flatnonzero(has_inv[m] & (cells["units"].to_numpy() > 0))
    weight = np.bincount(m[sold], minlength=len(has_inv))
    bounds = np.searchsorted(m[sold], [lo for lo, _ in machine_blocks(weight, BLOCK_ROWS // 4)] + [len(has_inv)])
    for start, stop in itertools.pairwise(bounds.tolist()):
        rows = sold[start:stop]
        sales = pd.DataFrame({c: cells[c].to_numpy()[rows] for c in ("m", "k", "d", "units", "revenue")})
        yield attach_sales(sales_rule_shelves(sales, gap, keys), sales, products)


def expand(start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs of consecutive integers (start, length): the run of each element and the element."""
    run = np.repeat(np.arange(len(start)), length)
    offset = np.cumsum(length) - length
    return run, start[run] + (np.arange(len(run)) - offset[run])


def known_shelves(
    sales: pd.DataFrame,
    inv: pd.DataFrame | None,
    visits: pd.DataFrame | None,
    start_ts: pd.Timestamp,
    keys: Keys,
) -> tuple[pd.DataFrame, dict[int, float]]:
    """Cells of the machines with inventory records (the module docstring's rules), and their largest counts.

    Built from events only, never a day x product grid: a count c > 0 at a visit opens a run of days up
    to the machine's next visit, on which the opening shelf is c minus the units sold since the count;
    the run's days with a positive shelf or a sale are cells. A sale outside every such run is a cell
    whose shelf is the units sold (after a visit: a count of 0 or a product absent from a full count) or
    unknown (before the machine's first visit). `sales` holds the (m, k, d) sales of these machines in
    (m, k, d) order; `visits` the (m, ts) of every visit; `inv` the kept products' counts with m and k.
    """
    n_days = keys.n_days
    s_key = keys.of(sales["m"].to_numpy(), sales["k"].to_numpy(), sales["d"].to_numpy())
    s_units = sales["units"].to_numpy(dtype=np.int64)
    if visits is None or inv is None:
        unknown = np.zeros(len(s_key), bool)
        return _cells_frame(keys, s_key, s_units, np.full(len(s_key), np.nan), unknown, unknown), {}
    # each day's last visit of each machine (a visit after the panel's last day opens no cell)
    v = visits.assign(d=day_index(visits["ts"], start_ts))
    v = v[v["d"] < n_days].groupby(["m", "d"], as_index=False)["ts"].max()
    v_m, v_d = v["m"].to_numpy(dtype=np.int64), v["d"].to_numpy(dtype=np.int64)
    first_visit = v.groupby("m")["d"].min()
    # the counts of those visits: one per product (the file's last row if a product is counted twice)
    rows = inv.assign(d=day_index(inv["ts"], start_ts)).merge(v, on=["m", "d"], suffixes=("", "_last"))
    rows = rows[rows["ts"].to_numpy() == rows["ts_last"].to_numpy()].drop_duplicates(["m", "d", "k"], keep="last")
    cap = rows.groupby(["m", "d"])["shelf_qty"].sum().groupby("m").max()
    cap_est = {int(m): float(max(c, 0)) for m, c in cap.items()}
    pos = rows[rows["shelf_qty"] > 0]
    c_m, c_k, c_d = (pos[c].to_numpy(dtype=np.int64) for c in ("m", "k", "d"))
    count = pos["shelf_qty"].to_numpy(dtype=np.int64)
    # each count's run ends at its machine's next visit
    v_key = v_m * (n_days + 1) + v_d
    nxt = np.searchsorted(v_key, c_m * (n_days + 1) + c_d, side="right")
    nxt_c = np.minimum(nxt, len(v_key) - 1)
    end = np.where((nxt < len(v_key)) & (v_m[nxt_c] == c_m), v_d[nxt_c], n_days)
    run, day = expand(c_d, end - c_d)
    r_key = keys.of(c_m[run], c_k[run], day)
    at = np.minimum(np.searchsorted(s_key, r_key), max(len(s_key) - 1, 0))
    hit = (at < len(s_key)) & (s_key[at] == r_key) if len(s_key) else np.zeros(len(r_key), bool)
    sold = np.where(hit, s_units[at] if len(s_key) else 0, 0)
    cum = np.cumsum(sold)
    first = np.cumsum(end - c_d) - (end - c_d)  # position of each run's first day
    before = cum - sold - (cum[first] - sold[first])[run]  # units sold in the run before the day
    shelf = count[run] - before
    keep = (shelf > 0) | (sold > 0)
    shelf, sold = np.maximum(shelf[keep], sold[keep]), sold[keep]
    covered = np.zeros(len(s_key), bool)
    covered[at[hit]] = True
    # sales outside every run: after a visit the shelf was empty (it held at least the units sold)
    o_key, o_units = s_key[~covered], s_units[~covered]
    o_m = keys.split(o_key)[0]
    o_known = keys.split(o_key)[2] >= first_visit.reindex(o_m).fillna(n_days).to_numpy()
    out = _cells_frame(
        keys,
        np.concatenate([r_key[keep], o_key]),
        np.concatenate([sold, o_units]),
        np.concatenate([shelf.astype(float), np.where(o_known, o_units, np.nan)]),
        np.concatenate([sold >= shelf, o_known]) & (np.concatenate([sold, o_units]) > 0),
        np.concatenate([np.ones(len(sold), bool), o_known]),
    )
    order = np.argsort(keys.of(out["m"].to_numpy(), out["k"].to_numpy(), out["d"].to_numpy()), kind="stable")
    return out.iloc[order].reset_index(drop=True), cap_est


def sales_rule_shelves(sales: pd.DataFrame, gap: int, keys: Keys) -> pd.DataFrame:
    """Cells of sales-only machines: offered on sale days and on the days between two sales at most `gap` apart.

    `sales` holds the (m, k, d) sales of these machines in (m, k, d) order.
    """
    s_key = keys.of(sales["m"].to_numpy(), sales["k"].to_numpy(), sales["d"].to_numpy())
    units = sales["units"].to_numpy(dtype=np.int64)
    step = np.diff(s_key)
    same_pair = (s_key[1:] // keys.n_days) == (s_key[:-1] // keys.n_days)
    bridge = np.flatnonzero(same_pair & (step <= gap) & (step > 1))
    _, gap_key = expand(s_key[bridge] + 1, step[bridge] - 1)
    key = np.concatenate([s_key, gap_key])
    order = np.argsort(key, kind="stable")
    n = len(key)
    return _cells_frame(
        keys,
        key[order],
        np.concatenate([units, np.zeros(len(gap_key), np.int64)])[order],
        np.full(n, np.nan),
        np.zeros(n, bool),
        np.zeros(n, bool),
    )


def attach_sales(cells: pd.DataFrame, sales: pd.DataFrame, products: pd.DataFrame) -> pd.DataFrame:
    """Join revenue to cells (in (m, k, d) order) and derive the price in force.

    The price in force is the mean charged price on sale days, carried forward (then backward) to the
    other days of the same machine and product; the reference price if it never sold there.
    """
    K = len(products)
    n_days = int(max(cells["d"].max() if len(cells) else 0, sales["d"].max() if len(sales) else 0)) + 1
    keys = Keys(K, n_days)
    c_key = keys.of(cells["m"].to_numpy(), cells["k"].to_numpy(), cells["d"].to_numpy())
    s_key = keys.of(sales["m"].to_numpy(), sales["k"].to_numpy(), sales["d"].to_numpy())
    if len(c_key) > 1 and not np.all(c_key[1:] >= c_key[:-1]):  # panels come sorted: no copy then
        order = np.argsort(c_key, kind="stable")
        cells, c_key = cells.iloc[order], c_key[order]
    out = cells.copy(deep=False)  # the columns are shared; the caller's frame gets no new columns or index
    out.index = pd.RangeIndex(len(out))
    s_order = np.argsort(s_key, kind="stable")
    s_key = s_key[s_order]
    at = np.minimum(np.searchsorted(s_key, c_key), max(len(s_key) - 1, 0))
    hit = (s_key[at] == c_key) if len(s_key) else np.zeros(len(c_key), bool)
    revenue = np.where(hit, sales["revenue"].to_numpy(dtype=float)[s_order][at] if len(s_key) else 0.0, 0.0)
    out["revenue"] = revenue
    if len(out) == 0:
        out["price"] = np.zeros(0)
        return out
    units = out["units"].to_numpy()
    price = np.where(units > 0, revenue / np.where(units > 0, units, 1), np.nan)
    # carry each pair's charged prices forward, then backward, within the pair
    pair = c_key // n_days
    n = len(pair)
    start = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    first = np.repeat(start, np.diff(np.r_[start, n]))
    idx = np.arange(n)
    fwd = np.maximum.accumulate(np.where(np.isnan(price), -1, idx))
    fwd = np.where(fwd >= first, fwd, -1)
    last = np.repeat(np.r_[start[1:], n] - 1, np.diff(np.r_[start, n]))
    bwd = np.minimum.accumulate(np.where(np.isnan(price), n, idx)[::-1])[::-1]
    bwd = np.where(bwd <= last, bwd, -1)
    src = np.where(fwd >= 0, fwd, bwd)
    ref = products["ref_price"].to_numpy(dtype=float)[out["k"].to_numpy()]
    out["price"] = np.where(src >= 0, price[np.maximum(src, 0)], ref)
    return out


def machine_days(cells: pd.DataFrame, capacity: np.ndarray, has_inv: np.ndarray, n_days: int) -> pd.DataFrame:
    """Each machine's days from its first cell to the panel's end: units, whether all shelves are known, fill.

    Sums by bincount over a machine-day position per cell (cells come in machine order), not a groupby:
    a few values a cell at operator scale. Units and shelf counts are whole numbers, so the sums are exact.
    A day without cells has its machine's shelf knowledge (known if it has inventory records) and 0 units.
    `capacity` (per machine) sets the fill of the days with known shelves.
    """
    m = cells["m"].to_numpy()
    d = cells["d"].to_numpy().astype(np.int64)
    starts = np.flatnonzero(np.r_[True, m[1:] != m[:-1]]) if len(m) else np.zeros(0, np.int64)
    present = m[starts].astype(np.int64)
    first = np.minimum.reduceat(d, starts) if len(m) else np.zeros(0, np.int64)
    length = n_days - first
    md_m, md_d = expand(first, length)
    run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(m)]))  # each cell's machine, in `present`
    at = (np.cumsum(length) - length - first)[run] + d  # the machine's first machine-day, plus days since its first
    del run
    n = len(md_m)
    units = np.bincount(at, weights=cells["units"].to_numpy(), minlength=n).astype(np.int64)
    q_sum = np.bincount(at, weights=np.nan_to_num(cells["q"].to_numpy(dtype=float), nan=0.0), minlength=n)
    has_cells = np.bincount(at, minlength=n) > 0
    unknown = np.bincount(at, weights=~cells["known"].to_numpy(), minlength=n) > 0
    del at
    m_md = present[md_m]
    known = np.where(has_cells, ~unknown, has_inv[m_md])
    capm = capacity[m_md]
    fill = np.where(known, np.minimum(q_sum / capm, 1.0), np.nan)
    return pd.DataFrame({"m": m_md, "d": md_d, "units": units, "known": known, "fill": fill, "active": True})
