"""A world changed by a scenario (`derive_world`) and its bundle (`write_derived`): never an edit of the original.

`derive_world(world, scenario)` applies a `Scenario` (`autovend.world.scenario`) to a copy: unit costs, fees and
the default supplier's lead times go into the catalog and the economics, weather and holidays into their tables,
and what happens on some days only (suppliers, partial deliveries, outages, demand shifts, breakdowns, notices)
into the world's `Conditions` with machines named by device id and windows by day numbers. Values stay canonical
(money to the cent, weather on its 0.1 grid, factors to six significant digits), so the world in memory and its
bundle read back are the same world with the same hash. A scenario that changes nothing gives back the world itself
(same name, same hash); any change names the world WORLD+SCENARIO and gives it a new hash.

`write_derived` writes the derived world as a bundle whose manifest keeps the base world's provenance and adds
`params.derived_from` (the base world's name and hash) and `params.scenario` (name, hash and content), and, when
the base manifest has them, the base's `ranges` (`autovend.world.ranges`).
"""

from __future__ import annotations

import os
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend.canonical import canonical_value, round_sig
from autovend.errors import ConfigError
from autovend.world.bundle import (
    README,
    check_output,
    make_manifest,
    manifest_hash,
    read_manifest,
    world_files,
    write_bundle,
)
from autovend.world.conditions import Breakdown, Conditions, DemandShift, Notice, Outage
from autovend.world.model import Economics, World
from autovend.world.runcopy import identity_hash
from autovend.world.scenario import Announced, Days, Machines, Scenario, load_scenario

RANGES_KEY = "ranges"  # the manifest key of the identified set (`autovend.world.ranges`), carried to derived worlds


def _cents(x: float) -> float:
    """`x` rounded half-up to the cent (money is exact to the cent in a world)."""
    return float(Decimal(repr(float(x))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _tenths(x: float) -> float:
    """`x` rounded half-up to 0.1 (the grid of the weather tables)."""
    return float(Decimal(repr(float(x))).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _window(days: Days, world: World, what: str) -> tuple[int, int]:
    """(first, last) day of a window; `last_day` None = the horizon's last day; ConfigError past the horizon."""
    horizon = world.horizon_days
    if days.first_day > horizon:
        raise ConfigError(
            f"{what}: first_day {days.first_day} is past the last day of world {world.name!r} (day {horizon}); "
            f"give a day from 1 to {horizon}"
        )
    return days.first_day, horizon if days.last_day is None else days.last_day


def _dates(world: World, first: int, last: int) -> tuple[pd.Timestamp, pd.Timestamp]:
    return pd.Timestamp(world.date_of(first)), pd.Timestamp(world.date_of(last))


def pick_machines(world: World, machines: Machines, what: str) -> list[str]:
    """The device ids a `Machines` selector names, in device order (ConfigError for a name the world lacks)."""
    ids = world.machines["device_id"].astype(str).tolist()
    sites = world.machines["site_type"].astype(str).tolist()
    unknown = [d for d in machines.device_ids if d not in ids]
    if unknown:
        raise ConfigError(
            f"{what}: device_ids {unknown} are not machines of world {world.name!r} (e.g. {ids[0]!r}); "
            "name machines of this world, or pick them by site_types or busiest"
        )
    missing = [s for s in machines.site_types if s not in sites]
    if missing:
        raise ConfigError(
            f"{what}: world {world.name!r} has no machine of site type {missing} (its site types: "
            f"{sorted(set(sites))}); name one of those"
        )
    named = set(machines.device_ids) | {d for d, s in zip(ids, sites, strict=True) if s in machines.site_types}
    pool = [i for i, d in enumerate(ids) if d in named] if named else list(range(len(ids)))
    if machines.busiest is not None:
        U = world.demand_model.U
        pool = sorted(sorted(pool, key=lambda i: (-float(U[i]), i))[: machines.busiest])
    return [ids[i] for i in pool]


def _notice(world: World, change: Announced, first: int, last: int, text: str) -> tuple[Notice, ...]:
    if change.announce_days is None:
        return ()
    return (Notice(first_day=max(1, first - change.announce_days), last_day=last, text=change.notice or text),)


def _day(world: World, d: int) -> str:
    return f"day {d} ({world.date_of(d).isoformat()})"


def _conditions(world: World, scenario: Scenario) -> Conditions:
    """The base world's conditions plus the scenario's, resolved against the world."""
    c = scenario.changes
    base = world.conditions
    outages: list[Outage] = []
    shifts: list[DemandShift] = []
    breakdowns: list[Breakdown] = []
    notices: list[Notice] = []
    for i, o in enumerate(c.outages, start=1):
        first, last = _window(o, world, f"changes, outages, entry {i}")
        outages.append(Outage(supplier_id=o.supplier_id, first_day=first, last_day=last))
        text = (
            f"Supplier '{o.supplier_id}' delivers nothing from {_day(world, first)} to {_day(world, last)}; "
            f"deliveries due then arrive on day {last + 1}."
        )
        notices += _notice(world, o, first, last, text)
    categories = set(world.catalog["category_l1"].astype(str))
    for i, d in enumerate(c.demand, start=1):
        where = f"changes, demand, entry {i}"
        first, last = _window(d, world, where)
        wrong = [x for x in d.categories if x not in categories]
        if wrong:
            raise ConfigError(
                f"{where}: categories {wrong} are not in the catalog (its categories: {sorted(categories)})"
            )
        devices = tuple(pick_machines(world, d.machines, where))
        shifts.append(
            DemandShift(
                label=d.label,
                device_ids=devices,
                categories=tuple(d.categories),
                factor=round_sig(d.factor),
                first_day=first,
                last_day=last,
            )
        )
        level = "sells nothing" if d.factor == 0 else f"sells about {d.factor:.0%} of its usual demand"
        text = f"{d.label}: {', '.join(devices)} {level} from {_day(world, first)} to {_day(world, last)}."
        notices += _notice(world, d, first, last, text)
    for i, b in enumerate(c.breakdowns, start=1):
        where = f"changes, breakdowns, entry {i}"
        first, last = _window(b, world, where)
        devices = tuple(pick_machines(world, b.machines, where))
        breakdowns += [Breakdown(device_id=x, first_day=first, last_day=last) for x in devices]
        text = (
            f"{', '.join(devices)} out of order from {_day(world, first)} to {_day(world, last)}: no sales and no "
            "restock (reduce and delist still work)."
        )
        notices += _notice(world, b, first, last, text)
    return Conditions(
        suppliers=base.suppliers + tuple(c.suppliers),
        splits=base.splits + tuple(c.splits),
        outages=base.outages + tuple(outages),
        demand_shifts=base.demand_shifts + tuple(shifts),
        breakdowns=base.breakdowns + tuple(breakdowns),
        notices=base.notices + tuple(notices),
    )


def check_conditions(conditions: Conditions, world: World) -> None:
    """ConfigError naming every supplier a split or an outage names that the world does not have."""
    default = world.economics.default_supplier
    known = [default]
    problems = []
    for s in conditions.suppliers:
        if s.supplier_id in known:
            problems.append(f"supplier {s.supplier_id!r} is named twice (the default supplier is {default!r})")
        known.append(s.supplier_id)
    for what, ids in (
        ("splits", [s.supplier_id for s in conditions.splits]),
        ("outages", [o.supplier_id for o in conditions.outages]),
    ):
        problems += [f"{what}: supplier {sid!r} is none of {known}" for sid in ids if sid not in known]
    if len({s.supplier_id for s in conditions.splits}) < len(conditions.splits):
        problems.append("splits: a supplier has two partial-delivery rules; give one per supplier")
    if problems:
        raise ConfigError(f"the scenario does not fit world {world.name!r}: " + "; ".join(problems))


def _catalog(world: World, scenario: Scenario) -> pd.DataFrame:
    change = scenario.changes.unit_costs
    catalog = world.catalog
    if change is None:
        return catalog
    categories = set(catalog["category_l1"].astype(str))
    wrong = [c for c in change.categories if c not in categories]
    if wrong:
        raise ConfigError(
            f"changes, unit_costs: categories {wrong} are not in the catalog (its categories: {sorted(categories)})"
        )
    out = catalog.copy()
    hit = out["category_l1"].astype(str).isin(change.categories) if change.categories else np.ones(len(out), bool)
    out.loc[hit, "unit_cost"] = [_cents(x * change.factor) for x in out.loc[hit, "unit_cost"]]
    return out


def _economics(world: World, scenario: Scenario) -> Economics:
    c = scenario.changes
    update: dict[str, Any] = {}
    if c.fees is not None:
        for key, value in c.fees:
            if value is not None:  # money to the cent; the rent per unit and day may be a fraction of a cent
                update[key] = round_sig(value) if key == "warehouse_rent_per_unit_day" else _cents(value)
    if c.lead_times is not None:
        if c.lead_times.promised_days is not None:
            update["lead_time_nominal_days"] = c.lead_times.promised_days
        if c.lead_times.lead_time_pmf is not None:
            update["lead_time_pmf"] = {k: round_sig(v) for k, v in c.lead_times.lead_time_pmf.items()}
    if not update:
        return world.economics
    return Economics.model_validate({**world.economics.model_dump(), **update})


def _weather(world: World, scenario: Scenario) -> tuple[pd.DataFrame, pd.DataFrame]:
    weather, forecast = world.weather, world.forecast
    for i, w in enumerate(scenario.changes.weather, start=1):
        first, last = _window(w, world, f"changes, weather, entry {i}")
        lo, hi = _dates(world, first, last)
        weather, forecast = weather.copy(), forecast.copy()
        for frame, col in ((weather, "date"), (forecast, "target_date")):
            hit = (pd.to_datetime(frame[col]) >= lo) & (pd.to_datetime(frame[col]) <= hi)
            frame.loc[hit, "t_max_c"] = [_tenths(t + w.add_t_max_c) for t in frame.loc[hit, "t_max_c"]]
            frame.loc[hit, "precip_mm"] = [max(0.0, _tenths(p + w.add_precip_mm)) for p in frame.loc[hit, "precip_mm"]]
    return weather, forecast


def _calendar(world: World, scenario: Scenario) -> pd.DataFrame:
    calendar = world.calendar
    for i, h in enumerate(scenario.changes.holidays, start=1):
        first, last = _window(h, world, f"changes, holidays, entry {i}")
        lo, hi = _dates(world, first, last)
        calendar = calendar.copy()
        hit = (pd.to_datetime(calendar["date"]) >= lo) & (pd.to_datetime(calendar["date"]) <= hi)
        calendar.loc[hit, "is_workday"] = False
        calendar.loc[hit, "day_type"] = "holiday"
        calendar.loc[hit, "holiday_name"] = h.name
    return calendar


def derive_world(world: World, scenario: Scenario) -> World:
    """`world` changed by `scenario` (module docstring); the world itself when the scenario changes nothing."""
    conditions = _conditions(world, scenario)
    check_conditions(conditions, world)
    weather, forecast = _weather(world, scenario)
    derived = world.replace(
        catalog=_catalog(world, scenario),
        economics=_economics(world, scenario),
        weather=weather,
        forecast=forecast,
        calendar=_calendar(world, scenario),
        conditions=conditions,
        world_hash="",
    )
    if identity_hash(derived) == identity_hash(world):
        return world
    derivation = {
        "base_world_hash": identity_hash(world),
        "base_world_name": world.name,
        "scenario": scenario.model_dump(mode="json"),
    }
    return derived.replace(name=f"{world.name}+{scenario.name}", derivation=derivation)


def derived_readme(base: World, derived: World, scenario: Scenario, base_hash: str) -> str:
    """The README of a derived bundle: what it is made from and what the scenario changes and tests."""
    return (
        f"# {derived.name}\n\n"
        f"The world `{base.name}` (world hash `{base_hash[:12]}`) changed by the scenario `{scenario.name}` "
        f"(scenario hash `{scenario.hash[:12]}`), made by `autovend world derive`.\n\n"
        f"- **What changes**: {scenario.summary}\n"
        f"- **What it tests**: {scenario.tests}\n"
        f"- **How it shows in the tools**: {scenario.shows}\n\n"
        "Everything else is the base world's: see its README for the source, the calibration and the validation.\n"
    )


def write_derived(
    base_dir: str | Path, base: World, scenario: Scenario, out_dir: str | Path, *, force: bool = False
) -> tuple[World, dict[str, Any]]:
    """Derive `base` (loaded from `base_dir`) by `scenario` and write the bundle to `out_dir`: (world, manifest)."""
    out = Path(out_dir)
    check_output(out, force, inputs=(base_dir,))
    base_manifest = read_manifest(base_dir)
    derived = derive_world(base, scenario)
    files = world_files(derived)
    files[README] = derived_readme(base, derived, scenario, base.world_hash or identity_hash(base)).encode("utf-8")
    params = dict(base_manifest.get("params") or {})
    params["derived_from"] = {"name": base.name, "world_hash": base.world_hash or identity_hash(base)}
    params["scenario"] = {"name": scenario.name, "hash": scenario.hash, "content": scenario.model_dump(mode="json")}
    manifest = make_manifest(
        derived, files, str(base_manifest.get("source_hash", "")), str(base_manifest.get("calibration_hash", "")), {}
    )
    manifest["params"] = canonical_value(params)
    if RANGES_KEY in base_manifest:
        manifest[RANGES_KEY] = base_manifest[RANGES_KEY]
    manifest["manifest_hash"] = manifest_hash(manifest)
    write_bundle(out, files, manifest, force=force)
    return derived, manifest


def apply_scenario(world: World, scenario: str | os.PathLike[str] | Scenario | None) -> World:
    """`world` changed by a scenario (a `Scenario`, a file or a shipped scenario's name); `world` itself for None."""
    if scenario is None:
        return world
    return derive_world(world, scenario if isinstance(scenario, Scenario) else load_scenario(scenario))
