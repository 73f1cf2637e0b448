"""`OracleAgent`: the privileged reference policy (`autovend run --agent oracle`); see `autovend.agents.oracle`.

A day, in order:

1. *Observe* through the tools: the warehouse (`get_warehouse`), orders in transit (`query_sql`) and every
   shelf (`get_device_detail`).
2. *Clean*: discard warehouse units that are expired or expire within the tools' 7-day window.
3. *Visit* (working days): a machine is visited when a shelf unit would expire before the next working day,
   or when refilling it now adds more expected gross profit until the next working day than the visit fee
   (`fluid_sales` on the day types ahead). At a visit the expiring units come off (and are discarded) and
   the shelf is filled to the plan's targets from the warehouse.
4. *Order*: every product carried is ordered up to its shelf targets plus `COVER_DAYS` of expected sales,
   counting the warehouse, the shelves and what is in transit, within the cash.

Prices are set once, on the first day, for every product carried (the plan's multiplier x the reference price).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from autovend.agents.baseline.calls import all_rows, batched, ok, sql_rows
from autovend.agents.oracle.plan import FloatArray, IntArray, MachineModel, fluid_sales, plan_machine
from autovend.errors import AgentError, ConfigError
from autovend.sim.days import DayTable

if TYPE_CHECKING:
    from autovend.session import ToolSession
    from autovend.world.model import World

STATE_FORMAT = "autovend-oracle-state"
STATE_VERSION = 1
COVER_DAYS = 8  # expected sales kept beyond the shelf targets (the longest lead time and a review)
CASH_RESERVE = 1000.0  # cash kept back from orders for fees and rent
EXPIRING_DAYS = 7  # the tools' "expiring soon" window


@dataclass
class Facts:
    """What the oracle reads of the world once per process: ids, money, demand, calendar."""

    sku_ids: list[str]
    device_ids: list[str]
    sku_index: dict[str, int]
    ref: FloatArray
    cost: FloatArray
    margin: FloatArray  # (M, K) unit margin at the planned prices
    b_eff: FloatArray  # (M, K) attraction at the planned prices, neutral environment
    U: FloatArray
    capacity: IntArray
    day_type_factor: list[dict[str, float]]  # per machine: workday / weekend / holiday factor
    phi: float
    eta: float
    fee: float
    horizon: int
    days: DayTable


@dataclass
class Plan:
    """The plan of every machine (arrays over machines x catalog)."""

    multiplier: FloatArray  # (M,)
    target: IntArray  # (M, K)
    rate: FloatArray  # (M, K) expected units a day
    cycle: IntArray  # (M,)


def make_plan(world: World) -> Plan:
    """The plan of every machine of `world` (`plan_machine`), from its hidden demand model."""
    dm, cat, eco = world.demand_model, world.catalog, world.economics
    ref = cat["ref_price"].to_numpy(dtype=float)
    cost = cat["unit_cost"].to_numpy(dtype=float)
    life = cat["shelf_life_days"].to_numpy(dtype=np.int64)
    factors = dm.settings.environment.calendar.day_type
    plans = []
    for m in range(dm.n_machines):
        f = factors[dm.site_types[m]]
        env = (5.0 * f["workday"] + 2.0 * f["weekend"]) / 7.0
        cap = int(round(float(dm.capacity[m])))
        mm = MachineModel(
            dm.b[m],
            float(dm.U[m]),
            float(dm.elasticity[m]),
            cap,
            ref,
            cost,
            life,
            env,
            dm.settings.phi,
            dm.settings.eta,
        )
        sizes = range(8, cap // int(np.ceil(dm.settings.phi)) + 1, 4)
        plans.append(
            plan_machine(mm, float(eco.visit_fee), (float(eco.price_band[0]), float(eco.price_band[1])), sizes)
        )
    return Plan(
        multiplier=np.array([p.multiplier for p in plans]),
        target=np.stack([p.target for p in plans]),
        rate=np.stack([p.rate for p in plans]),
        cycle=np.array([p.cycle for p in plans], dtype=np.int64),
    )


def read_facts(world: World, plan: Plan) -> Facts:
    """The world's facts the oracle acts on (see `Facts`)."""
    dm, cat = world.demand_model, world.catalog
    ref = cat["ref_price"].to_numpy(dtype=float)
    cost = cat["unit_cost"].to_numpy(dtype=float)
    price = np.round(ref[None, :] * plan.multiplier[:, None], 2)
    b_eff = dm.b * np.power(price / ref[None, :], -dm.elasticity[:, None])
    factors = dm.settings.environment.calendar.day_type
    sku_ids = [str(s) for s in cat["sku_id"]]
    return Facts(
        sku_ids=sku_ids,
        device_ids=[str(d) for d in world.machines["device_id"]],
        sku_index={s: i for i, s in enumerate(sku_ids)},
        ref=ref,
        cost=cost,
        margin=price - cost[None, :],
        b_eff=b_eff,
        U=dm.U.copy(),
        capacity=np.round(dm.capacity).astype(np.int64),
        day_type_factor=[dict(factors[s]) for s in dm.site_types],
        phi=dm.settings.phi,
        eta=dm.settings.eta,
        fee=float(world.economics.visit_fee),
        horizon=world.horizon_days,
        days=DayTable(world),
    )


@dataclass
class Shelf:
    """One machine's shelf as get_device_detail shows it (arrays over the catalog)."""

    units: IntArray
    stale: IntArray  # expired or expiring within the tools' 7-day window
    next_expiry: IntArray  # 0 = none

    def expiring_by(self, day: int) -> np.ndarray:
        """Products with units on the shelf whose next expiry falls on or before `day`."""
        return (self.units > 0) & (self.next_expiry > 0) & (self.next_expiry <= day)


class OracleAgent:
    """PRIVILEGED reference policy: plans with the hidden demand model, acts through the tools (module docstring)."""

    name = "oracle"
    privileged = True  # run.json, reports and leaderboards mark its runs: it reads what no agent may read

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)  # kept for the record: the oracle draws no random numbers
        self._plan: Plan | None = None
        self._facts: Facts | None = None
        self._priced = False
        self._world: World | None = None  # given by the harness (`reveal`), never read from the session

    def reveal(self, world: World) -> None:
        """PRIVILEGED: take the world with its hidden demand model (the harness calls this, by the class's identity).

        `autovend.agents.identity.grant_hidden` calls it for this class only, before the first step and on a resume;
        no session hands the world to any agent (`autovend.env.boundary`).
        """
        self._world = world

    # ------------------------------------------------------------------ the Agent protocol

    def start(self, session: ToolSession) -> None:
        """Read the hidden demand model (privileged) and plan every machine."""
        self._ready(session)

    def act_day(self, session: ToolSession) -> None:
        """Observe, clean, visit, order, end the day (see the module docstring)."""
        plan, facts = self._ready(session)
        d = session.day
        cash = float(session.observation()["balance"]["cash"])
        if not self._priced:
            self._set_prices(session, plan, facts)
            self._priced = True
        units, stale, wh_expiry = self._warehouse(session, facts)
        if stale.any():
            ks = np.flatnonzero(stale)
            batched(session, "discard", [{"sku_id": facts.sku_ids[k], "qty": int(stale[k])} for k in ks])
        avail = units - stale
        shelves = [self._shelf(session, facts, m) for m in range(len(facts.device_ids))]
        if facts.days.is_workday(d):
            self._visits(session, plan, facts, d, shelves, avail, wh_expiry)
        self._order(session, plan, facts, d, shelves, avail, cash)
        session.call("end_day", {})

    def state_dict(self) -> dict[str, Any]:
        """The plan and whether prices are set (the facts are read again from the world the harness hands it)."""
        if self._plan is None:
            raise RuntimeError("the oracle has not started")
        p = self._plan
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "seed": self.seed,
            "priced": self._priced,
            "plan": {"multiplier": p.multiplier.copy(), "target": p.target.copy(), "rate": p.rate.copy()}
            | {"cycle": p.cycle.copy()},
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()`."""
        if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
            raise ConfigError("this is not an oracle state of this AutoVend version; start a new run")
        self.seed = int(state["seed"])
        self._priced = bool(state["priced"])
        self._plan = Plan(**{k: np.asarray(v).copy() for k, v in state["plan"].items()})
        self._facts = None

    # ------------------------------------------------------------------ steps

    def _ready(self, session: ToolSession) -> tuple[Plan, Facts]:
        if self._plan is None or self._facts is None:
            world = self._world
            if world is None:
                raise AgentError(
                    "the oracle plans with the world's hidden demand model, which only the harness hands it "
                    "(autovend.agents.identity.grant_hidden, as run_episode does); run it with `autovend run --agent "
                    "oracle` or run_episode"
                )
            if self._plan is None:
                self._plan = make_plan(world)
            self._facts = read_facts(world, self._plan)
        return self._plan, self._facts

    def _set_prices(self, session: ToolSession, plan: Plan, facts: Facts) -> None:
        items = []
        for m, device in enumerate(facts.device_ids):
            for k in np.flatnonzero(plan.target[m]).tolist():
                price = round(float(facts.ref[k]) * float(plan.multiplier[m]), 2)
                if price != round(float(facts.ref[k]), 2):
                    items.append({"device_id": device, "sku_id": facts.sku_ids[k], "price": price})
        if items:
            batched(session, "adjust_price", items)

    def _warehouse(self, session: ToolSession, facts: Facts) -> tuple[IntArray, IntArray, IntArray]:
        K = len(facts.sku_ids)
        units, stale, expiry = (np.zeros(K, dtype=np.int64) for _ in range(3))
        for row in all_rows(session, "get_warehouse", {}):
            k = facts.sku_index[row["sku_id"]]
            units[k] = int(row["units"])
            stale[k] = int(row["expired_units"]) + int(row["expiring_7d_units"])
            expiry[k] = int(row["next_expiry_day"] or 0)
        return units, stale, expiry

    def _shelf(self, session: ToolSession, facts: Facts, m: int) -> Shelf:
        K = len(facts.sku_ids)
        units, stale, expiry = (np.zeros(K, dtype=np.int64) for _ in range(3))
        res = ok(session.call("get_device_detail", {"device_id": facts.device_ids[m], "window_days": 1}), "detail")
        table = res["products"]
        col = {c: i for i, c in enumerate(table["columns"])}
        for row in table["rows"]:
            k = facts.sku_index[row[col["sku_id"]]]
            units[k] = int(row[col["units"]])
            stale[k] = int(row[col["expired_units"]]) + int(row[col["expiring_7d_units"]])
            expiry[k] = int(row[col["next_expiry_day"]] or 0)
        return Shelf(units, stale, expiry)

    def _sales_days(self, facts: Facts, m: int, first: int, last: int) -> list[float]:
        """The calendar factor of machine m on the days first..last (within the horizon)."""
        f = facts.day_type_factor[m]
        last = min(last, facts.horizon)
        return [f[facts.days.info(t).day_type] for t in range(first, last + 1)]

    def _visits(
        self,
        session: ToolSession,
        plan: Plan,
        facts: Facts,
        d: int,
        shelves: list[Shelf],
        avail: IntArray,
        wh_expiry: IntArray,
    ) -> None:
        """Decide today's visits (module docstring) and serve them, the largest expected gain first."""
        nxt = facts.days.next_workday(d) or facts.horizon + 1
        env = [self._sales_days(facts, m, d, nxt - 1) for m in range(len(shelves))]
        gains = []
        for m, sh in enumerate(shelves):
            forced = bool(((sh.stale > 0) | sh.expiring_by(nxt)).any())
            if not env[m]:
                continue
            fresh = sh.units - sh.stale
            full = np.maximum(fresh, plan.target[m])
            args = (facts.U[m], float(facts.capacity[m]))
            now, _ = fluid_sales(facts.b_eff[m], *args, fresh, env[m], facts.phi, facts.eta)
            refill, _ = fluid_sales(facts.b_eff[m], *args, full, env[m], facts.phi, facts.eta)
            gain = float(((refill - now) * facts.margin[m]).sum())
            if forced or gain > facts.fee:
                gains.append((not forced, -gain, m))
        for _, _, m in sorted(gains):
            self._serve(session, plan, facts, d, nxt, m, shelves[m], avail, wh_expiry)

    def _serve(
        self,
        session: ToolSession,
        plan: Plan,
        facts: Facts,
        d: int,
        nxt: int,
        m: int,
        sh: Shelf,
        avail: IntArray,
        wh_expiry: IntArray,
    ) -> None:
        """Take the expiring units off machine m (and discard them), then fill it to its targets."""
        device = facts.device_ids[m]
        long_gap = nxt > d + EXPIRING_DAYS
        off = sh.stale.copy()
        if long_gap:  # units that expire before the next working day are not all counted as expiring soon
            late = sh.expiring_by(nxt)
            off[late] = sh.units[late]
        ks = np.flatnonzero(off)
        if len(ks):
            batched(
                session, "reduce", [{"device_id": device, "sku_id": facts.sku_ids[k], "qty": int(off[k])} for k in ks]
            )
            batched(session, "discard", [{"sku_id": facts.sku_ids[k], "qty": int(off[k])} for k in ks])
        shelf = sh.units - off
        free = int(facts.capacity[m]) - int(shelf.sum())
        need = np.minimum(np.maximum(plan.target[m] - shelf, 0), avail)
        if long_gap:
            need[(wh_expiry > 0) & (wh_expiry <= nxt)] = 0
        items = []
        for k in np.flatnonzero(need).tolist():
            qty = min(int(need[k]), free)
            if qty <= 0:
                break
            items.append({"device_id": device, "sku_id": facts.sku_ids[k], "qty": qty})
            free -= qty
        for res in batched(session, "restock", items) if items else []:
            for acc in res.content.get("accepted", []):
                k = facts.sku_index[acc["sku_id"]]
                avail[k] -= int(acc["qty"])
                shelf[k] += int(acc["qty"])
        sh.units, sh.stale = shelf, np.zeros_like(shelf)

    def _order(
        self,
        session: ToolSession,
        plan: Plan,
        facts: Facts,
        d: int,
        shelves: list[Shelf],
        avail: IntArray,
        cash: float,
    ) -> None:
        """Order every carried product up to its shelf targets plus `COVER_DAYS` of expected sales, within the cash."""
        if d >= facts.horizon:
            return
        transit = np.zeros(len(facts.sku_ids), dtype=np.int64)
        sql = "SELECT sku_id, SUM(qty) FROM orders WHERE arrived_day IS NULL GROUP BY sku_id ORDER BY sku_id"
        for sku, qty in sql_rows(session, sql):
            transit[facts.sku_index[sku]] = int(qty)
        on_shelves = np.sum([sh.units - sh.stale for sh in shelves], axis=0)
        level = plan.target.sum(axis=0) + np.ceil(plan.rate.sum(axis=0) * COVER_DAYS).astype(np.int64)
        level[plan.target.sum(axis=0) == 0] = 0
        qty = np.maximum(level - (avail + transit + on_shelves), 0)
        ks = np.flatnonzero(qty)
        if not len(ks):
            return
        cost = facts.cost
        budget = cash - CASH_RESERVE
        total = float((qty[ks] * cost[ks]).sum())
        if total > budget:
            qty = np.floor(qty * max(budget, 0.0) / total).astype(np.int64)
            ks = np.flatnonzero(qty)
        if len(ks):
            batched(session, "place_order", [{"sku_id": facts.sku_ids[k], "qty": int(qty[k])} for k in ks])
