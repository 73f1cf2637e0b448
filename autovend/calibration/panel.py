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
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.blocks import build_group
from autovend.calibration.cells import Keys, _Columns, machine_blocks, rule_cells_by_block
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.sales import EPOCH, Frame, SalesCodes, combine, cut, facts, part_sales
from autovend.data.calendar import build_calendar, calendar_from_table
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
    blocks: tuple[tuple[int, int], ...] = ()  # the machine ranges [lo, hi) whose cells are built and summed together

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


@dataclass(frozen=True, eq=False)
class BlockFrame:
    """What building a block's cells needs of the panel's frame (`blocks.build_block`)."""

    n_products: int
    n_days: int
    gap: int
    products: pd.DataFrame  # sku_id, ref_price of the kept products
    has_inv: np.ndarray  # (machines,) whether the machine has inventory records
    capacity: np.ndarray  # (machines,) as the machines table gives it (NaN unknown)
    start_ts: pd.Timestamp
    any_inventory: bool


@dataclass(frozen=True, eq=False)
class Head:
    """The panel's frame, settled from every part's facts before any cell is built (`head`)."""

    machines: pd.DataFrame  # machine_id, site_type, capacity (as given), has_inventory
    products: pd.DataFrame
    days: pd.DataFrame
    frame: Frame
    block_frame: BlockFrame
    blocks: list[tuple[int, int]]
    notes: list[str]

    @property
    def start_day(self) -> int:
        """The panel's first day, counted from 1970-01-01 (`sales.cut`)."""
        return int((self.block_frame.start_ts - EPOCH) // pd.Timedelta(days=1))


def kept_products(source_products: pd.DataFrame, config: CalibrationConfig, notes: list[str]) -> pd.DataFrame:
    """The products of the kept subcategories (all when `keep_subcategories` is None), with a note on unknown ones."""
    kept_subs = config.keep_subcategories
    if kept_subs is None:
        kept_mask = np.ones(len(source_products), dtype=bool)
    else:
        unknown = sorted(set(kept_subs) - set(source_products["category_l2"]))
        if unknown:
            notes.append(f"kept subcategories not in the source: {unknown}")
        kept_mask = source_products["category_l2"].isin(kept_subs).to_numpy()
    products = source_products.loc[kept_mask, ["sku_id", "category_l1", "category_l2", "ref_price"]]
    products = products.reset_index(drop=True)
    if products.empty:
        raise InsufficientDataError("no product of the source is in the kept subcategories; check `keep_subcategories`")
    return products


def sales_codes(source_machines: pd.DataFrame, products: pd.DataFrame, config: CalibrationConfig) -> SalesCodes:
    """The codes the source's parts are reduced with (`sales.part_sales`)."""
    return SalesCodes(
        pd.Series(np.arange(len(source_machines)), index=source_machines["machine_id"].to_numpy()),
        pd.Series(np.arange(len(products)), index=products["sku_id"].to_numpy()),
        None if config.until is None else pd.Timestamp(config.until),
    )


def head(source: Any, products: pd.DataFrame, frame: Frame, config: CalibrationConfig, notes: list[str]) -> Head:
    """The panel's machines, days and blocks from the parts' facts (`sales.combine`) and the source's small tables."""
    if frame.units_all == 0:
        raise InsufficientDataError("the daily panel needs completed order lines; the source (window) has none")
    if frame.units_kept == 0 or frame.first_ts is None or frame.last_ts is None:
        raise InsufficientDataError(
            "no completed order line (in the window) sells a product of the kept subcategories; "
            "check `keep_subcategories`"
        )
    sold_ids = pd.Index(source.machines["machine_id"].to_numpy()[frame.sold])
    source_machines, _ = _machines_with_sales(source.machines, sold_ids, None, notes)
    start_ts = frame.first_ts.normalize()
    if frame.first_visit is not None:
        start_ts = min(start_ts, frame.first_visit.normalize())
    end_ts = frame.last_ts.normalize()
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
    machines["has_inventory"] = frame.inventoried[frame.sold]
    has_inv = machines["has_inventory"].to_numpy()
    block_frame = BlockFrame(
        len(products),
        n_days,
        config.sales_rule_gap_days,
        products[["sku_id", "ref_price"]],
        has_inv,
        machines["capacity"].to_numpy(),
        start_ts,
        bool(has_inv.any()),
    )
    blocks = machine_blocks(frame.weight)
    return Head(machines, products, days.reset_index(drop=True), frame, block_frame, blocks, notes)


def finish(
    hd: Head, cap_est: dict[int, float], machine_days: pd.DataFrame, cells: pd.DataFrame, source_hash: str
) -> Panel:
    """The panel from its head and its blocks' machine-days and largest counts (`cells`: in memory, or empty)."""
    machines, notes = hd.machines, hd.notes
    for m in np.flatnonzero(machines["has_inventory"].to_numpy()).tolist():
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
    frame = hd.frame
    return Panel(
        machines=machines,
        products=hd.products,
        days=hd.days,
        cells=cells,
        machine_days=machine_days,
        sales_rule_gap_days=hd.block_frame.gap,
        kept_unit_share=frame.units_kept / frame.units_all if frame.units_all else float("nan"),
        units_all=frame.units_all,
        units_kept=frame.units_kept,
        source_hash=source_hash,
        notes=notes,
        blocks=tuple(hd.blocks),
    )


def source_head(source: Source, config: CalibrationConfig) -> tuple[Head, list[Any]]:
    """A source in memory reduced as one part per table (`sales.part_sales`): the panel's head and the parts."""
    notes: list[str] = []
    products = kept_products(source.products, config, notes)
    codes = sales_codes(source.machines, products, config)
    parts = [part_sales("orders", source.orders, codes)]
    if source.inventory is not None:
        parts.append(part_sales("inventory", source.inventory, codes))
    hd = head(source, products, combine([facts(p) for p in parts], len(source.machines)), config, notes)
    return hd, parts


def build_panel(source: Source, config: CalibrationConfig) -> Panel:
    """Build the daily panel of a checked source in memory (see the module docstring for the shelf rules).

    The source's orders and inventory are reduced as one part each (`sales.part_sales`) and the cells built in
    blocks of whole machines (`blocks.build_blocks`): what a partitioned source's parts go through one by one.
    """
    hd, parts = source_head(source, config)
    pieces = [cut(p, hd.frame.keep, hd.start_day, hd.blocks) for p in parts]
    del parts
    columns, mds, cap_est = _Columns(), [], {}
    for b, (lo, hi) in enumerate(hd.blocks):
        block = build_group([(b, lo, hi)], [p[b] for p in pieces], hd.block_frame)[0]
        columns.add(block.cells)
        mds.append(block.machine_days)
        cap_est.update(block.cap_est)
        del block
    del pieces
    md = pd.concat(mds, ignore_index=True) if len(mds) > 1 else mds[0]
    return finish(hd, cap_est, md, columns.frame(), source.content_hash)


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
