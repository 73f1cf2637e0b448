"""One machine-day of demand in the simulator: the world's `DemandModel` applied to the live shelves.

The model (`autovend.demand.model`) owns expected demand, the environment of a day and the shock path;
this module adds what is the simulator's own: the uniforms behind each day's draws. They come from the
named stream ("demand", day), one per machine and product, so a product's draw at a machine-day depends
only on its own rate (common random numbers across agents and actions).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.rng import stream

FloatArray = npt.NDArray[np.float64]


def demand_uniforms(
    seed: int,
    day: int,
    machines: npt.ArrayLike,
    n_products: int,
    n_machines: int,
    products: npt.ArrayLike | None = None,
) -> FloatArray:
    """Uniforms for day `day`: rows `machines`, columns `products` (None: all) of stream ("demand", day).

    They are taken from the stream's (n_machines, K) draw: the whole matrix is drawn every day, so
    machine m's uniforms on a day are fixed by the seed alone, whatever the agent did at any machine
    (common random numbers across agents and actions).
    """
    ms = np.asarray(machines, dtype=np.int64)
    u = stream(seed, "demand", int(day)).random((n_machines, n_products))
    if products is None:
        return u[ms]
    return u[np.ix_(ms, np.asarray(products, dtype=np.int64))]
