"""Settings of the rule-based baseline (`BaselineAgent`), each with its documented default.

The defaults describe a plain operator: ordinary inventory practice and the rules every agent reads
in the system prompt ("a few units" of depth, weekly service). The world's published numbers
(horizon, visit fee, rent, promised lead time, price band) are not settings: the agent reads them
from the prompt facts of its session. A handful of alternatives (churn limits, trial patience,
price groups and step) were compared on seeds 1-3 of worlds/cn20 for learning speed, waste and
spread over seeds; the defaults are the plainer choices among those that did about as well, not a
search for a target number. Override any of them from a YAML file (`load_baseline_config`), e.g.
`autovend run --agent baseline --agent-config my.yaml`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from autovend.config import problem_lines, read_yaml_value
from autovend.errors import ConfigError
from autovend.shipped import AGENT_CONFIGS, resolve_shipped


class BaselineConfig(BaseModel):
    """Parameters of the baseline; money in CNY, times in days. Grouped by the decision they steer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- demand estimates -------------------------------------------------------------------------
    window_days: int = Field(30, ge=7, le=60)  # rolling window of the demand rate and its variability
    facing_units: int = Field(5, ge=1)  # "a few units": the depth a product needs to sell at its full rate
    prior_units_per_machine_day: float = Field(15.0, gt=0)  # assumed machine sales before any history
    prior_strength_days: float = Field(5.0, ge=0)  # pseudo exposure-days of the prior in each rate
    index_prior_days: float = Field(7.0, gt=0)  # pseudo exposure-days pulling a product's index to its subcategory
    subcategory_prior_days: float = Field(30.0, gt=0)  # pseudo exposure-days pulling a subcategory index to 1
    site_prior_days: float = Field(60.0, gt=0)  # pseudo exposure-days pulling a site x category factor to 1
    default_dispersion: float = Field(3.0, gt=0)  # r in var = mu + mu^2 / r until a machine's own r is known
    memory_half_life_days: float = Field(0.0, ge=0)  # half-life of the pooled sales history (0: no discount)

    # --- newsvendor targets ----------------------------------------------------------------------
    z_max: float = Field(2.33, ge=0)  # cap on the safety factor (a 99% critical ratio)
    shelf_holding_per_unit_day: float = Field(0.0, ge=0)  # no rent is charged on shelf units
    lead_allowance_days: int = Field(1, ge=0)  # days added to the promised lead time when planning
    order_cover_days: float = Field(3.0, ge=0)  # an order brings stock this many days above the reorder level
    order_lot: int = Field(6, ge=1)  # quantities of at least one lot are rounded up to whole lots
    fill_spare_room: bool = True  # share capacity left above the order-up-to levels out by rate (a fuller
    # machine sells more); False: shelves are filled to their order-up-to levels only (the paper's rule)
    sell_through_share: float = Field(0.7, gt=0, le=1)  # stock of a product is capped at this share of
    # its shelf life times its rate (spoilage guard)

    # --- assortment ------------------------------------------------------------------------------
    starter_skus: int = Field(40, ge=1)  # products per machine in the opening, exploring assortment
    n_skus: int = Field(36, ge=1)  # products a machine carries once sales are known
    min_trial_days: float = Field(14.0, ge=1)  # exposure-days before a product can be judged at a machine
    drop_ratio: float = Field(0.3, ge=0, le=1)  # drop products scoring below this share of the machine median
    max_drops_per_visit: int = Field(4, ge=0)
    swap_ratio: float = Field(1.6, ge=1)  # replace the weakest product by a proven one scoring this much more
    max_swaps_per_visit: int = Field(2, ge=0)
    explore_slots_per_visit: int = Field(2, ge=0)  # free slots given to products nobody has sold yet
    explore_until_day: int = Field(120, ge=0)  # no more exploration after this day
    proven_exposure_days: float = Field(14.0, ge=0)  # network exposure that makes a product "known"
    dead_stock_days: int = Field(21, ge=0)  # warehouse stock carried nowhere this long may be thrown away

    # --- visits ----------------------------------------------------------------------------------
    max_cycle_days: int = Field(7, ge=1)  # weekly service at most; shorter when it pays (see visits.best_cycle)
    # "best": each machine's cycle is the one of 1..max_cycle_days that earns most net of the visit fee;
    # "fixed": every machine is served every max_cycle_days on its weekday slot (the paper's weekly cycle)
    cycle_rule: Literal["best", "fixed"] = "best"
    low_stock_visits: bool = True  # extra visits when the shelf would run low before its next service
    min_gap_days: int = Field(4, ge=1)  # a weekly machine is not served twice within this many days
    low_stock_share: float = Field(0.2, ge=0, le=1)  # below this share of capacity the shelf sells less
    starter_stock_share: float = Field(0.6, gt=0, le=1)  # first visit once this share of the opening stock arrived
    starter_wait_days: int = Field(6, ge=1)  # ... or this many days after the opening orders
    end_quiet_days: int = Field(3, ge=0)  # in the last days, visit only machines running low

    # --- prices ----------------------------------------------------------------------------------
    # One multiplier of the reference prices per price group, moved by crossover trials (see
    # `autovend.agents.baseline.prices`). "network": all machines share it; "site_type": one per site type;
    # "machine": each machine its own (local trials; a group of one compares its two halves in time).
    # A 14-day crossover measures the change in gross profit with a standard error of roughly 0.1
    # (log scale) over 20 machines but about 0.3 over the 2 machines of the smallest site types, so the
    # default pools the network, and a step of 20% moves gross profit by more than that noise.
    price_groups: Literal["network", "site_type", "machine"] = "network"
    start_multiplier: float = Field(1.0, gt=0)  # every machine starts at the reference prices
    multiplier_bounds: tuple[float, float] = (0.7, 2.0)  # range the trials may explore; (1.0, 1.0) with
    # start_multiplier 1.0 pins every price at its reference (no trial has a candidate in bounds)
    price_step: float = Field(0.2, gt=0)  # a trial moves the multiplier by this much
    trial_days: int = Field(14, ge=2)  # crossover trial length: half of the machines switch at mid-trial
    trial_start_day: int = Field(15, ge=1)  # trials start once assortments have settled a little
    min_gain: float = Field(0.02, ge=0)  # the trial price is kept only if gross profit a day rose by this share
    hold_days: int = Field(0, ge=0)  # after failing in both directions, keep the price this long

    # --- money -----------------------------------------------------------------------------------
    cash_floor: float = 0.0  # orders are trimmed so that cash stays above this

    @model_validator(mode="after")
    def _check(self) -> BaselineConfig:
        mlo, mhi = self.multiplier_bounds
        if not 0 < mlo <= self.start_multiplier <= mhi:
            raise ValueError(
                "need 0 < multiplier_bounds low <= start_multiplier <= multiplier_bounds high, "
                f"got {self.multiplier_bounds} and {self.start_multiplier}"
            )
        if self.trial_days % 2:
            raise ValueError(f"trial_days must be even (two halves of a crossover), got {self.trial_days}")
        return self


def load_baseline_config(path: str | Path | None, section: str = "baseline") -> BaselineConfig:
    """The defaults, updated by the `section` mapping of a YAML file (or the whole file if it has none).

    `path` may name a config shipped with AutoVend (autovend/agents/configs: baseline-paper,
    baseline-pinned-prices) when no file of that name is in the current folder.
    """
    if path is None:
        return BaselineConfig()
    path = resolve_shipped(path, AGENT_CONFIGS)  # a file, or a shipped config's name (baseline-paper)
    raw = read_yaml_value(path, "baseline config") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a baseline config is a mapping of setting names to values")
    part = raw.get(section, raw)
    try:
        return BaselineConfig.model_validate(part or {})
    except ValidationError as exc:
        lines = "\n".join(
            f"  - {line}" for line in problem_lines(exc, BaselineConfig, section if part is not raw else "")
        )
        raise ConfigError(
            f"{path}: invalid baseline settings:\n{lines}\nFix: correct these keys (BaselineConfig lists the settings)"
        ) from None
