"""A small valid world built in memory from a seed, for tests and benchmarks (no bundle, no files)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from autovend.data.calendar import build_calendar
from autovend.data.weather import daily_weather, forecast_weather
from autovend.demand.kernel import reference_shelf
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.demand.shock import sigma_from_r
from autovend.rng import stream
from autovend.world.model import Economics, World

TOY_START = dt.date(2025, 1, 1)
TOY_CAPACITY = 200  # units per machine
# The largest toy world: 1,000,000 machine-product pairs is 36 times cn20's 20 x 1,372 (a world of 200 x 5,000 is
# built in 0.5 s and holds 200 MB before it is played); 100,000 x 100,000 would allocate 74.5 GiB at once.
MAX_TOY_MACHINES = 1_000
MAX_TOY_PRODUCTS = 10_000
MAX_TOY_PAIRS = 1_000_000
MAX_TOY_DAYS = 3_660  # ten years; the weather and calendar are built for the whole horizon


def _whole(value: object, most: int) -> int | None:
    """`value` as an int when it is a whole number from 1 to `most` (no boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= most:
        return None
    return int(value)


def toy_size_problem(n_machines: object, n_products: object, horizon_days: object = None) -> str | None:
    """What is wrong with a toy world's size (machines, products, horizon), in words with the limits; None if fine."""
    problems = []
    m, k = _whole(n_machines, MAX_TOY_MACHINES), _whole(n_products, MAX_TOY_PRODUCTS)
    if m is None:
        problems.append(f"machines must be a whole number from 1 to {MAX_TOY_MACHINES:,}, got {n_machines!r}")
    if k is None:
        problems.append(f"products must be a whole number from 1 to {MAX_TOY_PRODUCTS:,}, got {n_products!r}")
    if m is not None and k is not None and m * k > MAX_TOY_PAIRS:
        problems.append(
            f"{m:,} machines x {k:,} products is {m * k:,} machine-product pairs, over the limit of {MAX_TOY_PAIRS:,}"
        )
    if horizon_days is not None and _whole(horizon_days, MAX_TOY_DAYS) is None:
        problems.append(f"the horizon must be from 1 to {MAX_TOY_DAYS:,} days, got {horizon_days!r}")
    return "; ".join(problems) or None


# The paper's 20-machine network (§3.2): site type and a few location labels each.
PAPER_NETWORK: tuple[tuple[str, int], ...] = (
    ("worksite", 6),
    ("campus", 2),
    ("residential", 4),
    ("commercial", 6),
    ("office", 2),
)
LOCATIONS: dict[str, tuple[str, ...]] = {
    "worksite": ("canteen", "plant_floor"),
    "campus": ("university", "school_dormitory"),
    "residential": ("apartment", "dormitory"),
    "commercial": ("sports_venue", "hotel", "leisure_venue"),
    "office": ("industrial_park", "office_building"),
}
SUBCATEGORIES: dict[str, tuple[str, ...]] = {
    "drinks": ("water", "tea", "soda", "juice", "coffee"),
    "snacks": ("chips", "biscuits", "candy", "nuts", "noodles"),
}
MARGINS: dict[str, tuple[float, float]] = {
    "drinks": (0.30, 0.40),
    "snacks": (0.50, 0.60),
}  # gross margin range
SHELF_LIVES = (30, 90)  # days
# No-purchase weight U = u * R with u = x e / (1 - e) (paper §3.3: x = 0.0638, e = 0.318).
X_RATIO, E_ELASTICITY = 0.0638, 0.318
R_DISPERSION, RHO = 2.74, 0.21


def _site_types(n_machines: int) -> list[str]:
    """The paper's network for 20 machines; otherwise the five site types in turn."""
    if n_machines == sum(n for _, n in PAPER_NETWORK):
        return [site for site, n in PAPER_NETWORK for _ in range(n)]
    order = [site for site, _ in PAPER_NETWORK]
    return [order[i % len(order)] for i in range(n_machines)]


def toy_machines(n_machines: int, rng: np.random.Generator) -> pd.DataFrame:
    """device_id, location, site_type, capacity (U is filled in by `toy_world`)."""
    sites = _site_types(n_machines)
    counts: dict[str, int] = {}
    rows = []
    for site in sites:
        counts[site] = counts.get(site, 0) + 1
        place = LOCATIONS[site][int(rng.integers(len(LOCATIONS[site])))]
        rows.append((f"CN_{site.upper()}_{counts[site]:02d}", f"{site}/{place}", site, TOY_CAPACITY))
    return pd.DataFrame(rows, columns=["device_id", "location", "site_type", "capacity"])


def toy_catalog(n_products: int, rng: np.random.Generator) -> pd.DataFrame:
    """sku_id, name, category_l1, category_l2, ref_price, unit_cost, shelf_life_days.

    Drinks and snacks alternate; reference prices are multiples of 0.5 CNY; unit costs follow the
    paper's gross margins (30-40% drinks, 50-60% snacks); shelf lives are 30 or 90 days, both present
    whenever there are at least two products.
    """
    rows = []
    for i in range(n_products):
        l1 = "drinks" if i % 2 == 0 else "snacks"
        l2 = SUBCATEGORIES[l1][int(rng.integers(len(SUBCATEGORIES[l1])))]
        lo, hi = (2.5, 8.0) if l1 == "drinks" else (3.0, 12.0)
        ref = float(rng.integers(int(lo * 2), int(hi * 2) + 1)) / 2.0
        margin = rng.uniform(*MARGINS[l1])
        cost = round(ref * (1.0 - margin), 2)
        life = SHELF_LIVES[i % 2] if i < 2 else int(rng.choice(SHELF_LIVES, p=[0.4, 0.6]))
        rows.append((f"SKU{i + 1:04d}", f"{l2} {i + 1}", l1, l2, ref, cost, life))
    return pd.DataFrame(
        rows,
        columns=["sku_id", "name", "category_l1", "category_l2", "ref_price", "unit_cost", "shelf_life_days"],
    )


def toy_attraction(
    machines: pd.DataFrame, catalog: pd.DataFrame, phi: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Base attraction b (M, K) and no-purchase weights U (M,).

    b is lognormal popularity times a site-by-category preference; each machine is scaled so that
    its reference shelf (at full fill, reference prices, neutral weather) sells 25-60 units a day,
    and U = u * R as in the calibration.
    """
    M, K = len(machines), len(catalog)
    popularity = rng.lognormal(0.0, 1.0, size=K)
    drinks = (catalog["category_l1"] == "drinks").to_numpy()
    pref = rng.uniform(0.7, 1.4, size=(M, 2))
    b = popularity[None, :] * np.where(drinks[None, :], pref[:, :1], pref[:, 1:]) * rng.lognormal(0, 0.3, (M, K))
    u = X_RATIO * E_ELASTICITY / (1.0 - E_ELASTICITY)
    target = rng.uniform(25.0, 60.0, size=M)  # units a day of the reference shelf
    _, R0 = reference_shelf(b, TOY_CAPACITY, phi)
    R = target * (1.0 + u) / u  # reference shelf sells u R / (1 + u) = target
    b = b * (R / R0)[:, None]
    return b, u * R


DEMAND_OVERRIDES = ("base_attraction", "U", "demand", "shock_sigma", "shock_rho")  # parts of the demand model


def toy_world(n_machines: int = 3, n_products: int = 12, seed: int = 0, **overrides: Any) -> World:
    """A small valid world from `seed`: machines, catalog, demand model, weather and calendar.

    Starts on 2025-01-01 in Shanghai; weather and forecasts are seeded draws from Shanghai's normals;
    the calendar is China's (built with the `holidays` library) to 400 days past the horizon.
    A size beyond `MAX_TOY_MACHINES`, `MAX_TOY_PRODUCTS`, `MAX_TOY_PAIRS` or `MAX_TOY_DAYS` (or below 1) is a
    ValueError saying which (`toy_size_problem`), before anything is allocated.
    `overrides` replace any `World` field (e.g. `economics=Economics(horizon_days=30)`, `name="x"`) or a
    part of the demand model (DEMAND_OVERRIDES: `base_attraction` b, `U`, `demand` settings,
    `shock_sigma`, `shock_rho`); the demand model is built from the (overridden) machines and catalog
    unless `demand_model` itself is given. A changed horizon or start date sizes the weather and
    calendar accordingly.
    """
    unknown = set(overrides) - {f.name for f in dataclasses.fields(World)} - set(DEMAND_OVERRIDES)
    if unknown:
        raise TypeError(f"toy_world got unknown World fields {sorted(unknown)}")
    economics: Economics = overrides.get("economics", Economics())
    problem = toy_size_problem(n_machines, n_products, economics.horizon_days)
    if problem is not None:  # before anything is allocated
        raise ValueError(f"toy_world: {problem}")
    rng = stream(seed, "toy_world", n_machines, n_products)
    demand: DemandSettings = overrides.pop("demand", DemandSettings())
    start: dt.date = overrides.get("start_date", TOY_START)
    horizon = economics.horizon_days
    toy_m, toy_c = toy_machines(n_machines, rng), toy_catalog(n_products, rng)
    b, U = toy_attraction(toy_m, toy_c, demand.phi, rng)
    machines = overrides.pop("machines", toy_m)
    catalog = overrides.pop("catalog", toy_c)
    b = np.asarray(overrides.pop("base_attraction", b), dtype=float)
    U = np.asarray(overrides.pop("U", machines["U"] if "U" in machines.columns else U), dtype=float)
    model = DemandModel(
        b=b,
        U=U,
        capacity=machines["capacity"].to_numpy(dtype=float),
        site_types=tuple(machines["site_type"].astype(str)),
        categories=tuple(catalog["category_l1"].astype(str)),
        settings=demand,
        shock=ShockProcess(
            sigma=float(overrides.pop("shock_sigma", sigma_from_r(R_DISPERSION))),
            rho=float(overrides.pop("shock_rho", RHO)),
        ),
    )
    weather = daily_weather(start, start + dt.timedelta(days=horizon - 1 + 7), seed)  # a week past the last day
    fields: dict[str, Any] = {
        "name": f"toy-{n_machines}x{n_products}-s{seed}",
        "machines": machines.drop(columns=["U"], errors="ignore"),
        "catalog": catalog,
        "demand_model": model,
        "start_date": start,
        "weather": weather,
        "forecast": forecast_weather(weather, seed),
        "calendar": build_calendar("CN", start, start + dt.timedelta(days=horizon + 400), "zh_CN"),
        "economics": economics,
    }
    fields.update(overrides)
    return World(**fields)
