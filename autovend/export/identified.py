"""The identified set of an exported world (`autovend.world.ranges`), written into its manifest under `ranges`.

What the calibration pins with an interval and what of the world is a setting; provenance, so the world hash stays.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.calibration.estimates import Estimates
from autovend.export.source import SourceTables
from autovend.world.model import World
from autovend.world.ranges import IdentifiedSet, identified_set

OWN_SHELF_LIFE = ("source", "mapped")  # shelf_life_source values of a shelf life the source gave


def borrowed_capacity(world: World, source: SourceTables) -> list[str]:
    """The devices whose capacity is not their source machine's (a setting: export.capacity or the network file)."""
    m = world.machines
    src = source.machines.assign(machine_id=source.machines["machine_id"].astype(str)).set_index("machine_id")
    cap = src["capacity"] if "capacity" in src else pd.Series(np.nan, index=src.index)
    given = cap.reindex(m["source_machine_id"].astype(str)).to_numpy(dtype=float)
    own = np.isfinite(given) & (given == m["capacity"].to_numpy(dtype=float))
    return [str(d) for d, o in zip(m["device_id"], own, strict=True) if not o]


def world_ranges(world: World, estimates: Estimates, source: SourceTables) -> IdentifiedSet:
    """The identified set of `world`, exported from `estimates` and `source`."""
    cat = world.catalog
    costs = cat["unit_cost_source"].astype(str) if "unit_cost_source" in cat else pd.Series("source", index=cat.index)
    lives = cat["shelf_life_source"].astype(str) if "shelf_life_source" in cat else pd.Series("", index=cat.index)
    return identified_set(
        u=estimates.u,
        u_interval=estimates.u_interval,
        u_identified=estimates.u_identified,
        categories=cat["category_l1"].astype(str).tolist(),
        borrowed_costs=bool((costs == "margin_draw").any()),
        borrowed_capacity=borrowed_capacity(world, source),
        borrowed_shelf_lives=bool((~lives.isin(OWN_SHELF_LIFE)).any()),
    )
