"""The demand model of a set of machines and products: one typed object from estimate to simulator.

`DemandModel` holds every parameter of eq. (2)-(4) for M machines and K products (base attractions b,
no-purchase weights U, capacities, the machines' site types and the products' categories, the demand
settings eta, phi, elasticities and environment responses) and the persistent shock (`ShockProcess`:
sigma, rho, lags). It owns expected demand (`expected`), the environment multiplier of a day
(`environment`), the shock path of a run (`shock_path`) and sampling (`sample`, `sample_poisson`). The
synthetic operator, the validation replay, the simulator and the evaluation all build one and call it,
so the model that is estimated is the model that generates data and runs the benchmark.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from autovend.demand.environment import environment_multiplier
from autovend.demand.kernel import (
    attraction,
    demand_from_uniforms,
    product_rates,
    purchase_rate,
    reference_shelf,
    sample_demand,
)
from autovend.demand.settings import DemandSettings
from autovend.demand.shock import SHOCK_LAGS, shock_multiplier
from autovend.rng import stream

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ShockProcess:
    """The persistent lognormal shock xi of §3.3: sigma, rho and the MA lags of its latent normal."""

    sigma: float
    rho: float
    lags: int = SHOCK_LAGS

    def __post_init__(self) -> None:
        if not (np.isfinite(self.sigma) and self.sigma >= 0 and np.isfinite(self.rho) and 0 <= self.rho < 1):
            raise ValueError(f"shock needs sigma >= 0 and 0 <= rho < 1, got sigma {self.sigma}, rho {self.rho}")
        if self.lags != SHOCK_LAGS:
            raise ValueError(f"the shock's MA has {SHOCK_LAGS} lags (autovend.demand.shock), got {self.lags}")

    def normals_shape(self, n_machines: int, days: int) -> tuple[int, int]:
        """Shape of the standard normals behind `days` days of `n_machines` shocks (burn-in lags included)."""
        return n_machines, days + self.lags

    def multiplier(self, z: npt.ArrayLike) -> FloatArray:
        """xi from standard normals whose last axis holds `lags` burn-in entries and then the days."""
        return shock_multiplier(z, self.sigma, self.rho)

    def draw(self, rng: np.random.Generator, n_machines: int, days: int) -> FloatArray:
        """xi of `n_machines` machines over `days` days from `rng`, shape (n_machines, days)."""
        return self.multiplier(rng.standard_normal(self.normals_shape(n_machines, days)))


@dataclass(frozen=True, eq=False)
class DemandModel:
    """Eq. (2)-(4) for M machines (rows) and K products (columns); see the module docstring."""

    b: FloatArray  # (M, K) base attraction
    U: FloatArray  # (M,) no-purchase weight
    capacity: FloatArray  # (M,) units a machine holds
    site_types: tuple[str, ...]  # (M,) each machine's site type
    categories: tuple[str, ...]  # (K,) each product's category_l1
    settings: DemandSettings
    shock: ShockProcess
    elasticity: FloatArray = field(init=False)  # (M,) price elasticity by site type
    sites: tuple[str, ...] = field(init=False)  # distinct site types
    site_index: IntArray = field(init=False)  # (M,) position in `sites`
    category_names: tuple[str, ...] = field(init=False)  # distinct categories
    category_index: IntArray = field(init=False)  # (K,) position in `category_names`

    def __post_init__(self) -> None:
        b = np.ascontiguousarray(np.asarray(self.b, dtype=np.float64))
        M, K = b.shape
        U, cap = (np.asarray(v, dtype=np.float64).reshape(-1) for v in (self.U, self.capacity))
        if U.shape != (M,) or cap.shape != (M,) or len(self.site_types) != M or len(self.categories) != K:
            raise ValueError(
                f"demand model of {M} machines x {K} products got U {U.shape}, capacity {cap.shape}, "
                f"{len(self.site_types)} site types and {len(self.categories)} categories"
            )
        sites, site_index = np.unique(np.asarray(self.site_types, dtype=str), return_inverse=True)
        cats, cat_index = np.unique(np.asarray(self.categories, dtype=str), return_inverse=True)
        set_ = object.__setattr__
        set_(self, "b", b)
        set_(self, "U", U)
        set_(self, "capacity", cap)
        set_(self, "site_types", tuple(str(s) for s in self.site_types))
        set_(self, "categories", tuple(str(c) for c in self.categories))
        set_(self, "elasticity", self.settings.elasticity_of(np.asarray(self.site_types, dtype=str)))
        set_(self, "sites", tuple(str(s) for s in sites))
        set_(self, "site_index", site_index.astype(np.int64))
        set_(self, "category_names", tuple(str(c) for c in cats))
        set_(self, "category_index", cat_index.astype(np.int64))

    @property
    def n_machines(self) -> int:
        """M."""
        return int(self.b.shape[0])

    @property
    def n_products(self) -> int:
        """K."""
        return int(self.b.shape[1])

    def environment(
        self,
        t_max_c: float | None,
        precip_mm: float | None,
        day_type: str,
        rows: npt.ArrayLike | None = None,
        cols: npt.ArrayLike | None = None,
    ) -> FloatArray:
        """E of eq. (2) for every machine and product on one day, shape (M, K), or machines `rows` x products `cols`.

        Evaluated on the distinct site types and categories, then spread: E depends on a machine only
        through its site type and on a product only through its category.
        """
        table = environment_multiplier(
            self.settings.environment, self.sites, self.category_names, t_max_c, precip_mm, day_type
        )
        sites = self.site_index if rows is None else self.site_index[np.asarray(rows, dtype=np.int64)]
        cats = self.category_index if cols is None else self.category_index[np.asarray(cols, dtype=np.int64)]
        return table[sites][:, cats]

    def attraction(
        self,
        q: npt.ArrayLike,
        price_ratio: npt.ArrayLike | None = None,
        env: npt.ArrayLike | None = None,
        rows: npt.ArrayLike | None = None,
        cols: npt.ArrayLike | None = None,
        fill: npt.ArrayLike | None = None,
    ) -> FloatArray:
        """Eq. (2): the attraction w of products `cols` on machines `rows` (all when None).

        q, price_ratio, env: (R, C); price_ratio None: reference prices; env None: neutral; fill: the
        shelves' F (R,) when they hold products not given here (None: F from q).
        """
        sel = slice(None) if rows is None else np.asarray(rows, dtype=np.int64)
        b = self.b[sel]
        if cols is not None:
            b = b[:, np.asarray(cols, dtype=np.int64)]
        return attraction(
            b,
            q,
            self.capacity[sel],
            eta=self.settings.eta,
            phi=self.settings.phi,
            price_ratio=price_ratio,
            elasticity=None if price_ratio is None else self.elasticity[sel],
            env=env,
            fill=fill,
        )

    def expected(
        self,
        q: npt.ArrayLike,
        price_ratio: npt.ArrayLike | None = None,
        env: npt.ArrayLike | None = None,
        xi: npt.ArrayLike = 1.0,
        rows: npt.ArrayLike | None = None,
        cols: npt.ArrayLike | None = None,
        fill: npt.ArrayLike | None = None,
    ) -> FloatArray:
        """Expected demand of products on machines: eq. (2) then the multinomial-logit split of eq. (3).

        q, price_ratio, env: (R, C) for the machines `rows` and products `cols` (all when None); xi: (R,)
        or a scalar. Leaving out products changes nothing for the others only if they have no unit on
        the shelves (F and W sum over the products given) or if `fill` gives F.
        """
        w = self.attraction(q, price_ratio, env, rows, cols, fill)
        U = self.U if rows is None else self.U[np.asarray(rows, dtype=np.int64)]
        return product_rates(w, U, xi)

    def purchase_rate(self, w: npt.ArrayLike, xi: npt.ArrayLike = 1.0) -> FloatArray:
        """Eq. (3): expected purchase attempts xi U W / (U + W) of each machine given its attractions w (M, K)."""
        return purchase_rate(np.asarray(w, dtype=float).sum(axis=-1), self.U, xi)

    def shock_path(self, seed: int, days: int) -> FloatArray:
        """xi of every machine over `days` days of a run with `seed`: drawn once from the stream ("shock",)."""
        return self.shock.draw(stream(seed, "shock"), self.n_machines, days)

    @staticmethod
    def sample(rates: npt.ArrayLike, uniforms: npt.ArrayLike) -> IntArray:
        """Poisson demand by inverse CDF of given uniforms (common random numbers)."""
        return demand_from_uniforms(uniforms, rates)

    @staticmethod
    def sample_poisson(rng: np.random.Generator, rates: npt.ArrayLike) -> IntArray:
        """Poisson demand drawn from `rng` (the synthetic operator and the validation replay)."""
        return sample_demand(rng, rates)

    def reference_shelves(self) -> tuple[IntArray, FloatArray]:
        """Each machine's reference shelf (units per product) and its attraction R (`kernel.reference_shelf`)."""
        q_ref = np.zeros(self.b.shape, dtype=np.int64)
        R = np.zeros(self.n_machines)
        for m in range(self.n_machines):
            q_ref[m], R[m] = reference_shelf(self.b[m], int(round(self.capacity[m])), self.settings.phi)
        return q_ref, R

    def equals(self, other: DemandModel) -> bool:
        """Same parameters, value for value (the model itself compares by identity)."""
        return (
            np.array_equal(self.b, other.b)
            and np.array_equal(self.U, other.U)
            and np.array_equal(self.capacity, other.capacity)
            and self.site_types == other.site_types
            and self.categories == other.categories
            and self.settings == other.settings
            and self.shock == other.shock
        )

    def with_b(self, b: npt.ArrayLike) -> DemandModel:
        """The same model with other base attractions (e.g. an ablation's)."""
        return DemandModel(
            b=np.asarray(b, dtype=float),
            U=self.U,
            capacity=self.capacity,
            site_types=self.site_types,
            categories=self.categories,
            settings=self.settings,
            shock=self.shock,
        )

    def subset(self, rows: Sequence[int] | npt.ArrayLike) -> DemandModel:
        """The model of the machines `rows` only (same products, settings and shock)."""
        idx = np.asarray(rows, dtype=np.int64)
        return DemandModel(
            b=self.b[idx],
            U=self.U[idx],
            capacity=self.capacity[idx],
            site_types=tuple(self.site_types[i] for i in idx),
            categories=self.categories,
            settings=self.settings,
            shock=self.shock,
        )
