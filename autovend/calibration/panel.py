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
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from autovend.calibration.config import CalibrationConfig
from autovend.data.calendar import build_calendar, calendar_from_table
from autovend.errors import InsufficientDataError


@dataclass(frozen=True)
class Panel:
    """The daily panel; integer codes m, k, d index `machines`, `products` and `days`."""

    machines: pd.DataFrame  # machine_id, site_type, capacity, has_inventory
    products: pd.DataFrame  # sku_id, category_l1, category_l2, ref_price
    days: pd.DataFrame  # date, weekday, is_workday, day_type, holiday_name, t_max_c, precip_mm
    cells: pd.DataFrame  # m, k, d, units, revenue, price, q, censored, known
    rule_cells: pd.DataFrame  # the sales rule applied to machines with inventory (to calibrate the rule)
    machine_days: pd.DataFrame  # m, d, units, fill, known, active
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


def _day_index(ts: pd.Series, start: pd.Timestamp) -> np.ndarray:
    return ((ts.dt.normalize() - start) // pd.Timedelta(days=1)).to_numpy(dtype=np.int64)


def _calendar(source, start: dt.date, end: dt.date) -> pd.DataFrame:
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


def build_panel(source, config: CalibrationConfig) -> Panel:
    """Build the daily panel of a checked source (see the module docstring for the shelf rules)."""
    notes: list[str] = []
    orders = source.orders
    orders = orders[orders["status"] == "completed"]
    inventory = source.inventory
    if config.until is not None:
        cut = pd.Timestamp(config.until)
        orders = orders[orders["ts"] < cut]
        if inventory is not None:
            inventory = inventory[inventory["ts"] < cut]
    if orders.empty:
        raise InsufficientDataError("the daily panel needs completed order lines; the source (window) has none")
    products_all = source.products
    units_all = int(orders["qty"].sum())
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
    orders = orders[orders["sku_id"].isin(k_of.index)]
    if orders.empty:
        raise InsufficientDataError(
            "no completed order line (in the window) sells a product of the kept subcategories; "
            "check `keep_subcategories`"
        )
    units_kept = int(orders["qty"].sum())
    source_machines, inventory = _machines_with_sales(source.machines, orders, inventory, notes)

    start_ts = orders["ts"].min().normalize()
    if inventory is not None and len(inventory):
        start_ts = min(start_ts, inventory["ts"].min().normalize())
    end_ts = orders["ts"].max().normalize()
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
        orders.assign(
            m=m_of.reindex(orders["machine_id"]).to_numpy(),
            k=k_of.reindex(orders["sku_id"]).to_numpy(),
            d=_day_index(orders["ts"], start_ts),
            revenue=orders["qty"] * orders["unit_price"],
        )
        .groupby(["m", "k", "d"], as_index=False)[["qty", "revenue"]]
        .sum()
        .rename(columns={"qty": "units"})
    )
    inv = None
    if inventory is not None and len(inventory):
        inv = inventory[inventory["sku_id"].isin(k_of.index)].assign(
            m=m_of.reindex(inventory.loc[inventory["sku_id"].isin(k_of.index), "machine_id"]).to_numpy(),
            k=k_of.reindex(inventory.loc[inventory["sku_id"].isin(k_of.index), "sku_id"]).to_numpy(),
        )
        # visits of machines whose every counted product is out of scope still count as visits
        visits_all = inventory.assign(m=m_of.reindex(inventory["machine_id"]).to_numpy())[["m", "ts"]].drop_duplicates()
    parts = []
    rule_parts = []
    for m in range(len(machines)):
        s_m = sales[sales["m"] == m]
        if machines["has_inventory"].iat[m]:
            rule_parts.append(_sales_rule_shelves(m, s_m, n_days, config.sales_rule_gap_days))
            part, cap_est = _known_shelves(
                m, s_m, inv[inv["m"] == m], visits_all[visits_all["m"] == m], start_ts, n_days
            )
            if np.isnan(machines["capacity"].iat[m]):
                machines.loc[m, "capacity"] = cap_est
                notes.append(
                    f"machine {machines['machine_id'].iat[m]}: capacity unknown, "
                    f"set to its largest count ({cap_est:.0f})"
                )
        else:
            part = _sales_rule_shelves(m, s_m, n_days, config.sales_rule_gap_days)
        parts.append(part)
    cells = pd.concat(parts, ignore_index=True)
    cells = attach_sales(cells, sales, products)
    empty = pd.DataFrame({"m": [], "k": [], "d": [], "units": [], "q": [], "censored": [], "known": []})
    rule_cells = attach_sales(
        pd.concat(rule_parts or [empty], ignore_index=True).astype(cells.dtypes[empty.columns].to_dict()),
        sales,
        products,
    )
    if machines["capacity"].isna().any():
        # sales-only machines without a capacity: the median capacity of the others, else 200
        fill_cap = float(machines["capacity"].median()) if machines["capacity"].notna().any() else 200.0
        machines["capacity"] = machines["capacity"].fillna(fill_cap)
        notes.append(f"capacity unknown for sales-only machines: set to {fill_cap:.0f}")

    # machine-days: active from a machine's first record to the panel's end
    first = cells.groupby("m")["d"].min()
    md = []
    for m, d0 in first.items():
        md.append(pd.DataFrame({"m": m, "d": np.arange(d0, n_days)}))
    machine_days = pd.concat(md, ignore_index=True) if md else pd.DataFrame({"m": [], "d": []}, dtype=int)
    agg = cells.groupby(["m", "d"]).agg(units=("units", "sum"), q_sum=("q", "sum"), known=("known", "all"))
    machine_days = machine_days.join(agg, on=["m", "d"])
    machine_days["units"] = machine_days["units"].fillna(0).astype(np.int64)
    machine_days["known"] = (
        machine_days["known"]
        .astype("boolean")
        .fillna(pd.Series(machines["has_inventory"].to_numpy()[machine_days["m"].to_numpy()]))
        .astype(bool)
    )
    capm = machines["capacity"].to_numpy()[machine_days["m"].to_numpy()]
    machine_days["fill"] = np.where(
        machine_days["known"], np.minimum(machine_days["q_sum"].fillna(0.0) / capm, 1.0), np.nan
    )
    machine_days = machine_days.drop(columns="q_sum")
    machine_days["active"] = True

    return Panel(
        machines=machines,
        products=products,
        days=days.reset_index(drop=True),
        cells=cells,
        rule_cells=rule_cells,
        machine_days=machine_days,
        kept_unit_share=units_kept / units_all if units_all else float("nan"),
        units_all=units_all,
        units_kept=units_kept,
        source_hash=source.content_hash,
        notes=notes,
    )


def _machines_with_sales(
    machines: pd.DataFrame, orders: pd.DataFrame, inventory: pd.DataFrame | None, notes: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The machines with at least one of `orders` (completed, kept) and their inventory; a note names the rest.

    A machine that sold nothing informs no estimate (and would leave no cell in the panel), so it is left out.
    """
    sold = machines["machine_id"].isin(orders["machine_id"].unique()).to_numpy()
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


def _known_shelves(
    m: int,
    s_m: pd.DataFrame,
    inv_m: pd.DataFrame,
    visits_m: pd.DataFrame,
    start_ts: pd.Timestamp,
    n_days: int,
) -> tuple[pd.DataFrame, float]:
    """Cells of one machine with inventory records: opening shelf q of each day, censoring flags."""
    prods = np.union1d(s_m["k"].unique(), inv_m["k"].unique()).astype(int)
    col = {k: i for i, k in enumerate(prods)}
    P = len(prods)
    sold = np.zeros((n_days, P))
    if len(s_m):
        np.add.at(sold, (s_m["d"].to_numpy(), [col[k] for k in s_m["k"]]), s_m["units"].to_numpy())
    # visits: the last full count of each day; absent products are at 0
    visits = visits_m.assign(d=_day_index(visits_m["ts"], start_ts)).sort_values("ts")
    last_ts = visits.groupby("d")["ts"].max()
    count = np.full((n_days, P), np.nan)
    count[last_ts.index.to_numpy()] = 0.0
    rows = inv_m.assign(d=_day_index(inv_m["ts"], start_ts))
    rows = rows[rows["ts"].to_numpy() == last_ts.reindex(rows["d"]).to_numpy()]
    if len(rows):
        count[rows["d"].to_numpy(), [col[k] for k in rows["k"]]] = rows["shelf_qty"].to_numpy()
    cap_est = float(np.nanmax(np.nansum(np.where(np.isnan(count), 0, count), axis=1))) if P else 0.0
    # opening shelf: q(d) = count(c) - sales(c..d-1) for the last count day c <= d
    cum_before = np.vstack([np.zeros((1, P)), np.cumsum(sold, axis=0)[:-1]])
    anchor = pd.DataFrame(count + cum_before).ffill().to_numpy()
    q = anchor - cum_before
    known_day = ~np.isnan(anchor).all(axis=1) if P else np.zeros(n_days, bool)
    q = np.where(np.isnan(q), np.nan, np.maximum(q, 0.0))
    present = (np.nan_to_num(q) > 0) | (sold > 0)
    dd, pp = np.nonzero(present)
    units = sold[dd, pp]
    qq = q[dd, pp]
    # a sale recorded when the reconstructed shelf is empty: the shelf held at least the units sold
    qq = np.where(np.isnan(qq) | (qq < units), units, qq)
    known = known_day[dd]
    return (
        pd.DataFrame(
            {
                "m": m,
                "k": prods[pp],
                "d": dd,
                "units": units.astype(np.int64),
                "q": np.where(known, qq, np.nan),
                "censored": known & (units >= qq) & (units > 0),
                "known": known,
            }
        ),
        cap_est,
    )


def _sales_rule_shelves(m: int, s_m: pd.DataFrame, n_days: int, gap: int) -> pd.DataFrame:
    """Cells of one sales-only machine: offered on sale days and through gaps of at most `gap` days."""
    if s_m.empty:
        return pd.DataFrame({"m": [], "k": [], "d": [], "units": [], "q": [], "censored": [], "known": []})
    prods = np.sort(s_m["k"].unique()).astype(int)
    col = {k: i for i, k in enumerate(prods)}
    sold = np.zeros((n_days, len(prods)))
    np.add.at(sold, (s_m["d"].to_numpy(), [col[k] for k in s_m["k"]]), s_m["units"].to_numpy())
    day = np.arange(n_days, dtype=float)[:, None] * np.ones((1, len(prods)))
    sale_day = np.where(sold > 0, day, np.nan)
    last = pd.DataFrame(sale_day).ffill().to_numpy()
    nxt = pd.DataFrame(sale_day).bfill().to_numpy()
    offered = (sold > 0) | ((nxt - last) <= gap)
    dd, pp = np.nonzero(offered)
    return pd.DataFrame(
        {
            "m": m,
            "k": prods[pp],
            "d": dd,
            "units": sold[dd, pp].astype(np.int64),
            "q": np.nan,
            "censored": False,
            "known": False,
        }
    )


def attach_sales(cells: pd.DataFrame, sales: pd.DataFrame, products: pd.DataFrame) -> pd.DataFrame:
    """Join revenue to cells and derive the price in force.

    The price in force is the mean charged price on sale days, carried forward (then backward) to the
    other days of the same machine and product; the reference price if it never sold there.
    """
    out = cells.merge(sales[["m", "k", "d", "revenue"]], on=["m", "k", "d"], how="left")
    out = out.sort_values(["m", "k", "d"], kind="stable").reset_index(drop=True)
    out["revenue"] = out["revenue"].fillna(0.0)
    price = np.where(out["units"] > 0, out["revenue"] / out["units"].where(out["units"] > 0, 1), np.nan)
    out["price"] = price
    g = out.groupby(["m", "k"], sort=False)["price"]
    out["price"] = g.ffill()
    out["price"] = out["price"].fillna(out.groupby(["m", "k"], sort=False)["price"].bfill())
    ref = products["ref_price"].to_numpy()[out["k"].to_numpy()]
    out["price"] = out["price"].fillna(pd.Series(ref, index=out.index))
    return out
