"""What an array run takes from its world (`ArrayFacts`): the simulator's facts as arrays, day by day tables.

Everything comes from `autovend.sim.facts.WorldFacts`, the simulator's own reading of the world, so prices,
costs, price bands, fees and the lead-time table are the simulator's to the fen. Days are numbered as in the
simulator (day 1 = the world's start date); day tables have a row for every day up to the horizon plus the
longest lead time and shelf life, so a batch's expiry day always has a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.demand.environment import environment_multiplier
from autovend.errors import ConfigError
from autovend.sim.facts import WorldFacts
from autovend.sim.queries import EXPIRING_WITHIN_DAYS
from autovend.world.model import World

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

SOON_DAYS = EXPIRING_WITHIN_DAYS  # "expiring soon", as the tools count it


@dataclass(frozen=True, eq=False)
class ArrayFacts:
    """The fixed facts of a world for the array simulator: fen, world order, one row per day."""

    facts: WorldFacts
    n_machines: int
    n_products: int
    horizon: int
    capacity: IntArray  # (M,) units
    ref_fen: IntArray  # (K,)
    cost_fen: IntArray  # (K,)
    life: IntArray  # (K,) shelf life, days
    lo_fen: IntArray  # (K,) lowest allowed price
    hi_fen: IntArray  # (K,) highest allowed price
    band: tuple[float, float]  # the price band as multiples of the reference price
    start_cash_fen: int
    rent_fen: int  # warehouse rent per unit and day
    daily_fee_fen: int  # all machines' fixed fee per day
    visit_fen: int
    fine_fen: int  # per expired unit sold
    leads: IntArray  # lead times with a positive probability, ascending
    lead_cdf: FloatArray  # their cumulative probabilities
    lead_nominal: int  # the promised lead time
    b: FloatArray  # (M * K,) base attractions, flat
    U: FloatArray  # (M,) no-purchase weights
    cap_f: FloatArray  # (M,) the demand model's capacities
    elasticity: FloatArray  # (M,)
    eta: float
    phi: float
    site_of: IntArray  # (M,) index into the environment table's rows
    category_of: IntArray  # (K,) index into its columns
    workday: BoolArray  # (D,) by day number (index 0 unused)
    weekday: IntArray  # (D,) 0 = Monday
    t_max: FloatArray  # (D,) settlement weather (0 past the calendar)
    precip: FloatArray  # (D,)
    env: FloatArray  # (D, sites, categories) the environment multiplier of each day
    n_days: int  # D: rows of the day tables

    @classmethod
    def of(cls, world: World) -> ArrayFacts:
        """The facts of `world` (BundleError, as for the simulator, if it cannot be simulated).

        A world with conditions (a scenario's suppliers, outages, demand shifts, breakdowns: `autovend.world.derive`)
        is refused: the array simulator does not model them, and a run that ignored them would be scored on
        another world.
        """
        if not world.conditions.empty:
            kinds = ", ".join(sorted(k for k, v in world.conditions.payload().items() if v))
            raise ConfigError(
                f"world {world.name!r} has conditions ({kinds}) that the array simulator does not model: play it "
                "with AutoVend-v0 or the tools (autovend run), or give the array envs its base world"
            )
        f = WorldFacts.from_world(world)
        dm = f.demand
        eco = world.economics
        horizon = f.horizon_days
        D = horizon + int(max(f.leads)) + int(f.shelf_life.max()) + 2
        workday = np.zeros(D, dtype=bool)
        weekday = np.zeros(D, dtype=np.int64)
        t_max = np.zeros(D)
        precip = np.zeros(D)
        env = np.ones((D, len(dm.sites), len(dm.category_names)))
        for d in range(1, horizon + 1):
            info = f.days.info(d)
            workday[d] = info.is_workday
            weekday[d] = info.date.weekday()
            t, p, day_type = f.days.weather(d)
            t_max[d], precip[d] = t, p
            env[d] = environment_multiplier(dm.settings.environment, dm.sites, dm.category_names, t, p, day_type)
        return cls(
            facts=f,
            n_machines=f.n_machines,
            n_products=f.n_products,
            horizon=horizon,
            capacity=f.capacity.copy(),
            ref_fen=f.ref_fen.copy(),
            cost_fen=f.cost_fen.copy(),
            life=f.shelf_life.copy(),
            lo_fen=f.price_lo_fen.copy(),
            hi_fen=f.price_hi_fen.copy(),
            band=(float(eco.price_band[0]), float(eco.price_band[1])),
            start_cash_fen=f.start_cash_fen,
            rent_fen=f.rent_fen_per_unit,
            daily_fee_fen=f.daily_fee_fen,
            visit_fen=f.visit_fen,
            fine_fen=f.fine_fen,
            leads=np.array(f.leads, dtype=np.int64),
            lead_cdf=np.array(f.lead_cdf, dtype=np.float64),
            lead_nominal=int(eco.lead_time_nominal_days),
            b=np.ascontiguousarray(dm.b).reshape(-1),
            U=dm.U.copy(),
            cap_f=dm.capacity.copy(),
            elasticity=np.asarray(dm.elasticity, dtype=np.float64).copy(),
            eta=float(dm.settings.eta),
            phi=float(dm.settings.phi),
            site_of=dm.site_index.astype(np.int64),
            category_of=dm.category_index.astype(np.int64),
            workday=workday,
            weekday=weekday,
            t_max=t_max,
            precip=precip,
            env=env,
            n_days=D,
        )

    @property
    def world(self) -> World:
        """The world these facts were read from."""
        return self.facts.world


@dataclass(frozen=True, eq=False)
class PublicFacts:
    """What an agent may know of the world before it plays (the catalog, machines, rules and calendar).

    The array envs hand this out (`facts`); `ArrayFacts` also holds the demand model and the settlement weather,
    which agents never see in advance.
    """

    world_name: str
    currency: str  # the world's ISO 4217 code: every amount the envs give is in it
    device_ids: tuple[str, ...]
    sku_ids: tuple[str, ...]
    n_machines: int
    n_products: int
    horizon: int
    capacity: IntArray  # (M,)
    ref_fen: IntArray  # (K,)
    cost_fen: IntArray  # (K,)
    life: IntArray  # (K,)
    lo_fen: IntArray  # (K,) lowest allowed price
    hi_fen: IntArray  # (K,) highest allowed price
    band: tuple[float, float]
    start_cash_fen: int
    rent_fen: int
    daily_fee_fen: int
    visit_fen: int
    fine_fen: int
    lead_nominal: int
    workday: BoolArray  # (D,) by day number: the published calendar
    weekday: IntArray  # (D,) 0 = Monday

    @classmethod
    def of(cls, f: ArrayFacts) -> PublicFacts:
        """The public part of `f` (copies)."""
        return cls(
            world_name=f.world.name,
            currency=f.world.economics.currency,
            device_ids=f.facts.device_ids,
            sku_ids=f.facts.sku_ids,
            n_machines=f.n_machines,
            n_products=f.n_products,
            horizon=f.horizon,
            capacity=f.capacity.copy(),
            ref_fen=f.ref_fen.copy(),
            cost_fen=f.cost_fen.copy(),
            life=f.life.copy(),
            lo_fen=f.lo_fen.copy(),
            hi_fen=f.hi_fen.copy(),
            band=f.band,
            start_cash_fen=f.start_cash_fen,
            rent_fen=f.rent_fen,
            daily_fee_fen=f.daily_fee_fen,
            visit_fen=f.visit_fen,
            fine_fen=f.fine_fen,
            lead_nominal=f.lead_nominal,
            workday=f.workday.copy(),
            weekday=f.weekday.copy(),
        )
