"""One machine-day of demand in the simulator: the shared kernel of eq. (2)-(3) applied to the live shelves.

Everything the kernel needs that does not change during a run is gathered once in `DemandInputs`;
`expected_demand` and `realize_demand` are pure functions of it, the shelves, the prices, the day's
environment and the shock. Uniforms come from the named stream ("demand", machine, day), one per
product, so a product's draw at a machine-day depends only on its own rate (common random numbers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.demand.environment import environment_multiplier
from autovend.demand.kernel import attraction, demand_from_uniforms, product_rates
from autovend.demand.settings import EnvironmentSettings
from autovend.demand.shock import SHOCK_LAGS, shock_multiplier
from autovend.rng import stream
from autovend.world.model import World

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class DemandInputs:
    """Fixed inputs of the demand kernel for one world, in device and catalog order."""

    b: FloatArray  # (M, K) base attraction
    capacity: FloatArray  # (M,)
    U: FloatArray  # (M,) no-purchase weight
    elasticity: FloatArray  # (M,) by site type
    eta: float
    phi: float
    environment: EnvironmentSettings
    sites: tuple[str, ...]  # distinct site types
    site_index: IntArray  # (M,) position of each machine's site type in `sites`
    categories: tuple[str, ...]  # distinct category_l1
    category_index: IntArray  # (K,) position of each product's category in `categories`

    @classmethod
    def from_world(cls, world: World) -> DemandInputs:
        """Gather the kernel's inputs from a world."""
        site_types = world.machines["site_type"].astype(str).to_numpy()
        cats = world.catalog["category_l1"].astype(str).to_numpy()
        sites, site_index = np.unique(site_types, return_inverse=True)
        categories, category_index = np.unique(cats, return_inverse=True)
        return cls(
            b=np.asarray(world.base_attraction, dtype=float),
            capacity=world.machines["capacity"].to_numpy(dtype=float),
            U=world.machines["U"].to_numpy(dtype=float),
            elasticity=world.demand.elasticity_of(site_types),
            eta=float(world.demand.eta),
            phi=float(world.demand.phi),
            environment=world.demand.environment,
            sites=tuple(str(s) for s in sites),
            site_index=site_index.astype(np.int64),
            categories=tuple(str(c) for c in categories),
            category_index=category_index.astype(np.int64),
        )


def environment_for_day(
    inputs: DemandInputs, t_max_c: float | None, precip_mm: float | None, day_type: str
) -> FloatArray:
    """E of eq. (2) for every machine and product on one day, shape (M, K).

    `environment_multiplier` is evaluated on the distinct site types and categories only and then
    spread to machines and products (E depends on a machine only through its site type and on a
    product only through its category_l1).
    """
    table = environment_multiplier(inputs.environment, inputs.sites, inputs.categories, t_max_c, precip_mm, day_type)
    return table[inputs.site_index][:, inputs.category_index]


def shocks(seed: int, n_machines: int, horizon_days: int, sigma: float, rho: float) -> FloatArray:
    """Xi of every machine and day, shape (M, horizon): drawn once per run from the stream ("shock",)."""
    z = stream(seed, "shock").standard_normal((n_machines, horizon_days + SHOCK_LAGS))
    return shock_multiplier(z, sigma, rho)


def expected_demand(
    inputs: DemandInputs,
    q: npt.ArrayLike,
    price_ratio: npt.ArrayLike,
    env: npt.ArrayLike,
    xi: npt.ArrayLike,
    rows: npt.ArrayLike | None = None,
    cols: npt.ArrayLike | None = None,
) -> FloatArray:
    """Expected demand of products on machines: eq. (2) then the MNL split of eq. (3).

    q, price_ratio, env: (R, C) for the machines `rows` and products `cols` (all when None); xi:
    (R,). Leaving out products has no effect on the others only if they have no unit on the
    shelves (no attraction), since F and W sum over the products given.
    """
    sel = slice(None) if rows is None else np.asarray(rows, dtype=np.int64)
    b = inputs.b[sel]
    if cols is not None:
        b = b[:, np.asarray(cols, dtype=np.int64)]
    w = attraction(
        b,
        q,
        inputs.capacity[sel],
        eta=inputs.eta,
        phi=inputs.phi,
        price_ratio=price_ratio,
        elasticity=inputs.elasticity[sel],
        env=env,
    )
    return product_rates(w, inputs.U[sel], xi)


def demand_uniforms(seed: int, day: int, machines: npt.ArrayLike, n_products: int, n_machines: int) -> FloatArray:
    """Uniforms for the demand of day `day`: rows `machines` of the (n_machines, K) draw of stream ("demand", day).

    The whole matrix is drawn every day, so machine m's uniforms on a day are fixed by the seed alone,
    whatever the agent did at any machine (common random numbers across agents and actions).
    """
    ms = np.asarray(machines, dtype=np.int64)
    return stream(seed, "demand", int(day)).random((n_machines, n_products))[ms]


def realize_demand(rates: npt.ArrayLike, uniforms: npt.ArrayLike) -> IntArray:
    """Poisson demand by inverse CDF of the uniforms (the kernel's `demand_from_uniforms`)."""
    return demand_from_uniforms(uniforms, rates)
