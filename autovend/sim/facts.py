"""What a run takes from its world and never changes (`WorldFacts`), and the check that refuses a world.

Ids and their indexes, capacities, prices and costs in fen, the price bands, the fees, the lead-time
table, the demand inputs and the day table: built once per simulator, shared read-only by its parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.demand.model import DemandModel
from autovend.errors import BundleError
from autovend.sim import inventory as inv
from autovend.sim.days import DayTable
from autovend.sim.money import band_fen, to_fen
from autovend.sim.results import COST_KINDS
from autovend.sim.supply import PREMIUM_KIND, SupplierTerms, supplier_terms
from autovend.world.conditions import Conditions, demand_factors
from autovend.world.model import World

IntArray = npt.NDArray[np.int64]
ObjectArray = npt.NDArray[np.object_]


@dataclass(frozen=True, eq=False)
class WorldFacts:
    """The fixed facts of a world in the simulator's units (fen, world order of machines and products)."""

    world: World
    device_ids: tuple[str, ...]
    sku_ids: tuple[str, ...]
    device_index: dict[str, int]
    sku_index: dict[str, int]
    device_arr: ObjectArray  # device_ids as an array, for fancy indexing
    sku_arr: ObjectArray
    capacity: IntArray  # (M,)
    capacity_units: list[int]  # the same as Python ints (fast scalar reads)
    ref_fen: IntArray  # (K,) reference prices
    cost_fen: IntArray  # (K,) unit costs
    unit_cost: list[int]  # the same as Python ints
    shelf_life: IntArray  # (K,) days
    price_lo_fen: IntArray  # (K,) lowest allowed price (inclusive)
    price_hi_fen: IntArray  # (K,) highest allowed price (inclusive)
    start_cash_fen: int
    rent_fen_per_unit: int  # warehouse rent per unit and day
    daily_fee_fen: int  # fixed fee of all machines per day
    visit_fen: int
    fine_fen: int  # per expired unit sold
    leads: tuple[int, ...]  # lead times with a positive probability
    lead_cdf: tuple[float, ...]
    demand: DemandModel  # the world's (the same object)
    days: DayTable
    suppliers: dict[str, SupplierTerms]  # by supplier id, the default one first
    conditions: Conditions  # the world's (`autovend.world.conditions`)
    cost_kinds: tuple[str, ...]  # COST_KINDS, and PREMIUM_KIND when a supplier charges above the unit cost
    plain_orders: bool  # orders of the default supplier are never split nor held by an outage (the inline path)

    def demand_factors(self, day: int) -> npt.NDArray[np.float64] | None:
        """(M, n categories) multipliers of expected demand on `day` from the world's conditions; None: none."""
        if not (self.conditions.demand_shifts or self.conditions.breakdowns):
            return None
        return demand_factors(self.conditions, self.device_ids, self.demand.category_names, day)

    @property
    def n_machines(self) -> int:
        """M, the number of machines."""
        return self.world.n_machines

    @property
    def n_products(self) -> int:
        """K, the number of products."""
        return self.world.n_products

    @property
    def horizon_days(self) -> int:
        """Days in an episode."""
        return self.world.horizon_days

    @classmethod
    def from_world(cls, world: World) -> WorldFacts:
        """The facts of `world`; BundleError naming every problem if the simulator cannot run it."""
        check_world(world)
        eco = world.economics
        device_ids = tuple(world.machines["device_id"].astype(str))
        sku_ids = tuple(world.catalog["sku_id"].astype(str))
        capacity = world.machines["capacity"].to_numpy().astype(np.int64)
        ref_fen = np.array([to_fen(float(x)) for x in world.catalog["ref_price"]], dtype=np.int64)
        cost_fen = np.array([to_fen(float(x)) for x in world.catalog["unit_cost"]], dtype=np.int64)
        bands = [band_fen(int(r), eco.price_band) for r in ref_fen]
        leads, lead_cdf = inv.lead_time_table(eco.lead_time_pmf)
        suppliers = supplier_terms(world, cost_fen)
        cond = world.conditions
        premium = any(t.premium_fen is not None for t in suppliers.values())
        default = suppliers[eco.default_supplier]
        plain = default.split is None and not any(o.supplier_id == eco.default_supplier for o in cond.outages)
        return cls(
            world=world,
            device_ids=device_ids,
            sku_ids=sku_ids,
            device_index={d: i for i, d in enumerate(device_ids)},
            sku_index={s: i for i, s in enumerate(sku_ids)},
            device_arr=np.array(device_ids, dtype=object),
            sku_arr=np.array(sku_ids, dtype=object),
            capacity=capacity,
            capacity_units=[int(c) for c in capacity],
            ref_fen=ref_fen,
            cost_fen=cost_fen,
            unit_cost=[int(c) for c in cost_fen],
            shelf_life=world.catalog["shelf_life_days"].to_numpy().astype(np.int64),
            price_lo_fen=np.array([b[0] for b in bands], dtype=np.int64),
            price_hi_fen=np.array([b[1] for b in bands], dtype=np.int64),
            start_cash_fen=to_fen(eco.start_cash),
            rent_fen_per_unit=to_fen(eco.warehouse_rent_per_unit_day),
            daily_fee_fen=to_fen(eco.machine_rent_per_day) * world.n_machines,
            visit_fen=to_fen(eco.visit_fee),
            fine_fen=to_fen(eco.expired_sale_fine),
            leads=leads,
            lead_cdf=lead_cdf,
            demand=world.demand_model,
            days=DayTable(world),
            suppliers=suppliers,
            conditions=cond,
            cost_kinds=(*COST_KINDS, PREMIUM_KIND) if premium else COST_KINDS,
            plain_orders=plain,
        )


def check_world(world: World) -> None:
    """Refuse a world the simulator cannot run, naming every problem (BundleError)."""
    problems = _table_problems(world) + _coverage_problems(world)
    if problems:
        raise BundleError(
            f"world {world.name!r} cannot be simulated: " + "; ".join(problems) + ". Re-export or rebuild the world."
        )


def _table_problems(world: World) -> list[str]:
    """Problems of the machine and catalog tables and the demand arrays."""
    problems: list[str] = []
    mach, cat = world.machines, world.catalog
    if world.n_machines == 0 or world.n_products == 0:
        problems.append("the world needs at least one machine and one product")
    if mach["device_id"].astype(str).duplicated().any():
        problems.append("device_id values repeat")
    if cat["sku_id"].astype(str).duplicated().any():
        problems.append("sku_id values repeat")
    cap = mach["capacity"].to_numpy()
    if not (np.issubdtype(cap.dtype, np.number) and np.all(cap >= 1) and np.all(cap == np.floor(cap))):
        problems.append("every machine capacity must be a whole number >= 1")
    life = cat["shelf_life_days"].to_numpy()
    if not (np.issubdtype(life.dtype, np.number) and np.all(life >= 1) and np.all(life == np.floor(life))):
        problems.append("every shelf_life_days must be a whole number >= 1")
    ref = cat["ref_price"].to_numpy(dtype=float)
    if not np.all(np.isfinite(ref) & (ref >= 0.01)):
        problems.append("every ref_price must be a finite number of at least 0.01")
    cost = cat["unit_cost"].to_numpy(dtype=float)
    if not np.all(np.isfinite(cost) & (cost >= 0)):
        problems.append("every unit_cost must be a finite number >= 0")
    b = world.demand_model.b
    if not np.all(np.isfinite(b) & (b >= 0)):
        problems.append("base_attraction must be finite and >= 0")
    U = world.demand_model.U
    if not np.all(np.isfinite(U) & (U >= 0)):
        problems.append("U must be finite and >= 0")
    if not np.all(np.isfinite(world.demand_model.elasticity)):
        problems.append("every site type needs a finite price elasticity")
    return problems


def _coverage_problems(world: World) -> list[str]:
    """Horizon days that the settlement weather or the calendar lack."""
    problems: list[str] = []
    dates = {world.date_of(d) for d in range(1, world.horizon_days + 1)}
    wx = world.weather.dropna(subset=["t_max_c", "precip_mm"])
    missing_wx = dates - set(pd.to_datetime(wx["date"]).dt.date)
    if missing_wx:
        problems.append(f"settlement weather lacks {len(missing_wx)} horizon days (first {min(missing_wx)})")
    missing_cal = dates - set(pd.to_datetime(world.calendar["date"]).dt.date)
    if missing_cal:
        problems.append(f"the calendar lacks {len(missing_cal)} horizon days (first {min(missing_cal)})")
    return problems
