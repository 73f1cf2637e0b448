"""The world's network: which calibrated source machines become the world's devices, by a seeded rule.

Two ways to name the devices:

- **A device list** (`--network FILE`, `read_network`): a CSV with `device_id`, `location`
  (`site_type/detail`, or a bare site type) and an optional `capacity`. The paper's 20-device network
  (Appendix A.2: six worksite, two campus, four residential, six commercial and two office machines)
  ships as such a file, `networks/paper-cn20.csv`, and `worlds/cn20` is exported with it. Each device
  takes the demand parameters (kappa, R, U) of one calibrated source machine of its site type
  (`select_network`):

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

- **The source's own machines** (no device list, `own_network`): every usable machine becomes a
  device named after it, at its own location; or, with `--machines N`, N of them: N is shared out
  over the site types in proportion to their usable machines (largest remainders; ties by site-type
  name; every site type gets one first when N allows), and each site type's share is drawn from its
  preferred machines, then its other usable ones, with the same generator. Devices are listed by
  machine id.

A device's capacity is, in order: the export's `capacity` setting when given, the device list's
capacity, the source machine's capacity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from autovend.errors import AdaptError, ExportError, InsufficientDataError
from autovend.rng import stream
from autovend.shipped import NETWORKS

NETWORKS_DIR = NETWORKS.folder  # network files shipped with the package (`--network paper-cn20` names one)
PAPER_NETWORK = NETWORKS_DIR / "paper-cn20.csv"  # the paper's devices (Appendix A.2), in the simulator's order
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
SITE_TYPE = re.compile(r"[a-z][a-z0-9_]*")
_DIGITS = re.compile(r"[0-9]{1,12}")
MAX_CAPACITY = 100_000  # units a device holds at most (a vending machine holds hundreds; the paper's 200)
MAX_DEVICES = 10_000  # devices of a world at most (the paper's network has 20)
NETWORK_MAX_MB = 16  # text of a network file at most
ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True)
class Device:
    """One device of a network: its id, its location (`site_type/detail` or a site type), its capacity if set."""

    device_id: str
    location: str
    capacity: int | None = None

    @property
    def site_type(self) -> str:
        """The site type of the device's location."""
        return site_type_of(self.location)


def _network_frame_of(file: Path) -> pd.DataFrame:
    """The network file as text cells (streamed and bounded like an export; ragged rows refused)."""
    from autovend.data.adapters.mapping import FileFormat
    from autovend.data.adapters.reader import RAGGED_ATTR, read_export

    try:
        frame = read_export(
            file,
            FileFormat(max_text_mb=NETWORK_MAX_MB),
            encoding_fix="save the network file as UTF-8 text",
            size_fix=f"a network file lists devices, one per line: at most {MAX_DEVICES:,} of them",
        )
    except AdaptError as exc:
        raise ExportError(f"cannot read the network file: {exc}") from None
    ragged: dict[int, int] = frame.attrs.get(RAGGED_ATTR, {})
    if ragged:
        row, n = next(iter(sorted(ragged.items())))
        raise ExportError(
            f"{file} row {row + 1}: the row has {n} cells, the header {len(frame.columns)} ({len(ragged)} such rows); "
            "give each device one cell per column: device_id, location[, capacity]"
        )
    return frame


def read_network(path: str | Path) -> tuple[Device, ...]:
    """The devices of a network file (CSV: device_id, location[, capacity]); ExportError naming row and fix.

    Ids are unique ignoring case (letters, digits, _.:-); a capacity is a whole number of units from 1 to
    `MAX_CAPACITY`, in ASCII digits; a file lists at most `MAX_DEVICES` devices.
    """
    file = Path(path)
    frame = _network_frame_of(file)
    missing = [c for c in ("device_id", "location") if c not in frame.columns]
    if missing:
        raise ExportError(f"{file} lacks column(s) {missing}; a network file has device_id, location[, capacity]")
    if len(frame) > MAX_DEVICES:
        raise ExportError(f"{file} lists {len(frame):,} devices; a world has at most {MAX_DEVICES:,}")
    devices: list[Device] = []
    seen: dict[str, int] = {}
    for row, rec in enumerate(frame.to_dict(orient="records"), start=1):
        dev, loc = str(rec["device_id"]).strip(), str(rec["location"]).strip()
        where = f"{file} row {row}"
        if not ID.fullmatch(dev):
            raise ExportError(f"{where}, column device_id: {dev[:40]!r} is not an id (letters, digits, _.:-)")
        if dev.casefold() in seen:
            raise ExportError(
                f"{where}, column device_id: {dev} appears twice (also row {seen[dev.casefold()]}; ids are compared "
                "ignoring case); give each device its own id"
            )
        if not SITE_TYPE.fullmatch(site_type_of(loc)):
            raise ExportError(
                f"{where}, column location: {loc[:40]!r} does not start with a lower-case site type "
                "(e.g. worksite/canteen)"
            )
        cap = str(rec.get("capacity", "")).strip()
        if cap and (not _DIGITS.fullmatch(cap) or not 1 <= int(cap) <= MAX_CAPACITY):
            raise ExportError(
                f"{where}, column capacity: {cap[:20]!r} is not a whole number of units from 1 to {MAX_CAPACITY:,}"
            )
        seen[dev.casefold()] = row
        devices.append(Device(dev, loc, int(cap) if cap else None))
    if not devices:
        raise ExportError(f"{file} lists no devices")
    return tuple(devices)


def paper_devices() -> tuple[Device, ...]:
    """The paper's 20 devices (Appendix A.2), from the shipped network file."""
    return read_network(PAPER_NETWORK)


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


def _capacity(device_cap: int | None, source_cap: float | None, override: int | None, device_id: str) -> int:
    """A device's capacity: the export's override, else the device list's, else the source machine's."""
    if override is not None:
        return int(override)
    if device_cap is not None:
        return int(device_cap)
    cap = float(source_cap) if source_cap is not None and not pd.isna(source_cap) else float("nan")
    if not np.isfinite(cap) or cap < 1:
        raise ExportError(
            f"device {device_id} has no capacity: its source machine's is unknown; give the export's capacity "
            "setting or a capacity column in the network file"
        )
    if cap > MAX_CAPACITY:
        raise ExportError(
            f"device {device_id} would hold {cap:,.0f} units, its source machine's capacity; a device holds at most "
            f"{MAX_CAPACITY:,}: fix the source's machines.csv, or give the export's capacity setting"
        )
    return int(round(cap))


def _network_frame(picks: list[tuple[Device, str]], by_id: pd.DataFrame, capacity: int | None) -> pd.DataFrame:
    """One row per (device, chosen source machine), NETWORK_COLUMNS."""
    rows = []
    for device, machine in picks:
        src = by_id.loc[machine]
        src_loc = src["location"]
        rows.append(
            {
                "device_id": device.device_id,
                "location": device.location,
                "site_type": device.site_type,
                "capacity": _capacity(device.capacity, src.get("capacity"), capacity, device.device_id),
                "U": float(src["U"]),
                "source_machine_id": machine,
                "source_location": "" if pd.isna(src_loc) else str(src_loc),
                "kappa_source": str(src["kappa_source"]),
                "kappa": float(src["kappa"]),
                "R": float(src["R"]),
            }
        )
    out = pd.DataFrame(rows, columns=NETWORK_COLUMNS)
    out["capacity"] = out["capacity"].astype(np.int64)
    return out


def _checked(candidates: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in CANDIDATE_COLUMNS if c not in candidates]
    if missing:
        raise ValueError(f"candidate machines lack columns {missing}")
    return candidates.assign(machine_id=candidates["machine_id"].astype(str))


def select_network(
    candidates: pd.DataFrame,
    seed: int,
    devices: tuple[Device, ...],
    *,
    capacity: int | None = None,
    min_days: int = MIN_DAYS,
) -> pd.DataFrame:
    """One calibrated source machine per listed device by the module's rule; one row per device (NETWORK_COLUMNS).

    `candidates` has CANDIDATE_COLUMNS (`location` may be missing values). kappa, R and U are the
    source machine's, unchanged (a source machine of another capacity keeps its calibrated b and U).
    Raises InsufficientDataError when a site type has fewer usable machines than devices.
    """
    candidates = _checked(candidates)
    by_id = candidates.set_index("machine_id")
    rng = stream(seed, "network")
    locations = [d.location for d in devices]
    sites = list(dict.fromkeys(d.site_type for d in devices))
    chosen: dict[int, str] = {}  # device position -> machine id
    for site in sites:
        pools = _pools(candidates, site, min_days)
        slots = [i for i, d in enumerate(devices) if d.site_type == site]
        if len(pools.usable) < len(slots):
            raise InsufficientDataError(
                f"the network needs {len(slots)} {site} machines but the calibration has only "
                f"{len(pools.usable)} usable {site} machines (finite, positive kappa, R and U; "
                f"{len(pools.preferred)} of them with known shelves and >= {min_days} days); "
                "calibrate a source with more machines of this site type, or export the source's own "
                "network (no --network)"
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
    return _network_frame([(d, chosen[i]) for i, d in enumerate(devices)], by_id, capacity)


def allocate(counts: dict[str, int], n: int) -> dict[str, int]:
    """`n` devices shared over site types in proportion to `counts` (largest remainders, ties by name).

    Each site type first gets one device when `n` is at least the number of site types; no site type
    gets more than it has.
    """
    sites = sorted(s for s, c in counts.items() if c > 0)
    total = sum(counts[s] for s in sites)
    if n > total:
        raise InsufficientDataError(f"--machines {n} is more than the {total} usable machines of the calibration")
    base = {s: 1 if n >= len(sites) else 0 for s in sites}
    left = n - sum(base.values())
    room = {s: counts[s] - base[s] for s in sites}
    room_total = sum(room.values())
    quota = {s: left * room[s] / room_total if room_total else 0.0 for s in sites}
    share = {s: base[s] + int(np.floor(quota[s])) for s in sites}
    rest = n - sum(share.values())
    for s in sorted(sites, key=lambda s: (-(quota[s] - np.floor(quota[s])), s))[:rest]:
        share[s] += 1
    return share


def own_network(
    candidates: pd.DataFrame,
    seed: int,
    *,
    n_machines: int | None = None,
    capacity: int | None = None,
    min_days: int = MIN_DAYS,
) -> pd.DataFrame:
    """The source's own machines as devices (all usable ones, or `n_machines` by the module's rule), by id."""
    candidates = _checked(candidates)
    by_id = candidates.set_index("machine_id")
    sites = sorted(set(candidates["site_type"].astype(str)))
    pools = {s: _pools(candidates, s, min_days) for s in sites}
    usable = {s: len(p.usable) for s, p in pools.items()}
    if sum(usable.values()) == 0:
        raise InsufficientDataError(
            "the calibration has no usable machine (finite, positive kappa, R and U); see its report"
        )
    if n_machines is None:
        chosen = [m for s in sites for m in pools[s].usable["machine_id"].astype(str)]
    else:
        rng = stream(seed, "network")
        chosen = []
        for s, k in allocate(usable, n_machines).items():
            taken: set[str] = set()
            for tier in (pools[s].preferred, pools[s].usable):
                picks = _draw(tier, taken, k - len(taken), rng)
                taken.update(picks)
            chosen.extend(taken)
    devices: list[tuple[Device, str]] = []
    for m in sorted(chosen):
        loc = by_id.loc[m, "location"]
        site = str(by_id.loc[m, "site_type"])
        location = str(loc) if not pd.isna(loc) and str(loc) else site
        devices.append((Device(m, location), m))
    return _network_frame(devices, by_id, capacity)
