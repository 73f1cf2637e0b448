"""The daily panel: machine x product x day units, revenue, prices and shelves, with calendar and weather.

Shelves. For a machine with inventory records, a count is the shelf right after a visit: a product
counted at 0, or absent from a full count (all rows of a machine with the same timestamp), is off the
shelf from then on. The shelf of a day is the last count at or before it minus the units sold since;
a count on a day is taken as that day's opening shelf (the model realises a day's demand on the shelf
left by the day's visit). Before a machine's first count its shelves are unknown. For a machine without
inventory records a product is offered on each day it sold and on every day between two sales at
most G days apart (`sales_rule_gap_days`); its quantities are unknown.

Only the kept subcategories enter the panel; the fill fraction F counts kept units (out-of-scope goods
are taken to sit in their own compartment).

The panel is sparse: it holds only the cells on the shelf or sold, built from the records' events
(counts, sales, the gaps between sales) with no machine x product x day grid, so its memory and
time grow with those cells.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from autovend.calibration.cells import Keys, Records, cells_by_block, day_index, expand, rule_cells_by_block
from autovend.calibration.config import CalibrationConfig
from autovend.data.calendar import build_calendar, calendar_from_table
from autovend.data.keys import by_key
from autovend.data.load import Source
from autovend.errors import InsufficientDataError


@dataclass(frozen=True)
class Panel:
    """The daily panel; integer codes m, k, d index `machines`, `products` and `days`."""

    machines: pd.DataFrame  # machine_id, site_type, capacity, has_inventory
    products: pd.DataFrame  # sku_id, category_l1, category_l2, ref_price
    days: pd.DataFrame  # date, weekday, is_workday, day_type, holiday_name, t_max_c, precip_mm
    cells: pd.DataFrame  # m, k, d, units, revenue, price, q, censored, known
    machine_days: pd.DataFrame  # m, d, units, fill, known, active
    sales_rule_gap_days: int  # G of the sales rule (see `rule_cells`)
    kept_unit_share: float
    units_all: int
    units_kept: int
    source_hash: str
    notes: list[str] = field(default_factory=list)

    @property
    def n_machines(self) -> int:
        """Number of machines."""
        return len(self.machines)

    @property
    def n_products(self) -> int:
        """Number of kept products."""
        return len(self.products)

    @property
    def n_days(self) -> int:
        """Number of days in the panel."""
        return len(self.days)

    def rule_cells(self) -> Iterator[pd.DataFrame]:
        """The sales rule applied to the machines with inventory records (to calibrate it), in machine blocks.

        Rebuilt from the cells on each call rather than held: every sale of such a machine is a cell
        (an order line sells at least one unit). Blocks of whole machines, in machine order, bound the
        working arrays as in `build_panel`.
        """
        has_inv = self.machines["has_inventory"].to_numpy()
        keys = Keys(self.n_products, self.n_days)
        return rule_cells_by_block(self.cells, has_inv, keys, self.sales_rule_gap_days, self.products)


def _calendar(source: Source, start: dt.date, end: dt.date) -> pd.DataFrame:
    if source.calendar is not None:
        cal = calendar_from_table(source.calendar)
        cal = cal[(cal["date"] >= pd.Timestamp(start)) & (cal["date"] <= pd.Timestamp(end))]
        if len(cal) < (end - start).days + 1:
            missing = (end - start).days + 1 - len(cal)
            raise InsufficientDataError(
                f"calendar.csv covers {len(cal)} of the {missing + len(cal)} days from {start} to {end}; "
                "add the missing dates or delete calendar.csv to use the public-holiday library"
            )
        return cal.reset_index(drop=True)
    language = "zh_CN" if source.meta.country == "CN" else None
    return build_calendar(source.meta.country, start, end, language=language)


def build_panel(source: Source, config: CalibrationConfig) -> Panel:
    """Build the daily panel of a checked source (see the module docstring for the shelf rules)."""
    notes: list[str] = []
    # the completed order lines as codes and numbers (the id columns are factorised once, never copied)
    orders = source.orders
    m_codes, m_ids = pd.factorize(orders["machine_id"])
    k_codes, k_ids = pd.factorize(orders["sku_id"])
    done = (orders["status"] == "completed").to_numpy(dtype=bool, copy=True)  # Arrow's own may be read-only
    inventory = source.inventory
    if config.until is not None:
        cut = pd.Timestamp(config.until)
        done &= (orders["ts"] < cut).to_numpy()
        if inventory is not None:
            inventory = inventory[inventory["ts"] < cut]
    if not done.any():
        raise InsufficientDataError("the daily panel needs completed order lines; the source (window) has none")
    qty = orders["qty"].to_numpy()
    units_all = int(np.sum(qty, where=done))
    products_all = source.products
    kept_subs = config.keep_subcategories
    if kept_subs is None:
        kept_mask = np.ones(len(products_all), dtype=bool)
    else:
        unknown = sorted(set(kept_subs) - set(products_all["category_l2"]))
        if unknown:
            notes.append(f"kept subcategories not in the source: {unknown}")
        kept_mask = products_all["category_l2"].isin(kept_subs).to_numpy()
    products = products_all.loc[kept_mask, ["sku_id", "category_l1", "category_l2", "ref_price"]].reset_index(drop=True)
    if products.empty:
        raise InsufficientDataError("no product of the source is in the kept subcategories; check `keep_subcategories`")
    k_of = pd.Series(np.arange(len(products)), index=products["sku_id"])
    k_of_id = k_of.reindex(k_ids).fillna(-1).to_numpy(dtype=np.int64)  # -1: a product not kept
    rows = np.flatnonzero(done & (k_of_id[k_codes] >= 0))  # the completed lines of kept products
    del done
    if len(rows) == 0:
        raise InsufficientDataError(
            "no completed order line (in the window) sells a product of the kept subcategories; "
            "check `keep_subcategories`"
        )
    units_kept = int(qty[rows].sum())
    sold_ids = m_ids[np.unique(m_codes[rows])]
    source_machines, inventory = _machines_with_sales(source.machines, sold_ids, inventory, notes)
    ts = orders["ts"].to_numpy()[rows]

    start_ts = pd.Timestamp(ts.min()).normalize()
    if inventory is not None and len(inventory):
        start_ts = min(start_ts, inventory["ts"].min().normalize())
    end_ts = pd.Timestamp(ts.max()).normalize()
    if config.until is not None:
        end_ts = max(end_ts, pd.Timestamp(config.until) - pd.Timedelta(days=1))
    n_days = int((end_ts - start_ts) / pd.Timedelta(days=1)) + 1
    if n_days < config.min_panel_days:
        raise InsufficientDataError(
            f"the daily panel needs at least {config.min_panel_days} days of records; "
            f"the source spans {n_days} "
            f"({start_ts.date()} to {end_ts.date()})"
        )
    days = _calendar(source, start_ts.date(), end_ts.date())
    days["weekday"] = days["date"].dt.day_of_week
    if source.weather is not None:
        wx = source.weather.set_index("date")[["t_max_c", "precip_mm"]]
        days = days.join(wx, on="date")
    else:
        days["t_max_c"] = np.nan
        days["precip_mm"] = np.nan
    if source.weather is None:
        notes.append("no weather.csv: weather is neutral on every day")

    machines = source_machines[["machine_id", "site_type"]].copy()
    cap = source_machines["capacity"] if "capacity" in source_machines else pd.Series(np.nan, index=machines.index)
    machines["capacity"] = cap.astype(float).to_numpy()
    inv_ids = set() if inventory is None else set(inventory["machine_id"].unique())
    machines["has_inventory"] = machines["machine_id"].isin(inv_ids)
    m_of = pd.Series(np.arange(len(machines)), index=machines["machine_id"])

    sales = (
        pd.DataFrame(
            {
                "m": m_of.reindex(m_ids).fillna(-1).to_numpy(dtype=np.int64)[m_codes[rows]],
                "k": k_of_id[k_codes[rows]],
                "d": day_index(pd.Series(ts), start_ts),
                "qty": qty[rows],
                "revenue": qty[rows] * orders["unit_price"].to_numpy()[rows],
            }
        )
        .groupby(["m", "k", "d"], as_index=False)[["qty", "revenue"]]
        .sum()
        .rename(columns={"qty": "units"})
    )
    del orders, m_codes, k_codes, rows, ts  # the order lines are summed into sales from here on
    inv = visits_all = None
    if inventory is not None and len(inventory):
        i_m = by_key(inventory["machine_id"], m_of, -1, np.int64)  # every counted machine sold (`_machines_with_sales`)
        i_k = by_key(inventory["sku_id"], k_of, -1, np.int64)
        counted = i_k >= 0
        inv = pd.DataFrame(
            {
                "m": i_m[counted],
                "k": i_k[counted],
                "ts": inventory["ts"].to_numpy()[counted],
                "shelf_qty": inventory["shelf_qty"].to_numpy()[counted],
            }
        )
        # visits of machines whose every counted product is out of scope still count as visits
        visits_all = pd.DataFrame({"m": i_m, "ts": inventory["ts"].to_numpy()}).drop_duplicates()
    has_inv = machines["has_inventory"].to_numpy()
    keys = Keys(len(products), n_days)
    inv_m = np.flatnonzero(has_inv)
    cells, cap_est = cells_by_block(
        Records(sales, inv, visits_all, has_inv, start_ts), keys, config.sales_rule_gap_days, products
    )
    del sales, inv, visits_all
    for m in inv_m.tolist():
        if np.isnan(machines["capacity"].iat[m]):
            machines.loc[m, "capacity"] = cap_est.get(m, 0.0)
            notes.append(
                f"machine {machines['machine_id'].iat[m]}: capacity unknown, "
                f"set to its largest count ({cap_est.get(m, 0.0):.0f})"
            )
    if machines["capacity"].isna().any():
        # sales-only machines without a capacity: the median capacity of the others, else 200
        fill_cap = float(machines["capacity"].median()) if machines["capacity"].notna().any() else 200.0
        machines["capacity"] = machines["capacity"].fillna(fill_cap)
        notes.append(f"capacity unknown for sales-only machines: set to {fill_cap:.0f}")

    # machine-days: active from a machine's first record to the panel's end
    machine_days = _machine_days(cells, machines, n_days)

    return Panel(
        machines=machines,
        products=products,
        days=days.reset_index(drop=True),
        cells=cells,
        machine_days=machine_days,
        sales_rule_gap_days=config.sales_rule_gap_days,
        kept_unit_share=units_kept / units_all if units_all else float("nan"),
        units_all=units_all,
        units_kept=units_kept,
        source_hash=source.content_hash,
        notes=notes,
    )


def _machine_days(cells: pd.DataFrame, machines: pd.DataFrame, n_days: int) -> pd.DataFrame:
    """Each machine's days from its first cell to the panel's end: units, whether all shelves are known, fill.

    Sums by bincount over a machine-day position per cell (cells come in machine order), not a groupby:
    a few values a cell at operator scale. Units and shelf counts are whole numbers, so the sums are exact.
    A day without cells has its machine's shelf knowledge (known if it has inventory records) and 0 units.
    """
    m = cells["m"].to_numpy()
    d = cells["d"].to_numpy().astype(np.int64)
    starts = np.flatnonzero(np.r_[True, m[1:] != m[:-1]])
    present = m[starts].astype(np.int64)
    first = np.minimum.reduceat(d, starts)
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
    known = np.where(has_cells, ~unknown, machines["has_inventory"].to_numpy()[m_md])
    capm = machines["capacity"].to_numpy()[m_md]
    fill = np.where(known, np.minimum(q_sum / capm, 1.0), np.nan)
    return pd.DataFrame({"m": m_md, "d": md_d, "units": units, "known": known, "fill": fill, "active": True})


def _machines_with_sales(
    machines: pd.DataFrame, sold_ids: pd.Index, inventory: pd.DataFrame | None, notes: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The machines among `sold_ids` (a completed, kept order line) and their inventory; a note names the rest.

    A machine that sold nothing informs no estimate (and would leave no cell in the panel), so it is left out.
    """
    sold = machines["machine_id"].isin(sold_ids).to_numpy()
    if sold.all():
        return machines, inventory
    idle = sorted(machines.loc[~sold, "machine_id"].astype(str))
    shown = ", ".join(idle[:10]) + (f" and {len(idle) - 10} more" if len(idle) > 10 else "")
    notes.append(
        f"{len(idle)} machine{'s' if len(idle) != 1 else ''} without any sale of a kept product "
        f"left out of the calibration: {shown}"
    )
    kept = machines[sold].reset_index(drop=True)
    if inventory is not None:
        inventory = inventory[inventory["machine_id"].isin(kept["machine_id"])]
    return kept, inventory
