"""The identification record's types: how each parameter group of a calibration was obtained.

Kept apart from `identification` (which builds the record from the calibration's flags and counts) so
that reading a calibration.json (`estimates.read_estimates`) needs pydantic only, not the estimation code.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Status = Literal["estimated", "pooled", "borrowed"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Estimate(_Record):
    """How one scalar parameter was obtained, from how much data."""

    status: Status
    reason: str
    weak: bool = False
    machines: int = 0
    machine_days: int = 0


class StatusGroup(_Record):
    """The members of a per-item parameter (machines, products, subcategories) that share a status and reason."""

    status: Status
    reason: str
    count: int
    weak: bool = False
    # machines and subcategories are named unless plainly estimated (not weak); products are only counted
    members: tuple[str, ...] = ()


class SitePreference(_Record):
    """pi of one site type: estimated from its machines with shelves in the product split, or neutral."""

    site_type: str
    status: Status
    reason: str
    weak: bool = False
    machines: int = 0
    machine_days: int = 0
    neutral_categories: tuple[str, ...] = ()  # categories none of its machines offered: pi left at 1
    pooled_settings: bool = False  # no own price elasticity / environment entry: the pooled `unknown` one


class Identification(_Record):
    """The identification record of a calibration (module docstring)."""

    shelves_known: bool  # some machines have inventory records: the product split and u use their known shelves
    u: Estimate
    e: Estimate
    x: Estimate
    r: Estimate  # and sigma = sqrt(ln(1 + 1/r))
    rho: Estimate
    kappa: tuple[StatusGroup, ...]
    omega: tuple[StatusGroup, ...]
    gamma: tuple[StatusGroup, ...]
    pi: tuple[SitePreference, ...]

    def counts(self, group: Literal["kappa", "omega", "gamma"]) -> dict[str, int]:
        """Members of a per-item group by status (every status, zeros included)."""
        out = {"estimated": 0, "pooled": 0, "borrowed": 0}
        for g in getattr(self, group):
            out[g.status] += g.count
        return out
