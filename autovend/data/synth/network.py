"""The synthetic operator's 99 machines: sites, capacities, levels, which ones keep inventory records."""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.data.synth.config import SynthConfig
from autovend.rng import stream


def build_machines(config: SynthConfig) -> pd.DataFrame:
    """Machines with contract columns (machine_id, site_type, location, capacity) and truth columns.

    Truth columns: `level` (relative mean daily units: the site type's level times a lognormal draw),
    `has_inventory` (exactly `n_with_inventory` machines, spread over site types in proportion),
    `has_compartment` (a chilled/frozen/goods compartment selling out-of-scope products).
    """
    rng = stream(config.seed, "machines")
    rows = []
    for location, count in config.locations.items():
        site = location.split("/")[0]
        for _ in range(count):
            rows.append({"site_type": site, "location": location})
    df = pd.DataFrame(rows)
    n = len(df)
    df.insert(0, "machine_id", [f"SH{i + 1:04d}" for i in range(n)])
    df["capacity"] = config.capacity
    site_level = np.array([config.truth.site_level[s] for s in df["site_type"]])
    z = rng.standard_normal(n)
    df["level"] = site_level * np.exp(config.truth.kappa_sigma * z - 0.5 * config.truth.kappa_sigma**2)
    # inventory records: stratified by site type so every site type has machines with and without
    order = rng.permutation(n)
    ranks = np.empty(n, dtype=int)
    by_site = df.iloc[order].groupby("site_type", sort=False).cumcount().to_numpy()
    sizes = df["site_type"].map(df["site_type"].value_counts()).to_numpy()[order]
    frac = (by_site + 0.5) / sizes
    ranks[order] = np.argsort(np.argsort(frac, kind="stable"), kind="stable")
    df["has_inventory"] = ranks < config.n_with_inventory
    df["has_compartment"] = rng.random(n) < config.out_of_scope_machine_share
    return df
