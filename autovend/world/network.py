"""The benchmark's 20-machine network and the seeded rule that picks a calibrated machine for each device.

The devices are the paper's (Appendix A.2, day-1 observation): six worksite, two campus, four
residential, six commercial and two office machines, with fixed ids and sub-locations. Each device
takes the demand parameters (kappa, R, U) of one calibrated source machine of its site type.

The rule, applied to one site type at a time (site types in device order):

1. A source machine is *usable* when its scale kappa, reference attraction R and no-purchase weight
   U are finite and positive. It is *preferred* when, in addition, its kappa came from the
   structural fit (known shelves: `kappa_source == "structural_fit"`) and it has at least
   `min_days` days of records.
2. Pools are tried in this order until every device of the site type has a machine: preferred
   machines of the device's own sub-location (the source's `location`, e.g. `worksite/canteen`),
   then preferred machines of the site type left over, then usable machines of the sub-location,
   then usable machines of the site type. Better estimates come before an exact sub-location match,
   since demand depends on the site type only; the sub-location is a label.
3. Within a pool, machines are sorted by id and drawn without replacement from the generator
   `stream(seed, "network")`, which is shared by all draws in that fixed order, so one seed gives
   one network.
4. A site type with fewer usable machines than devices stops the export with an error that names
   the site type and both numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.errors import InsufficientDataError
from autovend.rng import stream

# The paper's devices (Appendix A.2), in the order the simulator lists them: (device_id, location).
PAPER_DEVICES: tuple[tuple[str, str], ...] = (
    ("CN_WORKSITE_01", "worksite/canteen"),
    ("CN_WORKSITE_02", "worksite/canteen"),
    ("CN_WORKSITE_03", "worksite/canteen"),
    ("CN_WORKSITE_04", "worksite/plant_floor"),
    ("CN_WORKSITE_05", "worksite/plant_floor"),
    ("CN_WORKSITE_06", "worksite/plant_floor"),
    ("CN_CAMPUS_01", "campus/university"),
    ("CN_CAMPUS_02", "campus/school_dormitory"),
    ("CN_RESIDENTIAL_01", "residential/apartment"),
    ("CN_RESIDENTIAL_02", "residential/apartment"),
    ("CN_RESIDENTIAL_03", "residential/apartment"),
    ("CN_RESIDENTIAL_04", "residential/dormitory"),
    ("CN_COMMERCIAL_01", "commercial/sports_venue"),
    ("CN_COMMERCIAL_02", "commercial/hotel"),
    ("CN_COMMERCIAL_03", "commercial/hotel"),
    ("CN_COMMERCIAL_04", "commercial/sports_venue"),
    ("CN_COMMERCIAL_05", "commercial/leisure_venue"),
    ("CN_COMMERCIAL_06", "commercial/hotel"),
    ("CN_OFFICE_01", "office/industrial_park"),
    ("CN_OFFICE_02", "office/office_building"),
)
PAPER_CAPACITY = 200  # units per machine (paper §3.2)
MIN_DAYS = 60  # days of records a preferred source machine has at least
STRUCTURAL = "structural_fit"  # calibration's kappa_source of machines with known shelves

NETWORK_COLUMNS = [
    "device_id",
    "location",
    "site_type",
    "capacity",
    "U",
    "source_machine_id",
    "source_location",
    "kappa_source",
    "kappa",
    "R",
]
CANDIDATE_COLUMNS = ["machine_id", "site_type", "location", "kappa", "R", "U", "kappa_source", "n_days"]


def site_type_of(location: str) -> str:
    """The site type of a `site_type/detail` location."""
    return location.split("/", 1)[0]


@dataclass(frozen=True)
class _Pools:
    """Candidate machine ids of one site type, sorted, by preference and sub-location."""

    preferred: pd.DataFrame
    usable: pd.DataFrame


def _pools(candidates: pd.DataFrame, site: str, min_days: int) -> _Pools:
    c = candidates[candidates["site_type"].astype(str) == site]
    kappa, R, U = (c[col].to_numpy(dtype=float) for col in ("kappa", "R", "U"))
    ok = np.isfinite(kappa) & (kappa > 0) & np.isfinite(R) & (R > 0) & np.isfinite(U) & (U > 0)
    usable = c[ok].sort_values("machine_id", kind="stable")
    good = (usable["kappa_source"].astype(str) == STRUCTURAL) & (usable["n_days"].to_numpy(dtype=float) >= min_days)
    return _Pools(preferred=usable[good.to_numpy()], usable=usable)


def _draw(pool: pd.DataFrame, taken: set[str], n: int, rng: np.random.Generator) -> list[str]:
    """Up to `n` machine ids not yet taken, drawn without replacement from the (sorted) pool."""
    free = [m for m in pool["machine_id"].astype(str) if m not in taken]
    k = min(n, len(free))
    if k == 0:
        return []
    picks = rng.choice(len(free), size=k, replace=False)
    return [free[int(i)] for i in picks]


def select_network(
    candidates: pd.DataFrame,
    seed: int,
    *,
    devices: tuple[tuple[str, str], ...] = PAPER_DEVICES,
    capacity: int = PAPER_CAPACITY,
    min_days: int = MIN_DAYS,
) -> pd.DataFrame:
    """One calibrated source machine per device by the module's rule; one row per device (NETWORK_COLUMNS).

    `candidates` has CANDIDATE_COLUMNS (`location` may be missing values). Every device gets
    `capacity`; kappa, R and U are the source machine's, unchanged (a source machine of another
    capacity keeps its calibrated b and U). Raises InsufficientDataError when a site type has fewer
    usable machines than devices.
    """
    missing = [c for c in CANDIDATE_COLUMNS if c not in candidates]
    if missing:
        raise ValueError(f"candidate machines lack columns {missing}")
    by_id = candidates.assign(machine_id=candidates["machine_id"].astype(str)).set_index("machine_id")
    rng = stream(seed, "network")
    locations = [loc for _, loc in devices]
    sites = list(dict.fromkeys(site_type_of(loc) for loc in locations))
    chosen: dict[int, str] = {}  # device position -> machine id
    for site in sites:
        pools = _pools(candidates, site, min_days)
        slots = [i for i, loc in enumerate(locations) if site_type_of(loc) == site]
        if len(pools.usable) < len(slots):
            raise InsufficientDataError(
                f"the network needs {len(slots)} {site} machines but the calibration has only "
                f"{len(pools.usable)} usable {site} machines (finite, positive kappa, R and U; "
                f"{len(pools.preferred)} of them with known shelves and >= {min_days} days); "
                "calibrate a source with more machines of this site type"
            )
        taken: set[str] = set()
        sub_locs = list(dict.fromkeys(locations[i] for i in slots))
        for tier in (pools.preferred, pools.usable):
            # first each sub-location from its own machines, then the site type's leftovers
            for loc in sub_locs:
                open_slots = [i for i in slots if locations[i] == loc and i not in chosen]
                same = tier[tier["location"].astype(str) == loc] if "location" in tier else tier.iloc[:0]
                for i, m in zip(open_slots, _draw(same, taken, len(open_slots), rng), strict=False):
                    chosen[i] = m
                    taken.add(m)
            open_slots = [i for i in slots if i not in chosen]
            for i, m in zip(open_slots, _draw(tier, taken, len(open_slots), rng), strict=False):
                chosen[i] = m
                taken.add(m)
    rows = []
    for i, (device_id, loc) in enumerate(devices):
        src = by_id.loc[chosen[i]]
        src_loc = src["location"]
        rows.append(
            {
                "device_id": device_id,
                "location": loc,
                "site_type": site_type_of(loc),
                "capacity": int(capacity),
                "U": float(src["U"]),
                "source_machine_id": chosen[i],
                "source_location": "" if pd.isna(src_loc) else str(src_loc),
                "kappa_source": str(src["kappa_source"]),
                "kappa": float(src["kappa"]),
                "R": float(src["R"]),
            }
        )
    out = pd.DataFrame(rows, columns=NETWORK_COLUMNS)
    out["capacity"] = out["capacity"].astype(np.int64)
    return out
