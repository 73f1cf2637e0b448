"""`BaselineAgent`: the `Agent` protocol over the baseline's steps; it orchestrates a day and saves its state."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

from autovend.agents.baseline.calls import all_rows, ok
from autovend.agents.baseline.clean import clean_warehouse
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.estimate import estimate
from autovend.agents.baseline.observe import read_in_transit, read_warehouse, record_exposure, sync_sales
from autovend.agents.baseline.prices import arms_today, set_prices, update_trials
from autovend.agents.baseline.procurement import place_orders
from autovend.agents.baseline.serve import serve
from autovend.agents.baseline.setup import new_state, price_band, static_from
from autovend.agents.baseline.state import STATE_FORMAT, STATE_VERSION, Memory, State, Static, copy_value
from autovend.agents.baseline.visits import visits_today
from autovend.errors import ConfigError
from autovend.tools.schemas import CALENDAR_DAYS_MAX

if TYPE_CHECKING:
    from autovend.session import ToolSession


class BaselineAgent:
    """The rule-based baseline (see `autovend.agents.baseline`); `Agent` protocol."""

    name = "baseline"

    def __init__(self, config: BaselineConfig | None = None, seed: int = 0) -> None:
        self.config = config or BaselineConfig()
        self.seed = int(seed)  # kept for the record: the baseline draws no random numbers
        self._memory: Memory | None = None
        self._obs: dict[str, Any] | None = None

    def start(self, session: ToolSession) -> None:
        """Read the published rules, catalog, machines and calendar; choose the opening assortment."""
        rules = session.rules()
        band = price_band(rules, self.config)
        obs = session.observation()
        self._obs = obs
        catalog = all_rows(session, "get_catalog", {})
        cal = ok(session.call("get_calendar", {"days_ahead": CALENDAR_DAYS_MAX}), "get_calendar")
        st = static_from(rules, band, catalog, obs, cal)
        self._memory = Memory(self.config, st, new_state(st, self.config, session.day))

    def act_day(self, session: ToolSession) -> None:
        """Observe, clean, estimate, price, visit, order, then end the day (see `autovend.agents.baseline`)."""
        mem = self._memory
        if mem is None:
            raise RuntimeError("call start(session) (or load_state) before act_day")
        d = session.day
        obs = self._obs if self._obs is not None else session.observation()
        if d > 1:
            sync_sales(session, mem, d - 1)
        wh = read_warehouse(session, mem)
        transit = read_in_transit(session, mem)
        clean_warehouse(session, mem, d, wh)
        est = estimate(mem)
        update_trials(mem, d)
        mult_today = arms_today(mem, d)
        avail = wh.good.copy()  # usable warehouse units, kept up to date through the visits
        if mem.st.workday[d]:
            for m in visits_today(session, mem, d, est, avail):
                serve(session, mem, m, d, est, avail, wh.next_expiry)
        set_prices(session, mem, mult_today)
        place_orders(session, mem, d, est, avail, transit, float(obs["balance"]["cash"]))
        record_exposure(mem, d)
        res = session.call("end_day", {})
        mem.s.day_done = d
        self._obs = res.content.get("observation") if res.ok else None

    def state_dict(self) -> dict[str, Any]:
        """Config, static facts and the day-to-day state: a copy (numpy arrays, lists; picklable)."""
        if self._memory is None:
            raise RuntimeError("the agent has not started")
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "config": self.config.model_dump(mode="json"),
            "seed": self.seed,
            "static": {f.name: copy_value(getattr(self._memory.st, f.name)) for f in fields(Static)},
            "state": {f.name: copy_value(getattr(self._memory.s, f.name)) for f in fields(State)},
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()`; the config must be the one the state was made with."""
        if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
            raise ConfigError("this is not a baseline state of this AutoVend version; start a new run")
        if state["config"] != self.config.model_dump(mode="json"):
            raise ConfigError(
                "the saved run used other baseline settings; resume it with the same --agent-config it started with"
            )
        self.seed = int(state["seed"])
        st = Static(**state["static"])
        s = State(**{k: copy_value(v) for k, v in state["state"].items()})
        self._memory = Memory(self.config, st, s)
        self._obs = None
