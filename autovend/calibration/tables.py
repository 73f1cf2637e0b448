"""The tables a calibration writes: the parameter tables in canonical normalisation and the daily panel."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.blocks import block_cells_of
from autovend.calibration.normalise import Factors, canonical
from autovend.calibration.panel import Panel
from autovend.calibration.structure import Fits
from autovend.canonical import diagnostic_frame


def panel_table(panel: Panel) -> pd.DataFrame:
    """The daily panel with ids and calendar joined: one row per machine x product x day on the shelf or sold.

    Ids and day types are categorical (codes into the machines, products and day types), so the table
    costs a few bytes per cell beyond its numbers.
    """
    cells = panel.cells
    d = cells["d"].to_numpy()
    days = panel.days
    day_types = pd.Categorical(days["day_type"])

    def codes(labels: pd.Series, index: np.ndarray) -> pd.Categorical:
        return pd.Categorical.from_codes(index, categories=pd.Index(labels.to_numpy(dtype=object), dtype="str"))

    return pd.DataFrame(
        {
            "machine_id": codes(panel.machines["machine_id"], cells["m"].to_numpy()),
            "sku_id": codes(panel.products["sku_id"], cells["k"].to_numpy()),
            "date": days["date"].to_numpy()[d],
            "units": cells["units"].to_numpy(dtype=np.int64),
            "revenue": cells["revenue"].to_numpy(),
            "price": cells["price"].to_numpy(),
            "shelf_qty": cells["q"].to_numpy(),
            "sold_out": cells["censored"].to_numpy(),
            "shelf_known": cells["known"].to_numpy(),
            "weekday": days["weekday"].to_numpy()[d],
            "day_type": pd.Categorical.from_codes(day_types.codes[d], categories=day_types.categories),
            "t_max_c": days["t_max_c"].to_numpy()[d],
            "precip_mm": days["precip_mm"].to_numpy()[d],
        },
        copy=False,  # the panel's own columns are shared, not copied (tens of millions of cells)
    )


def block_panel_table(block: Any, meta: Panel) -> pd.DataFrame:
    """A block's rows of `panel_table` (`meta`: the panel without cells, `blocks.lean`)."""
    return panel_table(dataclasses.replace(meta, cells=block_cells_of(block)))


def block_panel_rows(block: Any, meta: Panel) -> pd.DataFrame:
    """`block_panel_table` rounded as a diagnostic (`canonical.diagnostic_frame`), where the block is held."""
    return diagnostic_frame(block_panel_table(block, meta))


def output_tables(
    panel: Panel,
    fits: Fits,
    pi_tab: pd.DataFrame,
    gamma: pd.Series,
    kappa: np.ndarray,
    R_hat: np.ndarray,
    u: float,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Output tables in canonical normalisation.

    omega's reference is the units-weighted mean over the products with exposure, so products too
    rare to measure do not move it.
    """
    prod = panel.products
    data, raw = fits.data, fits.raw
    units = data.units_by_k
    popularity = pd.DataFrame(
        {
            "sku_id": prod["sku_id"],
            "category_l1": prod["category_l1"],
            "category_l2": prod["category_l2"],
            "units": units.astype(np.int64),
            "demand": raw.units,
            "exposure": raw.exposure,
            "machine_days": raw.machine_days.astype(np.int64),
            "omega_raw": raw.omega,
            "omega": fits.omega,
        }
    )
    machines_out = panel.machines[["machine_id", "site_type", "capacity", "has_inventory"]].copy()
    pop_idx = popularity.set_index("sku_id")
    factors = Factors(
        omega=pop_idx["omega"],
        gamma=gamma,
        pi=pi_tab,
        kappa=pd.Series(kappa, index=machines_out["machine_id"]),
        products=pop_idx[["category_l1", "category_l2"]],
        machines=machines_out.set_index("machine_id")["site_type"],
    )
    exposed = pd.Index(prod["sku_id"][raw.exposure > 0])
    can = canonical(factors, reference_products=exposed, weights=pd.Series(units, index=prod["sku_id"]))
    rescale = (can.omega / pop_idx["omega"]).to_numpy()
    popularity["omega"] = can.omega.to_numpy()
    popularity["omega_raw"] = popularity["omega_raw"] * rescale
    popularity["exposure"] = popularity["exposure"] / np.where(rescale > 0, rescale, 1.0)
    machines_out["kappa"] = can.kappa.to_numpy()
    machines_out["R"] = kappa * R_hat  # the rescalings leave b, hence R, unchanged
    machines_out["U"] = u * kappa * R_hat
    md = panel.machine_days
    machines_out["mean_daily_units"] = md.groupby("m")["units"].mean().reindex(range(panel.n_machines)).to_numpy()
    machines_out["n_days"] = md.groupby("m").size().reindex(range(panel.n_machines)).fillna(0).astype(int).to_numpy()
    site_pref = (
        can.pi.rename_axis("site_type").reset_index().melt(id_vars="site_type", var_name="category_l1", value_name="pi")
    )
    l1_of = prod.drop_duplicates("category_l2").set_index("category_l2")["category_l1"]
    subcat = pd.DataFrame(
        {
            "category_l2": can.gamma.index,
            "category_l1": l1_of.reindex(can.gamma.index).to_numpy(),
            "gamma": can.gamma.to_numpy(),
        }
    )
    return popularity, site_pref, subcat, machines_out
