"""The identified set of a world: the ranges of what its source did not pin down (`IdentifiedSet`).

A world is one point of what its records allow. What the records estimate with an interval, and what no record
gives at all (a benchmark setting), could have been otherwise; `autovend world draw` (`autovend.world.draws`) makes
worlds from anywhere in these ranges, so that a ranking can be checked against them. The set is provenance, not
content: it is written into the bundle's manifest under `ranges` when the world is exported (and kept by `ship` and
`derive`), so a world's hash does not depend on it.

Estimated (from the calibration): the no-purchase weight u (U = u R of every machine) within its adjusted 95%
profile-likelihood interval (`autovend.calibration.u_profile`). An open end (the records cannot reject u as far as
the search went) is closed at `U_OPEN_FACTOR` times the world's u: the calibration calls u identified only within a
factor 4 (`IDENTIFIED_SPAN`), so a draw reaches as far as an unidentified u could plausibly be off.

Borrowed (benchmark settings, never estimated): the stated ranges below, each with its reason (`STATED`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from autovend.errors import BundleError

RANGES_VERSION = 1
U_OPEN_FACTOR = 4.0  # an open end of u's interval is closed at 4 x (or / 4) the world's u (u_profile.IDENTIFIED_SPAN)

# The stated ranges of the benchmark settings, in one place: (low, high) and why.
ELASTICITY = (2.4, 3.5)
ELASTICITY_WHY = "paper §3.3: site-specific price elasticities between 2.4 and 3.5"
MARGINS = {"drinks": (0.30, 0.40), "snacks": (0.50, 0.60)}
OTHER_MARGIN = (0.40, 0.50)
MARGINS_WHY = (
    "paper §3.3: gross margins of 30-40% for drinks and 50-60% for snacks (other categories: 40-50%, between them); "
    "only products whose unit cost was drawn in the band (catalog unit_cost_source = margin_draw)"
)
CAPACITY_FACTOR = (0.75, 1.25)
CAPACITY_STEP = 10
CAPACITY_WHY = (
    "a setting where the source gives no capacity: plus or minus 25% of it in steps of 10 units (the benchmark's "
    "stated uncertainty; the paper gives none); only devices whose capacity is not the source's"
)
SHELF_LIFE_FACTOR = (0.67, 1.5)
SHELF_LIFE_WHY = (
    "a setting where the source gives none: two thirds to one and a half times the setting, by subcategory (the "
    "benchmark's stated uncertainty); only products whose shelf life is not the source's"
)
LEAD_SHIFT_DAYS = (-1, 2)
LEAD_SHIFT_WHY = (
    "the paper's lead times (promised 3 days) are a setting: every lead time of the distribution shifted by -1 to +2 "
    "days (at least 1 day), the promise unchanged"
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class URange(_Frozen):
    """u of the world (`value`), its interval (`low`, `high`; None = open) and the range a draw uses."""

    value: float = Field(gt=0)
    low: float | None = Field(None, gt=0)
    high: float | None = Field(None, gt=0)
    identified: bool | None = None
    estimated: bool = True  # False: the world's u is the paper's (the records did not identify it)

    def draw_range(self) -> tuple[float, float]:
        """(low, high) of the draws: the interval, an open end closed at U_OPEN_FACTOR x the world's u."""
        lo = self.low if self.low is not None else self.value / U_OPEN_FACTOR
        hi = self.high if self.high is not None else self.value * U_OPEN_FACTOR
        return min(lo, self.value), max(hi, self.value)


class Stated(_Frozen):
    """A stated range of a benchmark setting and its reason."""

    low: float
    high: float
    why: str

    @model_validator(mode="after")
    def _ordered(self) -> Stated:
        if self.high < self.low:
            raise ValueError(f"high {self.high} is below low {self.low}")
        return self


class IdentifiedSet(_Frozen):
    """Everything `autovend world draw` may vary, with the ranges (module docstring)."""

    version: int = RANGES_VERSION
    u: URange | None = None
    elasticity: Stated = Stated(low=ELASTICITY[0], high=ELASTICITY[1], why=ELASTICITY_WHY)
    margins: dict[str, Stated] = Field(default_factory=dict)  # category_l1 -> margin band (borrowed costs only)
    capacity_factor: Stated | None = None
    shelf_life_factor: Stated | None = None
    lead_shift_days: Stated = Stated(low=LEAD_SHIFT_DAYS[0], high=LEAD_SHIFT_DAYS[1], why=LEAD_SHIFT_WHY)
    borrowed_capacity: tuple[str, ...] = ()  # device ids whose capacity is a setting

    def payload(self) -> dict[str, Any]:
        """The manifest's `ranges` value."""
        return self.model_dump(mode="json")


def identified_set(
    *,
    u: float | None,
    u_interval: tuple[float | None, float | None] | None,
    u_identified: bool | None,
    categories: list[str],
    borrowed_costs: bool,
    borrowed_capacity: list[str],
    borrowed_shelf_lives: bool,
) -> IdentifiedSet:
    """The identified set of a world from its calibration's u and what of its catalog and devices is borrowed."""
    u_range = None
    if u is not None and u > 0:
        lo, hi = u_interval if u_interval is not None else (None, None)
        u_range = URange(value=u, low=lo, high=hi, identified=u_identified, estimated=u_identified is not False)
    margins = {}
    if borrowed_costs:
        for cat in sorted(set(categories)):
            lo, hi = MARGINS.get(cat, OTHER_MARGIN)
            margins[cat] = Stated(low=lo, high=hi, why=MARGINS_WHY)
    return IdentifiedSet(
        u=u_range,
        margins=margins,
        capacity_factor=Stated(low=CAPACITY_FACTOR[0], high=CAPACITY_FACTOR[1], why=CAPACITY_WHY)
        if borrowed_capacity
        else None,
        shelf_life_factor=Stated(low=SHELF_LIFE_FACTOR[0], high=SHELF_LIFE_FACTOR[1], why=SHELF_LIFE_WHY)
        if borrowed_shelf_lives
        else None,
        borrowed_capacity=tuple(borrowed_capacity),
    )


def read_ranges(manifest: dict[str, Any], where: str) -> IdentifiedSet:
    """The identified set a bundle's manifest records; BundleError in words when it has none or a broken one."""
    value = manifest.get("ranges")
    if value is None:
        raise BundleError(
            f"{where} records no identified set (no `ranges` in its manifest): it was exported before AutoVend wrote "
            "them; export it again (`autovend export-world`, then `autovend world ship`) to draw worlds from it"
        )
    try:
        return IdentifiedSet.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise BundleError(
            f"{where}: the manifest's ranges are not valid ({at}: {first['msg']}); re-export it"
        ) from None
