"""The product split of eq. (3): omega, pi and gamma by MM, with censored demand imputed by EM.

Given a machine-day's total demand, eq. (3) splits it over the products on the shelf in proportion to
their attractions w = b * F**eta * min(1, q/phi) * (p/p_ref)**-eps * E (eq. 2). F**eta and kappa_m are
common to the machine-day and cancel, so the split identifies omega_k * pi_{site,g1} * gamma_{g2} up to
the rescalings of `normalise.canonical`. The maximum-likelihood estimate is found by block
minorise-maximise updates (Hunter & Lange 2004), each of which is one of the paper's definitions:
- omega_k = units of k / its exposure, the exposure being the machine-days offering k weighted by the
  machine-day's sales level and k's share of the shelf's attraction;
- pi_{site,g1} = units of g1 at the site type / units of g1 expected from the products its machines
  actually offered (so stocking choices are not read as site effects);
- gamma_{g2} = realised units of g2 / units of g2 predicted on the real shelves.
Sales are min(demand, shelf). A product that sold out (units = opening shelf) is censored: its demand is
imputed as E[D | D >= q] under Poisson(lambda), lambda its share of the machine-day's demand scale,
the scale being estimated from the day's uncensored products (so it carries the day's shock). The MM
fit (`autovend.calibration.mm`: a weak prior keeps every omega finite, the flat rescalings are removed,
SQUAREM accelerates) and the imputation alternate (EM) for a fixed number of `em_rounds` rounds; each MM
loop runs to its fixed point (no parameter moves by more than `tol`, relative, in a sweep), so the
result does not depend on where a loose stopping rule happened to cut the iterations (1-ulp differences
between CPUs' math kernels would otherwise move it by up to 1e-4).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.blocks import Spill, block_cells_of, lean, panel_store, reserve, set_md_lo
from autovend.calibration.mm import Layout, ordered_sum
from autovend.calibration.panel import Panel
from autovend.calibration.store import CellStore
from autovend.demand.environment import environment_multiplier
from autovend.demand.settings import DemandSettings
from autovend.distinct import distinct


@dataclass(frozen=True)
class ChoiceData:
    """Cells of the machine-days used for the split, with their fixed attraction factors."""

    cell_md: np.ndarray  # machine-day code of each cell
    k: np.ndarray  # product code
    pig: np.ndarray  # site type x category code: site * len(cats_l1) + category_l1 (pi's flat index)
    g2_of_k: np.ndarray  # (products,) category_l2 code of each product
    g1_of_g2: np.ndarray  # (subcategories,) category code of each subcategory with cells (0 for the others)
    a: np.ndarray  # min(1, q/phi) * price factor * E
    y: np.ndarray  # units sold
    q: np.ndarray  # opening shelf (nan unknown)
    censored: np.ndarray
    md_m: np.ndarray  # machine code of each machine-day
    md_d: np.ndarray  # day code of each machine-day
    sites: list[str]
    cats_l1: list[str]
    cats_l2: list[str]
    n_products: int
    # on shelves estimated from sales (`availability`), each cell's P(ON) (`a` includes it) and P(ON) given the day's
    # own sales left out, for the machine-level fits (u, scales, shocks) whose outcome is that day's total; None
    # where shelves are known
    avail: np.ndarray | None = None
    avail_loo: np.ndarray | None = None

    @property
    def g2(self) -> np.ndarray:
        """category_l2 code of each cell's product (computed: the cells hold the product code only)."""
        return self.g2_of_k[self.k]

    @property
    def site(self) -> np.ndarray:
        """Site-type code of each cell's machine (computed: the cells hold `pig` only)."""
        return self.pig // len(self.cats_l1)

    @property
    def g1(self) -> np.ndarray:
        """category_l1 code of each cell's product (computed)."""
        return self.pig % len(self.cats_l1)


def split_codes(
    site: np.ndarray, g1: np.ndarray, g2: np.ndarray, n_cats_l1: int, n_cats_l2: int
) -> tuple[np.ndarray, np.ndarray]:
    """(`pig`, `g1_of_g2`) of `ChoiceData` from per-cell site, category and subcategory codes."""
    g1_of_g2 = np.zeros(n_cats_l2, dtype=np.int64)
    g1_of_g2[g2] = g1
    return np.asarray(site, dtype=np.int64) * n_cats_l1 + g1, g1_of_g2


@dataclass(frozen=True)
class ChoiceFit:
    """Estimates of the split, with the imputed demand per product and per machine-day (not per cell: memory)."""

    omega: np.ndarray  # (K,) maximum-likelihood popularity (0 for unexposed or unsold products)
    pi: np.ndarray  # (sites, categories)
    gamma: np.ndarray  # (subcategories,)
    units: np.ndarray  # (K,) imputed demand per product
    exposure: np.ndarray  # (K,) exposure: expected demand per unit of omega
    machine_days: np.ndarray  # (K,) machine-days offering the product
    loglik: float  # of the split at the estimate (the imputed demand of the last E-step)
    iterations: int
    converged: bool  # every MM loop stopped on the tolerance rather than on the iteration cap
    md_demand: np.ndarray  # imputed demand total per machine-day
    md_var_adjust: np.ndarray  # add to mu for the non-shock variance of that total (see `shocks`)


def cell_factors(
    panel: Panel, settings: DemandSettings, cells: pd.DataFrame, env_table: np.ndarray | None = None
) -> np.ndarray:
    """min(1, q/phi) * (p/p_ref)**-eps * E for cells (q unknown: facing 1; weather missing: neutral).

    `env_table`: the panel's `_environment_table` when the caller has it.
    """
    env = _environment_table(panel, settings) if env_table is None else env_table
    return _factors(panel, settings, env, cells)


def _environment_table(panel: Panel, settings: DemandSettings) -> np.ndarray:
    """E of eq. (2) by day, site type (sorted) and category (sorted)."""
    sites = np.unique(panel.machines["site_type"].to_numpy())
    cats = np.unique(panel.products["category_l1"].to_numpy())
    env_table = np.empty((panel.n_days, len(sites), len(cats)))
    days = panel.days
    for i in range(panel.n_days):
        t = days["t_max_c"].iat[i]
        p = days["precip_mm"].iat[i]
        env_table[i] = environment_multiplier(
            settings.environment,
            sites,
            cats,
            None if pd.isna(t) else float(t),
            None if pd.isna(p) else float(p),
            days["day_type"].iat[i],
        )
    return env_table


def _factors(
    panel: Panel, settings: DemandSettings, env_table: np.ndarray, cells: pd.DataFrame, avail: str = "avail"
) -> np.ndarray:
    """`cell_factors` given the environment table, times the cells' column `avail` (P(ON)) when they have it."""
    m = cells["m"].to_numpy()
    k = cells["k"].to_numpy()
    d = cells["d"].to_numpy()
    q = cells["q"].to_numpy(dtype=float)
    facing = np.where(np.isnan(q), 1.0, np.minimum(1.0, q / settings.phi))
    site_types = panel.machines["site_type"].to_numpy()
    eps = settings.elasticity_of(site_types)[m]
    ref = panel.products["ref_price"].to_numpy(dtype=float)[k]
    ratio = cells["price"].to_numpy(dtype=float) / ref
    price = np.power(np.where(ratio > 0, ratio, 1.0), -eps)
    site_code = np.unique(site_types, return_inverse=True)[1]
    cat_code = np.unique(panel.products["category_l1"].to_numpy(), return_inverse=True)[1]
    env = env_table[d, site_code[m], cat_code[k]]
    out = facing * price * env
    if avail in cells:
        out *= cells[avail].to_numpy(dtype=float)
    return out


FACTOR_BLOCK = 1 << 20  # cells whose factors `block_choice` computes at once (a dozen arrays of 8 MB)


@dataclass(frozen=True)
class SplitCodes:
    """The split's codes shared by every block: site types, categories, subcategories and their products."""

    sites: list[str]
    cats_l1: list[str]
    cats_l2: list[str]
    site_of_m: np.ndarray  # (machines,) site code of each machine, -1 for a site type without split cells
    g1_of_k: np.ndarray  # (products,)
    g2_of_k: np.ndarray
    g1_of_g2: np.ndarray  # (subcategories,) category of each subcategory with cells, 0 for the others
    env_table: np.ndarray  # E of eq. (2) by day, site type and category (`_environment_table`)


def _rows(cells: pd.DataFrame, in_split: np.ndarray, has_inv: np.ndarray) -> np.ndarray:
    """A block's cells of the split: of its machines in the split, and on machines with inventory known days only."""
    m_all = cells["m"].to_numpy()
    return np.flatnonzero(in_split[m_all] & (~has_inv[m_all] | cells["known"].to_numpy()))


def block_rows_summary(block: Any, in_split: np.ndarray, has_inv: np.ndarray, g2_of_k: np.ndarray) -> tuple:
    """The machines and the subcategories the block's split cells hold (they settle the codes, `SplitCodes`)."""
    cells = block_cells_of(block)
    rows = _rows(cells, in_split, has_inv)
    m = cells["m"].to_numpy()[rows]
    g2_codes = g2_of_k[cells["k"].to_numpy()[rows]]
    return distinct(m), distinct(g2_codes)


def block_choice(
    block: Any, meta: Panel, settings: DemandSettings, in_split: np.ndarray, codes: SplitCodes
) -> dict[str, Any]:
    """Build the block's `ChoiceData` (kept in the block) and return what the calibration sums or keeps of it.

    The cells' columns are taken one at a time and their factors computed in pieces of FACTOR_BLOCK cells, so
    besides the ChoiceData only a few values a cell are held.
    """
    cells = block_cells_of(block)
    has_inv = meta.machines["has_inventory"].to_numpy()
    rows = _rows(cells, in_split, has_inv)
    m = cells["m"].to_numpy()[rows]
    md_key = m.astype(np.int64) * (meta.n_days + 1) + cells["d"].to_numpy()[rows]
    uniq, cell_md = np.unique(md_key, return_inverse=True)
    del md_key
    k = cells["k"].to_numpy()[rows].astype(np.int64)  # int64 codes for the hot loops (numpy takes intp indices)
    C1, C2 = len(codes.cats_l1), len(codes.cats_l2)
    pig = codes.site_of_m[m] * C1 + codes.g1_of_k[k]
    a = np.empty(len(rows))
    estimated = "avail" in cells  # shelves estimated from sales: P(ON) weighs each cell
    columns = ("m", "k", "d", "q", "price", "avail") if estimated else ("m", "k", "d", "q", "price")
    for lo in range(0, len(rows), FACTOR_BLOCK):
        part = rows[lo : lo + FACTOR_BLOCK]
        piece = pd.DataFrame({c: cells[c].to_numpy()[part] for c in columns}, copy=False)
        a[lo : lo + len(part)] = _factors(meta, settings, codes.env_table, piece)
    y = cells["units"].to_numpy()[rows].astype(float)
    data = ChoiceData(
        cell_md=cell_md,
        k=k,
        pig=pig,
        g2_of_k=codes.g2_of_k,
        g1_of_g2=codes.g1_of_g2,
        a=a,
        y=y,
        q=cells["q"].to_numpy(dtype=float)[rows],
        censored=cells["censored"].to_numpy(dtype=bool)[rows],
        md_m=(uniq // (meta.n_days + 1)).astype(np.int64),
        md_d=(uniq % (meta.n_days + 1)).astype(np.int64),
        sites=codes.sites,
        cats_l1=codes.cats_l1,
        cats_l2=codes.cats_l2,
        n_products=meta.n_products,
        avail=cells["avail"].to_numpy(dtype=float)[rows] if estimated else None,
        avail_loo=cells["avail_loo"].to_numpy(dtype=float)[rows] if estimated else None,
    )
    _hold(block, data)
    K = meta.n_products
    g2 = codes.g2_of_k[k]
    return {
        "md_m": data.md_m,
        "md_d": data.md_d,
        "units_by_k": np.bincount(k, weights=y, minlength=K),
        "sold_by_k": np.bincount(cells["k"], weights=cells["units"], minlength=K),  # every cell, in the split or not
        "cells_by_g2": np.bincount(g2, minlength=C2),
        "units_by_g2": np.bincount(g2, weights=y, minlength=C2),
        "cells_by_pig": np.bincount(pig, minlength=len(codes.sites) * C1),
        "censored": bool(np.any(data.censored)),
        "cells": len(k),
    }


SPILLED = ("cell_md", "k", "pig", "a", "y", "q", "censored", "avail", "avail_loo")  # a spilled block's files
EM_BYTES = 25  # bytes a cell adds while the split is fitted (demand, imputed flag, site x product code, scratch)


def _hold(block: Any, data: ChoiceData) -> None:
    """Keep the block's split cells in memory if the worker's budget holds them, else in its spill (`blocks.Spill`)."""
    arrays = {f: getattr(data, f) for f in SPILLED if getattr(data, f) is not None}
    if reserve(block, sum(a.nbytes for a in arrays.values()) + EM_BYTES * len(data.k)):
        block.data = data
        return
    block.spill = Spill()
    for name, value in arrays.items():
        block.spill.put(name, value)
    block.data = dataclasses.replace(data, **{name: value[:0].copy() for name, value in arrays.items()})


def choice_of(block: Any) -> ChoiceData:
    """The block's split cells (read back from its spill when it has one)."""
    data: ChoiceData = block.data
    if block.spill is None:
        return data
    return dataclasses.replace(data, **{f: block.spill.get(f) for f in SPILLED if getattr(data, f) is not None})


@dataclass(frozen=True, eq=False)
class ChoiceCells:
    """The split's cells over every block of a store: their shared codes, their machine-days, their counts."""

    store: CellStore
    codes: SplitCodes
    n_products: int
    md_m: np.ndarray  # machine of each machine-day of the split, blocks one after the other
    md_d: np.ndarray
    md_bounds: np.ndarray  # (blocks + 1,) where each block's machine-days start
    units_by_k: np.ndarray  # sales per product on the split's cells
    sold_by_k: np.ndarray  # sales per product on every cell of the panel
    cells_by_g2: np.ndarray
    units_by_g2: np.ndarray
    cells_by_pig: np.ndarray  # (sites * categories,)
    censored: bool  # some cell sold out
    estimated: bool  # shelves estimated from sales (cells weighted by P(ON))
    n_cells: int

    @property
    def sites(self) -> list[str]:
        """Site types of the split (sorted)."""
        return self.codes.sites

    @property
    def cats_l1(self) -> list[str]:
        """Categories (sorted)."""
        return self.codes.cats_l1

    @property
    def cats_l2(self) -> list[str]:
        """Subcategories (sorted)."""
        return self.codes.cats_l2

    @property
    def layout(self) -> Layout:
        """The split's codes for the M-step (`mm.Layout`)."""
        c = self.codes
        return Layout(self.n_products, c.g2_of_k, c.g1_of_k, c.g1_of_g2, len(c.sites))


def choice_cells(
    panel: Panel, store: CellStore, settings: DemandSettings, machines: np.ndarray | None = None
) -> ChoiceCells:
    """Build every block's cells of the split (default machines: those with known shelves, else all)."""
    meta = lean(panel)
    has_inv = panel.machines["has_inventory"].to_numpy()
    if machines is None:
        known_m = panel.machines.index[panel.machines["has_inventory"]].to_numpy()
        machines = known_m if len(known_m) else panel.machines.index.to_numpy()
    in_split = np.zeros(panel.n_machines, bool)
    in_split[machines] = True
    site_types = panel.machines["site_type"].to_numpy()
    cats1 = sorted(panel.products["category_l1"].unique())
    cats2 = sorted(panel.products["category_l2"].unique())
    g1_of_k = pd.Series(np.arange(len(cats1)), index=cats1).reindex(panel.products["category_l1"]).to_numpy(np.int64)
    g2_of_k = pd.Series(np.arange(len(cats2)), index=cats2).reindex(panel.products["category_l2"]).to_numpy(np.int64)
    summaries = store.map(block_rows_summary, in_split, has_inv, g2_of_k)
    used_m = distinct(np.concatenate([s[0] for s in summaries])) if summaries else np.zeros(0, np.int64)
    used_g2 = distinct(np.concatenate([s[1] for s in summaries])) if summaries else np.zeros(0, np.int64)
    sites = sorted(set(site_types[used_m]))
    site_of_m = pd.Series(np.arange(len(sites)), index=sites).reindex(site_types).fillna(-1).to_numpy(np.int64)
    cat_of_g2 = pd.Series(g1_of_k, index=g2_of_k).groupby(level=0).first()
    g1_of_g2 = np.zeros(len(cats2), dtype=np.int64)
    g1_of_g2[used_g2] = cat_of_g2.reindex(used_g2).to_numpy(np.int64)
    codes = SplitCodes(sites, cats1, cats2, site_of_m, g1_of_k, g2_of_k, g1_of_g2, _environment_table(panel, settings))
    parts = store.map(block_choice, meta, settings, in_split, codes)
    sizes = [len(p["md_m"]) for p in parts]
    bounds = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    store.map(set_md_lo, bounds)
    empty = np.zeros(0, np.int64)
    return ChoiceCells(
        store=store,
        codes=codes,
        n_products=panel.n_products,
        md_m=np.concatenate([p["md_m"] for p in parts]) if parts else empty,
        md_d=np.concatenate([p["md_d"] for p in parts]) if parts else empty,
        md_bounds=bounds,
        units_by_k=ordered_sum([p["units_by_k"] for p in parts]),
        sold_by_k=ordered_sum([p["sold_by_k"] for p in parts]),
        cells_by_g2=ordered_sum([p["cells_by_g2"] for p in parts]),
        units_by_g2=ordered_sum([p["units_by_g2"] for p in parts]),
        cells_by_pig=ordered_sum([p["cells_by_pig"] for p in parts]),
        censored=any(p["censored"] for p in parts),
        estimated="avail" in panel.cells if len(panel.cells.columns) else False,
        n_cells=sum(p["cells"] for p in parts),
    )


def _block_data(block: Any) -> ChoiceData:
    return choice_of(block)


def choice_data(panel: Panel, settings: DemandSettings, machines: np.ndarray | None = None) -> ChoiceData:
    """The split's cells of a panel in memory as one `ChoiceData` (every block's, machine-days coded in order)."""
    store = panel_store(panel)
    cells = choice_cells(panel, store, settings, machines)
    parts = store.map(_block_data)
    if len(parts) == 1:
        return parts[0]
    offsets = cells.md_bounds[:-1]

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])

    first = parts[0]
    return dataclasses.replace(
        first,
        cell_md=np.concatenate([p.cell_md + off for p, off in zip(parts, offsets, strict=True)]),
        k=cat("k"),
        pig=cat("pig"),
        a=cat("a"),
        y=cat("y"),
        q=cat("q"),
        censored=cat("censored"),
        md_m=cells.md_m,
        md_d=cells.md_d,
        avail=cat("avail") if first.avail is not None else None,
        avail_loo=cat("avail_loo") if first.avail_loo is not None else None,
    )
