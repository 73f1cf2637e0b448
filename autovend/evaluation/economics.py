"""Expected gross profit of a shelf under the world's demand model (shared by several metrics).

A "shelf" here is a batch of rows (machine-days or hypothetical displays), each with up to S product
slots: `machine` (R,), `product` (R, S) catalog indexes, `q` (R, S) units, `price` (R, S) CNY and
`env` (R, S) environment multipliers. Unused slots have q = 0 (no attraction, no demand), so rows of
different lengths share one padded array.

The expected gross profit of a row is sum_k E[min(D_k, q_k)] * (p_k - c_k), with D_k ~ Poisson of
the kernel's expected demand (eq. (2)-(3), `autovend.demand.kernel`) at the neutral shock xi = 1:
demand beyond the shelf stock is lost, as in the simulator. Every unit counts at its unit cost,
expired or not (the metrics built on this judge choices of mix and price, not expiry).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import special

from autovend.demand.environment import environment_multiplier
from autovend.demand.kernel import attraction, product_rates
from autovend.demand.model import DemandModel
from autovend.sim.money import band_fen, to_fen
from autovend.world.model import World

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def expected_sales(rate: npt.ArrayLike, q: npt.ArrayLike) -> FloatArray:
    """E[min(D, q)] for D ~ Poisson(rate), elementwise (0 where q <= 0 or rate <= 0).

    E[min(D, q)] = rate * P(D <= q - 1) + q * P(D >= q + 1); e.g. q = 1 gives 1 - exp(-rate).
    """
    return expected_sales_and_slope(rate, q)[0]


def expected_sales_and_slope(rate: npt.ArrayLike, q: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """E[min(D, q)] and its derivative in the rate, P(D <= q - 1), elementwise."""
    lam = np.asarray(rate, dtype=float)
    qq = np.asarray(q, dtype=float)
    lam, qq = np.broadcast_arrays(lam, qq)
    live = (lam > 0) & (qq > 0)
    lam_s = np.where(live, lam, 1.0)
    q_s = np.where(live, qq, 1.0)
    below = special.pdtr(q_s - 1.0, lam_s)  # P(D <= q - 1)
    at_q = np.exp(q_s * np.log(lam_s) - lam_s - special.gammaln(q_s + 1.0))  # P(D = q)
    above = np.clip(1.0 - below - at_q, 0.0, None)  # P(D >= q + 1)
    sales = np.where(live, lam_s * below + q_s * above, 0.0)
    slope = np.where(live, below, 0.0)
    return sales, slope


def _environment_table(world: World, model: DemandModel) -> FloatArray:
    """E by day, site type and category: (horizon + 1, n_sites, n_categories); row 0 is neutral."""
    horizon = world.horizon_days
    weather = world.weather.copy()
    weather["date"] = pd.to_datetime(weather["date"]).dt.date
    wx = weather.set_index("date")
    cal = world.calendar.copy()
    cal["date"] = pd.to_datetime(cal["date"]).dt.date
    day_type = dict(zip(cal["date"], cal["day_type"].astype(str), strict=True))
    out = np.ones((horizon + 1, len(model.sites), len(model.category_names)))
    for d in range(1, horizon + 1):
        date = world.start_date + dt.timedelta(days=d - 1)
        t_max = float(wx.at[date, "t_max_c"])
        precip = float(wx.at[date, "precip_mm"])
        out[d] = environment_multiplier(
            model.settings.environment, model.sites, model.category_names, t_max, precip, day_type[date]
        )
    return out


@dataclass(frozen=True, eq=False)
class ShelfEconomics:
    """The demand model of one world, ready to price out shelves (see the module docstring).

    model: the world's demand model; unit_cost, ref_price, price_lo, price_hi: (K,) CNY (the band
    exactly as the simulator enforces it); env_days: E by day, site type and category.
    """

    model: DemandModel
    unit_cost: FloatArray
    ref_price: FloatArray
    price_lo: FloatArray
    price_hi: FloatArray
    env_days: FloatArray

    @classmethod
    def from_world(cls, world: World) -> ShelfEconomics:
        """Gather everything from a world (about 10 ms for 180 days)."""
        model = world.demand_model
        ref_fen = [to_fen(float(x)) for x in world.catalog["ref_price"]]
        bands = np.array([band_fen(r, world.economics.price_band) for r in ref_fen], dtype=float) / 100.0
        return cls(
            model=model,
            unit_cost=world.catalog["unit_cost"].to_numpy(dtype=float),
            ref_price=np.array(ref_fen, dtype=float) / 100.0,
            price_lo=bands[:, 0],
            price_hi=bands[:, 1],
            env_days=_environment_table(world, model),
        )

    @property
    def n_days(self) -> int:
        """Days covered by the environment table."""
        return len(self.env_days) - 1

    def env(self, day: npt.ArrayLike, machine: npt.ArrayLike, product: npt.ArrayLike) -> FloatArray:
        """E of eq. (2) on `day` (R,) at `machine` (R,) for `product` (R, S)."""
        d = np.asarray(day, dtype=np.int64)[:, None]
        site = self.model.site_index[np.asarray(machine, dtype=np.int64)][:, None]
        cat = self.model.category_index[np.asarray(product, dtype=np.int64)]
        return self.env_days[d, site, cat]

    def mean_env(self, first: int, last: int, machine: npt.ArrayLike, product: npt.ArrayLike) -> FloatArray:
        """Mean E over days first..last (clipped to the table) at `machine` (R,) for `product` (R, S)."""
        lo, hi = max(1, int(first)), min(self.n_days, int(last))
        table = self.env_days[lo : hi + 1].mean(axis=0)
        site = self.model.site_index[np.asarray(machine, dtype=np.int64)][:, None]
        return table[site, self.model.category_index[np.asarray(product, dtype=np.int64)]]

    def base_attraction(
        self, machine: npt.ArrayLike, product: npt.ArrayLike, q: npt.ArrayLike, env: npt.ArrayLike
    ) -> FloatArray:
        """Attraction w of eq. (2) at reference prices (the fill term counts every unit of the row)."""
        m = np.asarray(machine, dtype=np.int64)
        b = self.model.b[m[:, None], np.asarray(product, dtype=np.int64)]
        return attraction(
            b, q, self.model.capacity[m], eta=self.model.settings.eta, phi=self.model.settings.phi, env=env
        )

    def price_factor(self, machine: npt.ArrayLike, product: npt.ArrayLike, price: npt.ArrayLike) -> FloatArray:
        """(p / p_ref) ** -elasticity, the price term of eq. (2)."""
        ratio = np.asarray(price, dtype=float) / self.ref_price[np.asarray(product, dtype=np.int64)]
        eps = self.model.elasticity[np.asarray(machine, dtype=np.int64)][:, None]
        return np.power(ratio, -eps)

    def rates(
        self,
        machine: npt.ArrayLike,
        product: npt.ArrayLike,
        q: npt.ArrayLike,
        price: npt.ArrayLike,
        env: npt.ArrayLike,
        xi: npt.ArrayLike = 1.0,
    ) -> FloatArray:
        """Expected demand of every slot (eq. (2)-(3)) at shock `xi` (default neutral)."""
        m = np.asarray(machine, dtype=np.int64)
        w = self.base_attraction(m, product, q, env) * self.price_factor(m, product, price)
        return product_rates(w, self.model.U[m], xi)

    def gross_profit(
        self,
        machine: npt.ArrayLike,
        product: npt.ArrayLike,
        q: npt.ArrayLike,
        price: npt.ArrayLike,
        env: npt.ArrayLike,
        xi: npt.ArrayLike = 1.0,
    ) -> FloatArray:
        """Expected gross profit of every row (R,): sum over slots of E[min(D, q)] * (price - unit cost)."""
        lam = self.rates(machine, product, q, price, env, xi)
        margin = np.asarray(price, dtype=float) - self.unit_cost[np.asarray(product, dtype=np.int64)]
        return np.sum(expected_sales(lam, q) * margin, axis=-1)
