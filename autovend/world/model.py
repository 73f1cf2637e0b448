"""The in-memory world: everything a simulator needs, as loaded from a frozen bundle (or built for tests)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from autovend.demand.model import DemandModel
from autovend.world.conditions import Conditions

# A made-to-order world (its source's `made_to_order`: coffee, fresh juice) keeps the benchmark's goods flow with
# ingredients for stock: a unit of a product is the ingredients of one serving, a machine's capacity the servings
# of ingredients it holds (not unlimited), and ingredients keep: no shelf life within any horizon, no expired sale.
MADE_TO_ORDER_SHELF_LIFE_DAYS = 36_500
BUNDLE_SCHEMA_VERSION = 2  # bump when a bundle file or field changes meaning; loaders refuse newer bundles
MACHINE_COLUMNS = ["device_id", "location", "site_type", "capacity"]
CATALOG_COLUMNS = [
    "sku_id",
    "name",
    "category_l1",
    "category_l2",
    "ref_price",
    "unit_cost",
    "shelf_life_days",
]


class Economics(BaseModel):
    """Operating rules of the benchmark (paper §3.1-3.2 and Appendix A.1). Money in CNY."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    currency: str = "CNY"
    start_cash: float = 40_000.0
    horizon_days: int = Field(180, ge=1)
    warehouse_rent_per_unit_day: float = 0.03  # per unit held in the warehouse per day
    machine_rent_per_day: float = 4.0  # per machine per day; 20 machines make the fixed fee of 80
    visit_fee: float = 35.0  # per machine per day touched by restock/reduce/delist
    expired_sale_fine: float = 1_000.0  # per expired unit sold
    price_band: tuple[float, float] = (0.5, 2.0)  # x reference price
    lead_time_nominal_days: int = 3
    # actual lead time (days after placement) -> probability; documented, seeded per order
    lead_time_pmf: dict[int, float] = Field(default_factory=lambda: {2: 0.15, 3: 0.60, 4: 0.15, 5: 0.07, 6: 0.03})
    memory_limit_chars: int = 6_000
    default_supplier: str = "default"

    @field_validator("lead_time_pmf")
    @classmethod
    def _pmf(cls, v: dict[int, float]) -> dict[int, float]:
        if not v or any(k < 1 for k in v) or any(p < 0 for p in v.values()):
            raise ValueError("lead_time_pmf needs lead times >= 1 day with probabilities >= 0")
        if abs(sum(v.values()) - 1.0) > 1e-9:
            raise ValueError(f"lead_time_pmf must sum to 1, sums to {sum(v.values())}")
        return v


@dataclass(frozen=True, eq=False)
class World:
    """A frozen world: the scenario (network, catalog, economics, weather, calendar) and its demand model.

    machines: one row per device (MACHINE_COLUMNS, plus descriptive columns such as the source machine),
    in device order; the demand parameters live in `demand_model` only (b, U, elasticities, shock).
    catalog: one row per product (CATALOG_COLUMNS), in product order.
    demand_model: eq. (2)-(4) for these devices and products (its capacities and site types are the
    machines', its categories the catalog's category_l1; checked).
    weather: settlement weather (date, t_max_c, precip_mm) for every horizon day (and a week beyond).
    forecast: (issue_date, target_date, lead, t_max_c, precip_mm), leads 0..7, lead 0 = settlement.
    calendar: (date, is_workday, holiday_name, day_type) from the start to at least 400 days past the end.
    world_hash: the identity of a frozen world (see `autovend.world.bundle`); empty for in-memory worlds.
    conditions: what happens on some days only (more suppliers, outages, breakdowns, demand shifts, notices;
    `autovend.world.conditions`); empty for a world as exported.
    derivation: for a world derived in memory (`autovend.world.derive`), its base world's hash and name and the
    scenario's content, which a run records so that `autovend verify` can rebuild the world; None otherwise.
    """

    name: str
    machines: pd.DataFrame
    catalog: pd.DataFrame
    demand_model: DemandModel
    start_date: dt.date
    weather: pd.DataFrame
    forecast: pd.DataFrame
    calendar: pd.DataFrame
    economics: Economics = field(default_factory=Economics)
    timezone: str = "Asia/Shanghai"
    country: str = "CN"
    world_hash: str = ""  # the manifest's world_hash when loaded from a bundle; "" when built in memory
    made_to_order: bool = False  # products made per sale: a unit is one serving's ingredients (MADE_TO_ORDER)
    conditions: Conditions = field(default_factory=Conditions)
    derivation: dict[str, Any] | None = None  # a derived world's base hash and scenario (not content: not hashed)

    def __post_init__(self) -> None:
        missing = [c for c in MACHINE_COLUMNS if c not in self.machines]
        if missing:
            raise ValueError(f"world.machines lacks columns {missing}")
        missing = [c for c in CATALOG_COLUMNS if c not in self.catalog]
        if missing:
            raise ValueError(f"world.catalog lacks columns {missing}")
        dm = self.demand_model
        shape = (len(self.machines), len(self.catalog))
        if (dm.n_machines, dm.n_products) != shape:
            raise ValueError(f"the demand model is {dm.n_machines} x {dm.n_products}, the world {shape}")
        if list(dm.site_types) != self.machines["site_type"].astype(str).tolist():
            raise ValueError("the demand model's site types are not the machines'")
        if list(dm.categories) != self.catalog["category_l1"].astype(str).tolist():
            raise ValueError("the demand model's categories are not the catalog's category_l1")
        if not np.array_equal(dm.capacity, self.machines["capacity"].to_numpy(dtype=float)):
            raise ValueError("the demand model's capacities are not the machines'")

    def replace(self, **changes: Any) -> World:
        """A copy with `changes` to its fields, the demand model following new machines or a new catalog.

        New machines or catalog carry their capacities, site types and categories into the demand model;
        b and U stay, as do the settings and the shock.
        """
        machines = changes.get("machines", self.machines)
        catalog = changes.get("catalog", self.catalog)
        if "demand_model" not in changes and ("machines" in changes or "catalog" in changes):
            dm = self.demand_model
            changes["demand_model"] = DemandModel(
                b=dm.b,
                U=dm.U,
                capacity=machines["capacity"].to_numpy(dtype=float),
                site_types=tuple(machines["site_type"].astype(str)),
                categories=tuple(catalog["category_l1"].astype(str)),
                settings=dm.settings,
                shock=dm.shock,
            )
        return dataclasses.replace(self, **changes)

    @property
    def n_machines(self) -> int:
        """Number of machines."""
        return len(self.machines)

    @property
    def n_products(self) -> int:
        """Number of catalog products."""
        return len(self.catalog)

    @property
    def horizon_days(self) -> int:
        """Episode length in days."""
        return self.economics.horizon_days

    def date_of(self, day: int) -> dt.date:
        """Calendar date of simulation day `day` (day 1 = start_date)."""
        return self.start_date + dt.timedelta(days=day - 1)
