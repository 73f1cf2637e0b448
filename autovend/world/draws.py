"""Worlds drawn from a world's identified set (`draw_world`, `write_draws`): `autovend world draw`.

Draw i of seed s takes its numbers from the named streams ("world_draw", i, QUANTITY) under s (`autovend.rng`), one
stream per quantity, so a draw is the same whatever N is and whichever other quantities the set has. Every drawn
number is rounded on a coarse grid before it enters the world (u to 4 significant digits, elasticities and margins
to 0.001, capacities to steps of 10 units, shelf lives and lead times to whole days; the world's values then to its
canonical digits), so the same seed gives the same worlds, hence the same hashes, on any machine: the uniforms are
exact (PCG64) and only a power sits between them and the grid.

What a draw varies (`autovend.world.ranges`): u (every U = u R times the drawn u over the world's), the price
elasticity of every site type, the margins of products whose unit cost was drawn in a band, the capacities of
devices whose capacity is a setting, the shelf lives (by subcategory) of products whose shelf life is a setting, and
the lead times of the default supplier (all shifted by a whole number of days). The rest is the world's.
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import numpy as np

from autovend.canonical import canonical_value, json_bytes, round_sig
from autovend.demand.model import DemandModel
from autovend.errors import ConfigError
from autovend.io import OutputKind, check_output_dir, output_dir
from autovend.rng import stream
from autovend.world.bundle import MANIFEST, README, make_manifest, manifest_hash, world_files
from autovend.world.model import Economics, World
from autovend.world.ranges import IdentifiedSet
from autovend.world.runcopy import identity_hash

DRAWS_FILE = "draws.json"
MAX_DRAWS = 1000
OWN = ("source", "mapped")  # shelf_life_source values of a shelf life the source gave


def _grid(x: float, step: str) -> float:
    """`x` rounded half-up to the decimal grid `step` ("0.001", "0.01")."""
    return float(Decimal(repr(float(x))).quantize(Decimal(step), rounding=ROUND_HALF_UP))


def _uniform(seed: int, index: int, what: str, size: int | None = None) -> Any:
    gen = stream(seed, "world_draw", index, what)
    return gen.random() if size is None else gen.random(size)


def _u(world: World, ranges: IdentifiedSet, seed: int, index: int, values: dict[str, Any]) -> np.ndarray:
    U = world.demand_model.U
    if ranges.u is None:
        return U
    lo, hi = ranges.u.draw_range()
    x = float(_uniform(seed, index, "u"))
    u = round_sig(lo * (hi / lo) ** x, 4) if hi > lo else ranges.u.value
    values["u"] = u
    factor = u / ranges.u.value
    return np.array([round_sig(float(v) * factor) for v in U])


def _elasticity(world: World, ranges: IdentifiedSet, seed: int, index: int, values: dict[str, Any]) -> dict[str, float]:
    table = dict(world.demand_model.settings.elasticity)
    sites = sorted(table)
    x = _uniform(seed, index, "elasticity", len(sites))
    e = ranges.elasticity
    drawn = {s: _grid(e.low + float(u) * (e.high - e.low), "0.001") for s, u in zip(sites, x, strict=True)}
    values["elasticity"] = drawn
    return drawn


def _catalog(world: World, ranges: IdentifiedSet, seed: int, index: int, values: dict[str, Any]) -> Any:
    cat = world.catalog.copy()
    if ranges.margins and "unit_cost_source" in cat:
        drawn = (cat["unit_cost_source"].astype(str) == "margin_draw").to_numpy()
        x = _uniform(seed, index, "margin", len(cat))
        costs = cat["unit_cost"].to_numpy(dtype=float).copy()
        for k in np.flatnonzero(drawn):
            band = ranges.margins.get(str(cat["category_l1"].iloc[k]))
            if band is None:
                continue
            m = _grid(band.low + float(x[k]) * (band.high - band.low), "0.001")
            costs[k] = _grid(float(cat["ref_price"].iloc[k]) * (1.0 - m), "0.01")
        cat["unit_cost"] = costs
        if drawn.any():
            values["margins"] = int(drawn.sum())  # products whose margin was drawn
    f = ranges.shelf_life_factor
    if f is not None:
        source = cat["shelf_life_source"].astype(str) if "shelf_life_source" in cat else None
        borrowed = np.ones(len(cat), bool) if source is None else ~source.isin(OWN).to_numpy()
        subs = sorted(set(cat.loc[borrowed, "category_l2"].astype(str)))
        x = _uniform(seed, index, "shelf_life", len(subs))
        factor = {s: _grid(f.low + float(u) * (f.high - f.low), "0.001") for s, u in zip(subs, x, strict=True)}
        life = cat["shelf_life_days"].to_numpy().astype(np.int64).copy()
        for k in np.flatnonzero(borrowed):
            life[k] = max(1, int(_grid(life[k] * factor[str(cat["category_l2"].iloc[k])], "1")))
        cat["shelf_life_days"] = life
        if factor:
            values["shelf_life_factor"] = factor
    return cat


def _machines(world: World, ranges: IdentifiedSet, seed: int, index: int, values: dict[str, Any]) -> Any:
    m = world.machines.copy()
    f = ranges.capacity_factor
    if f is None or not ranges.borrowed_capacity:
        return m
    x = _uniform(seed, index, "capacity", len(m))
    caps = m["capacity"].to_numpy().astype(np.int64).copy()
    ids = m["device_id"].astype(str).tolist()
    for i, d in enumerate(ids):
        if d in ranges.borrowed_capacity:
            factor = f.low + float(x[i]) * (f.high - f.low)
            caps[i] = max(10, int(_grid(caps[i] * factor / 10, "1")) * 10)
    m["capacity"] = caps
    values["capacity"] = {d: int(c) for d, c in zip(ids, caps, strict=True) if d in ranges.borrowed_capacity}
    return m


def _economics(world: World, ranges: IdentifiedSet, seed: int, index: int, values: dict[str, Any]) -> Economics:
    lo, hi = int(ranges.lead_shift_days.low), int(ranges.lead_shift_days.high)
    shift = lo + min(int(float(_uniform(seed, index, "lead_shift")) * (hi - lo + 1)), hi - lo)
    values["lead_shift_days"] = shift
    pmf: dict[int, float] = {}
    for lead, p in sorted(world.economics.lead_time_pmf.items()):
        day = max(1, lead + shift)  # leads shifted below 1 day merge into 1 day
        pmf[day] = round_sig(pmf.get(day, 0.0) + p)
    return Economics.model_validate({**world.economics.model_dump(), "lead_time_pmf": pmf})


def draw_world(world: World, ranges: IdentifiedSet, seed: int, index: int) -> tuple[World, dict[str, Any]]:
    """Draw `index` (1, 2, ...) of `seed` from the identified set: the world and the values drawn."""
    values: dict[str, Any] = {}
    U = _u(world, ranges, seed, index, values)
    elasticity = _elasticity(world, ranges, seed, index, values)
    catalog = _catalog(world, ranges, seed, index, values)
    machines = _machines(world, ranges, seed, index, values)
    economics = _economics(world, ranges, seed, index, values)
    dm = world.demand_model
    settings = dm.settings.model_copy(update={"elasticity": elasticity})
    settings = type(settings).model_validate(settings.model_dump())  # the per-site tables again
    model = DemandModel(
        b=dm.b,
        U=U,
        capacity=machines["capacity"].to_numpy(dtype=float),
        site_types=dm.site_types,
        categories=dm.categories,
        settings=settings,
        shock=dm.shock,
    )
    drawn = world.replace(
        name=f"{world.name}.draw{index:02d}",
        machines=machines,
        catalog=catalog,
        demand_model=model,
        economics=economics,
        world_hash="",
        derivation=None,
    )
    return drawn, values


def _readme(base: World, drawn: World, seed: int, index: int, values: dict[str, Any]) -> str:
    shown = json.dumps(canonical_value(values), sort_keys=True, ensure_ascii=False)
    return (
        f"# {drawn.name}\n\n"
        f"Draw {index} of seed {seed} from the identified set of `{base.name}` (world hash "
        f"`{identity_hash(base)[:12]}`), made by `autovend world draw`: what its source did not identify, drawn "
        "within the ranges its manifest records (docs/scenarios.md, `autovend.world.ranges`).\n\n"
        f"Drawn: `{shown}`\n\nEverything else is the base world's: see its README.\n"
    )


def draw_bundle(
    base: World, base_manifest: dict[str, Any], ranges: IdentifiedSet, seed: int, index: int
) -> tuple[World, dict[str, bytes], dict[str, Any], dict[str, Any]]:
    """Draw `index` of `seed` as a bundle: the world, its files, its manifest and the values drawn."""
    world, values = draw_world(base, ranges, seed, index)
    files = world_files(world)
    files[README] = _readme(base, world, seed, index, values).encode("utf-8")
    params = dict(base_manifest.get("params") or {})
    params["drawn_from"] = {"name": base.name, "world_hash": identity_hash(base)}
    params["draw"] = {"seed": seed, "index": index, "values": values}
    manifest = make_manifest(
        world, files, str(base_manifest.get("source_hash", "")), str(base_manifest.get("calibration_hash", "")), {}
    )
    manifest["params"] = canonical_value(params)
    manifest["ranges"] = ranges.payload()
    manifest["manifest_hash"] = manifest_hash(manifest)
    return world, files, manifest, values


def write_draws(
    base_dir: str | Path,
    base: World,
    base_manifest: dict[str, Any],
    ranges: IdentifiedSet,
    n: int,
    seed: int,
    out_dir: str | Path,
    *,
    force: bool = False,
) -> dict[str, Any]:
    """Write `n` draws (bundles OUT/NAME) and OUT/draws.json listing them; return the draws' manifest."""
    if not 1 <= n <= MAX_DRAWS:
        raise ConfigError(f"--n {n} draws: give 1 to {MAX_DRAWS}")
    if seed < 0:
        raise ConfigError(f"--seed {seed}: give a seed >= 0")
    out = Path(out_dir)
    check_output_dir(out, OutputKind.WORLD_DRAWS, force=force, inputs=(base_dir,))
    listing: dict[str, Any] = {
        "base": {"name": base.name, "world_hash": identity_hash(base)},
        "seed": seed,
        "n": n,
        "ranges": ranges.payload(),
        "draws": [],
    }
    with output_dir(out, OutputKind.WORLD_DRAWS, force=force) as tmp:
        for index in range(1, n + 1):
            world, files, manifest, values = draw_bundle(base, base_manifest, ranges, seed, index)
            folder = tmp / world.name
            folder.mkdir()
            for name, data in files.items():
                (folder / name).write_bytes(data)
            (folder / MANIFEST).write_bytes(json_bytes(manifest))
            listing["draws"].append(
                {"index": index, "name": world.name, "world_hash": manifest["world_hash"], "values": values}
            )
        listing = canonical_value(listing)
        (tmp / DRAWS_FILE).write_bytes(json_bytes(listing))
    return listing
