"""Scenario files: a small YAML file that says how a frozen world is changed (`Scenario`, `load_scenario`).

    name: heatwave                       # letters, digits and '-' (the derived world is named WORLD+NAME)
    summary: A week of 36-38 °C heat in early June.
    tests: whether an agent stocks drinks ahead of a forecast heatwave
    shows: get_weather and the daily report's forecast show the heat a week ahead
    changes:                             # every key optional; no change at all leaves the world as it was
      weather: [{first_day: 152, last_day: 158, add_t_max_c: 9}]

`changes` keys (days are day numbers of the run, day 1 = the world's start date; `last_day: null` = the last day):

- suppliers: [{supplier_id, price_factor (>= 1), promised_days, lead_time_pmf {days: probability}, note}];
- lead_times: {promised_days, lead_time_pmf} of the default supplier;
- splits: [{supplier_id, probability, min_share, max_share, min_delay_days, max_delay_days}] (partial deliveries);
- outages: [{supplier_id, first_day, last_day, announce_days, notice}];
- weather: [{first_day, last_day, add_t_max_c, add_precip_mm}] (settlement weather and the forecasts of those days);
- holidays: [{first_day, last_day, name}] (public holidays: no site visits, holiday demand);
- demand: [{label, machines, categories, factor, first_day, last_day, announce_days, notice}];
- unit_costs: {factor, categories} (catalog unit costs, rounded to the cent);
- fees: {visit_fee, machine_rent_per_day, warehouse_rent_per_unit_day, expired_sale_fine};
- breakdowns: [{machines, first_day, last_day, announce_days, notice}].

`machines` picks machines: {device_ids: [...], site_types: [...], busiest: N} (the N machines with the most
passers-by, U, among those named, or among all). `announce_days: N` shows a notice in the daily report from N days
before the window to its end (0: from its first day; absent: never), with `notice` as its text or a sentence made
from the change. The file is YAML without tags (`!!python/...`, `!!str`, any `!tag` is refused), at most
`MAX_YAML_BYTES`; every mistake is reported with the key and the fix. Applying a scenario to a world is
`autovend.world.derive`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from autovend.canonical import canonical_value, json_hash
from autovend.config import problem_lines, read_yaml_value
from autovend.errors import ConfigError
from autovend.shipped import SCENARIOS, resolve_shipped
from autovend.world.conditions import MAX_DAY, Split, Supplier, check_pmf

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Days(_Frozen):
    """A window of days; `last_day` None = the world's last day."""

    first_day: int = Field(ge=1, le=MAX_DAY)
    last_day: int | None = Field(None, ge=1, le=MAX_DAY)

    @model_validator(mode="after")
    def _ordered(self) -> Days:
        if self.last_day is not None and self.last_day < self.first_day:
            raise ValueError(f"last_day {self.last_day} is before first_day {self.first_day}; swap them")
        return self


class Announced(Days):
    """A window the daily report may announce (`announce_days` before it starts) with a `notice`."""

    announce_days: int | None = Field(None, ge=0, le=365)
    notice: str | None = Field(None, min_length=1, max_length=500)


class Machines(_Frozen):
    """Which machines: named ones, those of some site types, the busiest N of them (or of all)."""

    device_ids: tuple[str, ...] = ()
    site_types: tuple[str, ...] = ()
    busiest: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _some(self) -> Machines:
        if not self.device_ids and not self.site_types and self.busiest is None:
            raise ValueError("name machines by device_ids, site_types or busiest: N")
        return self


class LeadTimes(_Frozen):
    """The default supplier's promise and its lead-time distribution."""

    promised_days: int | None = Field(None, ge=1, le=60)
    lead_time_pmf: dict[int, float] | None = None

    @field_validator("lead_time_pmf")
    @classmethod
    def _pmf(cls, v: dict[int, float] | None) -> dict[int, float] | None:
        return None if v is None else check_pmf(v)


class OutageChange(Announced):
    """A supplier delivers nothing in the window."""

    supplier_id: str = "default"


class WeatherChange(Days):
    """Settlement weather (and the forecasts of those days) shifted in the window."""

    add_t_max_c: float = Field(0.0, ge=-30.0, le=30.0)
    add_precip_mm: float = Field(0.0, ge=-500.0, le=500.0)


class HolidayChange(Days):
    """Public holidays in the window."""

    name: str = Field(min_length=1, max_length=60)


class DemandChange(Announced):
    """Expected demand at some machines (and categories) times `factor` in the window."""

    label: str = Field(min_length=1, max_length=80)
    machines: Machines
    categories: tuple[str, ...] = ()
    factor: float = Field(ge=0.0, le=10.0)


class UnitCostChange(_Frozen):
    """Catalog unit costs times `factor` (of the categories named, all when empty)."""

    factor: float = Field(gt=0.0, le=10.0)
    categories: tuple[str, ...] = ()


class FeeChange(_Frozen):
    """New values of the operating fees (in the world's currency); those not given stay."""

    visit_fee: float | None = Field(None, ge=0.0, le=1e6)
    machine_rent_per_day: float | None = Field(None, ge=0.0, le=1e6)
    warehouse_rent_per_unit_day: float | None = Field(None, ge=0.0, le=1e4)
    expired_sale_fine: float | None = Field(None, ge=0.0, le=1e7)


class BreakdownChange(Announced):
    """Machines out of order in the window."""

    machines: Machines


class Changes(_Frozen):
    """Every change a scenario can make (module docstring)."""

    suppliers: tuple[Supplier, ...] = ()
    lead_times: LeadTimes | None = None
    splits: tuple[Split, ...] = ()
    outages: tuple[OutageChange, ...] = ()
    weather: tuple[WeatherChange, ...] = ()
    holidays: tuple[HolidayChange, ...] = ()
    demand: tuple[DemandChange, ...] = ()
    unit_costs: UnitCostChange | None = None
    fees: FeeChange | None = None
    breakdowns: tuple[BreakdownChange, ...] = ()


class Scenario(_Frozen):
    """A scenario file (module docstring)."""

    name: str
    summary: str = Field(min_length=1, max_length=300)
    tests: str = Field(min_length=1, max_length=1000)
    shows: str = Field(min_length=1, max_length=1000)
    changes: Changes = Field(default_factory=Changes)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME.match(v):
            raise ValueError(f"{v!r} must be 1-40 lowercase letters, digits and '-', starting with a letter or digit")
        return v

    @field_validator("changes", mode="before")
    @classmethod
    def _none_is_no_change(cls, v: Any) -> Any:
        return {} if v is None else v

    @property
    def hash(self) -> str:
        """SHA-256 of the scenario's canonical content (what it says, not how the file is written)."""
        return json_hash(canonical_value(self.model_dump(mode="json")))


def parse_scenario(data: Any, where: str = "the scenario") -> Scenario:
    """A checked `Scenario` from parsed YAML; ConfigError listing every problem in words."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where}: a scenario is a mapping with name, summary, tests, shows and changes, got "
            f"{type(data).__name__}; see docs/scenarios.md"
        )
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        lines = "\n".join(f"  - {line}" for line in problem_lines(exc, Scenario))
        raise ConfigError(f"{where}: invalid scenario:\n{lines}\n(docs/scenarios.md lists the keys)") from None


def _refuse_tags(path: Path, label: str) -> None:
    """ConfigError for any YAML tag in the file (`!!str`, `!!python/object`, `!custom`): a scenario is plain data."""
    import yaml

    from autovend.config import MAX_YAML_BYTES

    try:
        with path.open("rb") as fh:
            text = fh.read(MAX_YAML_BYTES + 1).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return  # reported by read_yaml_value
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.TagToken):
                mark = token.start_mark
                raise ConfigError(
                    f"{label}, line {mark.line + 1}, column {mark.column + 1}: a YAML tag; a scenario is plain "
                    "data (mappings, lists, numbers, text): remove the tag"
                )
    except yaml.YAMLError:
        pass  # reported with its line by read_yaml_value


def scenario_path(value: str | os.PathLike[str]) -> Path:
    """The file a `--scenario` value names: a path as given, else a shipped scenario's name (`autovend scenarios`)."""
    return resolve_shipped(value, SCENARIOS)


def load_scenario(value: str | os.PathLike[str]) -> Scenario:
    """The scenario of a file or a shipped scenario's name, checked (ConfigError in words)."""
    path = scenario_path(value)
    label = f"scenario {path}"
    _refuse_tags(path, label)
    data = read_yaml_value(path, "scenario")
    return parse_scenario(data, label)


def shipped_scenarios() -> list[str]:
    """The names of the shipped scenarios, sorted."""
    return SCENARIOS.names()
