"""Settings of the embedded synthetic operator: its known truth and its operating behaviour."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from autovend.config import load_section

# (site_type, sub-location) -> number of machines; the paper's Appendix A sub-locations, 99 machines.
DEFAULT_LOCATIONS: dict[str, int] = {
    "worksite/canteen": 14,
    "worksite/plant_floor": 14,
    "campus/university": 7,
    "campus/school_dormitory": 5,
    "residential/apartment": 12,
    "residential/dormitory": 8,
    "commercial/sports_venue": 9,
    "commercial/hotel": 11,
    "commercial/leisure_venue": 7,
    "office/industrial_park": 6,
    "office/office_building": 6,
}

# Site preference pi_{site, category_l1} of the truth (drinks and snacks; before normalisation).
DEFAULT_SITE_PREFERENCE: dict[str, dict[str, float]] = {
    "worksite": {"drinks": 1.20, "snacks": 0.80},
    "campus": {"drinks": 0.90, "snacks": 1.15},
    "residential": {"drinks": 0.85, "snacks": 1.20},
    "commercial": {"drinks": 1.30, "snacks": 0.75},
    "office": {"drinks": 1.00, "snacks": 1.00},
}

# Relative mean daily units by site type (machine scales are drawn around these).
DEFAULT_SITE_LEVEL: dict[str, float] = {
    "worksite": 1.25,
    "campus": 1.30,
    "residential": 0.80,
    "commercial": 0.95,
    "office": 0.85,
}


class TruthSettings(BaseModel):
    """The known truth the source is generated from (paper §3.2-3.3 structure and magnitudes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    x: float = 0.0638  # paper: geometric-mean ratio of real-shelf to reference-shelf attraction
    e: float = 0.318  # paper: elasticity of daily units to shelf attraction at the typical shelf
    r: float = 2.74  # paper: overdispersion of daily units
    rho: float = 0.21  # paper: lag-one autocorrelation of the latent shock
    omega_sigma: float = 1.6  # log-sd of product popularity within a subcategory
    kappa_sigma: float = 0.55  # log-sd of machine levels around their site type's level
    site_preference: dict[str, dict[str, float]] = Field(default_factory=lambda: DEFAULT_SITE_PREFERENCE)
    site_level: dict[str, float] = Field(default_factory=lambda: DEFAULT_SITE_LEVEL)
    out_of_scope_share: float = 0.107  # share of units sold from the out-of-scope compartment (paper: 10.7%)
    # misspecification (not in the paper's model): each product's popularity drifts as exp(g_k d / 30) with
    # g_k ~ N(0, popularity_drift) per month, from its own named stream; 0 keeps eq. (4)'s fixed omega
    popularity_drift: float = Field(0.0, ge=0)

    @property
    def u(self) -> float:
        """u = x e / (1 - e): the no-purchase weight per unit of reference-shelf attraction."""
        return self.x * self.e / (1.0 - self.e)


class OperatorSettings(BaseModel):
    """How the synthetic operator runs its machines (what real records reflect)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    assortment_min: int = 26  # SKUs on a machine's drink/snack shelf
    assortment_max: int = 58
    belief_noise: float = 2.5  # log-sd of the operator's error when judging a product's appeal
    explore_share: float = 0.5  # share of a new assortment picked without regard to appeal
    fill_target_min: float = 0.45  # shelf fill the operator restocks to
    fill_target_max: float = 0.90
    par_max: int = 20  # most units of one SKU the operator puts on a shelf
    visit_interval_min: int = 2  # working days between routine visits
    visit_interval_max: int = 6
    low_fill_trigger: float = 0.30  # visit on the next working day when fill drops below this
    rotation_days: int = 28  # assortments are reviewed about this often
    rotation_share: float = 0.2  # share of SKUs replaced at a review
    price_deviation_machine_share: float = 0.3  # machines with local prices off reference
    price_deviation_sku_share: float = 0.25  # share of a deviating machine's SKUs priced off reference
    multi_line_order_share: float = 0.14  # orders with 2+ different products
    qty2_share: float = 0.06  # lines with 2 units
    refunded_share: float = 0.012  # extra refunded lines (dispensing failures), per completed line
    failed_share: float = 0.008  # extra failed-payment lines, per completed line
    zero_count_share: float = 0.5  # removed SKUs written as a 0 count (else absent from the count)
    lapse_per_month: float = 0.3  # spells without visits (staff shortage, site access) per machine-month
    lapse_days: tuple[int, int] = (5, 16)  # length range of a spell, days


class SynthConfig(BaseModel):
    """Everything `autovend synth` needs; defaults reproduce the embedded operator."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 20240601
    name: str = "synthetic-cn"
    start: dt.date = dt.date(2024, 6, 1)
    end: dt.date = dt.date(2024, 11, 30)
    capacity: int = 200
    locations: dict[str, int] = Field(default_factory=lambda: DEFAULT_LOCATIONS)
    n_with_inventory: int = 67
    target_units: int = 220_128  # all units sold (completed lines), all categories
    out_of_scope_machine_share: float = 0.6  # machines with a chilled/frozen/daily-goods compartment
    truth: TruthSettings = Field(default_factory=TruthSettings)
    operator: OperatorSettings = Field(default_factory=OperatorSettings)

    @model_validator(mode="after")
    def _check(self) -> SynthConfig:
        if self.end < self.start:
            raise ValueError("end is before start")
        n = sum(self.locations.values())
        if not 0 <= self.n_with_inventory <= n:
            raise ValueError(f"n_with_inventory must be within 0..{n}")
        return self

    @property
    def n_machines(self) -> int:
        """Number of machines over all locations."""
        return sum(self.locations.values())


def load_synth_config(path: str | Path | None) -> SynthConfig:
    """Read the `synthesize` section of a params YAML file; defaults when `path` is None."""
    return load_section(SynthConfig, path, "synthesize")
