"""`AutoVend-Array-v0`: the benchmark as arrays for learners (gymnasium), one day per step.

    import gymnasium
    import autovend.arrays.env                         # registers AutoVend-Array-v0 (needs the [gym] extra)

    env = gymnasium.make("AutoVend-Array-v0", world="cn20")
    obs, info = env.reset(seed=1)                       # seed = the run seed of `autovend run`
    obs, reward, terminated, truncated, info = env.step(hold_action(obs))

    envs = gymnasium.make_vec("AutoVend-Array-v0", num_envs=1024, world="cn20")   # N runs in one numpy step
    obs, infos = envs.reset(seed=1)                     # run i gets seed 1 + i (or pass a list)

Observations (`observation_space`, a Dict of Boxes; the vector env adds a leading run axis):

    day, weekday (0 = Monday), workday (1 when visits are possible), t_max_c, precip_mm, cash (in `facts.currency`)
    slot_product (M, S)   product index in catalog order held by each slot, -1 = empty
    slot_units, slot_expired, slot_expiring (M, S)   units; expired today; unexpired, expiring within 7 days
    slot_next_expiry (M, S)   first day on which the earliest unexpired units are expired, 0 = none
    slot_price (M, S)     price in force / reference price (0 for an empty slot)
    slot_sold, slot_revenue, slot_cogs (M, S)   the last settled day's units sold, revenue and cost (currency)
    last_visit (M,)       last day with a visit, 0 = never
    warehouse_units, warehouse_expired, warehouse_expiring, warehouse_next_expiry, in_transit (K,)
    visit_mask (M,)       1 where a visit is possible today (working days)
    stock_mask (K,)       1 where the warehouse holds units of the product

Actions (`action_space`, a Dict; any key may be left out): visit (M,), visit_order (M,), slot_product,
slot_target, slot_remove, slot_waste, slot_price (M, S), order, discard (K,); their meaning is in
`autovend.arrays.actions`.
Each action is carried out as the simulator's own actions (`autovend.arrays.moves`) and the day is settled exactly
as the simulator settles it; the reward is the day's change in net assets (in the world's currency,
`facts.currency`), so the rewards add up to the final net assets minus the start cash. `info` holds the net assets,
cash, units sold and visits of the day, and what was refused: `refused` (how many parts) and codes per part
(`visit_refused`, `slot_refused`, `price_refused`, `order_refused`, `discard_refused`; 0 = carried out, else an
index into `autovend.arrays.actions.CODES`; `explain_refusals` writes them out). With `record=True` the env keeps
the tool calls each day stands for (`run_calls`), which `autovend.agents.array_replay` plays into a run folder that
`autovend verify` accepts.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils.seeding import np_random
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from autovend.arrays.actions import CODES, MEANING
from autovend.arrays.core import DEFAULT_SLOTS, ArraySim, Obs
from autovend.arrays.facts import ArrayFacts, PublicFacts
from autovend.arrays.log import Call
from autovend.env.boundary import REFUSED, in_agent_code
from autovend.errors import PrivilegeError
from autovend.rng import run_seed, run_seeds
from autovend.sim.items import MAX_ITEM_QTY
from autovend.world.model import World

ENV_ID = "AutoVend-Array-v0"


@dataclass(eq=False)
class _Held:
    """What an array env keeps out of its attributes: its simulator, and whether agent code made the env."""

    sim: ArraySim
    by_agent: bool  # made while agent code ran (`autovend.env.boundary.agent_code`): never handed across


# env -> its _Held: the simulator (with the world's demand model and the runs' shocks) is kept out of the env's
# attributes, as `autovend.env.boundary` keeps the tool doors' simulators (`array_sim_of` is the harness's way in)
_SIMS: weakref.WeakKeyDictionary[object, _Held] = weakref.WeakKeyDictionary()
BIG = np.iinfo(np.int32).max
WorldArg = World | str | os.PathLike[str]


def observation_space(facts: ArrayFacts, slots: int) -> spaces.Dict:
    """The observation space of one run (see the module docstring)."""
    M, K, S = facts.n_machines, facts.n_products, slots
    cap = int(facts.capacity.max())
    i32, f64 = np.int32, np.float64

    def box(lo: float, hi: float, shape: tuple[int, ...], dtype: Any) -> spaces.Box:
        return spaces.Box(lo, hi, shape, dtype)

    return spaces.Dict(
        {
            "day": box(1, facts.horizon, (), i32),
            "weekday": box(0, 6, (), i32),
            "workday": box(0, 1, (), i32),
            "t_max_c": box(-np.inf, np.inf, (), f64),
            "precip_mm": box(-np.inf, np.inf, (), f64),
            "cash": box(-np.inf, np.inf, (), f64),
            "slot_product": box(-1, K - 1, (M, S), i32),
            "slot_units": box(0, cap, (M, S), i32),
            "slot_expired": box(0, cap, (M, S), i32),
            "slot_expiring": box(0, cap, (M, S), i32),
            "slot_next_expiry": box(0, facts.n_days, (M, S), i32),
            "slot_price": box(0.0, facts.band[1], (M, S), f64),
            "slot_sold": box(0, cap, (M, S), i32),
            "slot_revenue": box(0.0, np.inf, (M, S), f64),
            "slot_cogs": box(0.0, np.inf, (M, S), f64),
            "last_visit": box(0, facts.horizon, (M,), i32),
            "warehouse_units": box(0, BIG, (K,), i32),
            "warehouse_expired": box(0, BIG, (K,), i32),
            "warehouse_expiring": box(0, BIG, (K,), i32),
            "warehouse_next_expiry": box(0, facts.n_days, (K,), i32),
            "in_transit": box(0, BIG, (K,), i32),
            "visit_mask": spaces.MultiBinary(M),
            "stock_mask": spaces.MultiBinary(K),
        }
    )


def action_space(facts: ArrayFacts, slots: int) -> spaces.Dict:
    """The action space of one run (see `autovend.arrays.actions`)."""
    M, K, S = facts.n_machines, facts.n_products, slots
    cap = int(facts.capacity.max())
    return spaces.Dict(
        {
            "visit": spaces.MultiBinary(M),
            "visit_order": spaces.Box(0, M - 1, (M,), np.int64),
            "slot_product": spaces.Box(-1, K - 1, (M, S), np.int64),
            "slot_target": spaces.Box(0, cap, (M, S), np.int64),
            "slot_remove": spaces.Box(0, cap, (M, S), np.int64),
            "slot_waste": spaces.Box(0, cap, (M, S), np.int64),
            "slot_price": spaces.Box(facts.band[0], facts.band[1], (M, S), np.float64),
            "order": spaces.Box(0, MAX_ITEM_QTY, (K,), np.int64),
            "discard": spaces.Box(0, MAX_ITEM_QTY, (K,), np.int64),
        }
    )


def hold_action(obs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The action that changes nothing (one run's observation, or a vector env's batch of them)."""
    lead = obs["slot_product"].shape[:-2]
    price = np.where(obs["slot_product"] >= 0, obs["slot_price"], 1.0)
    return {
        "visit": np.zeros(obs["last_visit"].shape, dtype=np.int8),
        "visit_order": np.zeros(obs["last_visit"].shape, dtype=np.int64),
        "slot_product": obs["slot_product"].astype(np.int64),
        "slot_target": obs["slot_units"].astype(np.int64),
        "slot_remove": np.zeros(obs["slot_units"].shape, dtype=np.int64),
        "slot_waste": np.zeros(obs["slot_units"].shape, dtype=np.int64),
        "slot_price": price.astype(np.float64),
        "order": np.zeros((*lead, obs["warehouse_units"].shape[-1]), dtype=np.int64),
        "discard": np.zeros((*lead, obs["warehouse_units"].shape[-1]), dtype=np.int64),
    }


def _seal(env: object, sim: ArraySim) -> None:
    _SIMS[env] = _Held(sim, by_agent=in_agent_code())


def _sim(env: object) -> ArraySim:
    """The `ArraySim` behind `env`, unchecked (the env's own access, as the tools' in `autovend.env.boundary`)."""
    try:
        return _SIMS[env].sim
    except (KeyError, TypeError):
        raise TypeError(f"{type(env).__name__} is not an AutoVend-Array-v0 env") from None


def array_sim_of(env: object) -> ArraySim:
    """The `ArraySim` behind an array env (harness only: tests, benchmarks, replays; never give it to an agent).

    Refused with `PrivilegeError` as `autovend.env.boundary.simulator_of` is: while agent code runs on the
    calling thread, and for an env that agent code made (from any thread, at any time); TypeError for an object
    that is no array env.
    """
    sim = _sim(env)
    if in_agent_code():
        raise PrivilegeError(REFUSED.format(what="array_sim_of(...)", why=" while the agent's code runs"))
    if _SIMS[env].by_agent:
        raise PrivilegeError(REFUSED.format(what="array_sim_of(...)", why=" for an array env the agent's code made"))
    return sim


def explain_refusals(info: Mapping[str, Any], facts: PublicFacts, run: int | None = None) -> list[str]:
    """The refused parts of one step's `info` in words (`run`: which run of a vector env's infos)."""
    f = facts
    out: list[str] = []

    def codes(key: str) -> np.ndarray:
        a = np.asarray(info[key])
        return a if run is None else a[run]

    for m in np.flatnonzero(codes("visit_refused")).tolist():
        c = CODES[codes("visit_refused")[m]]
        out.append(f"visit of {f.device_ids[m]}: {c} ({MEANING[c]})")
    for key, what in (("slot_refused", "slot"), ("price_refused", "price of slot")):
        a = codes(key)
        for m, s in zip(*np.nonzero(a), strict=True):
            c = CODES[a[m, s]]
            out.append(f"{what} {s} of {f.device_ids[m]}: {c} ({MEANING[c]})")
    for key, what in (("order_refused", "order"), ("discard_refused", "discard")):
        a = codes(key)
        for k in np.flatnonzero(a).tolist():
            c = CODES[a[k]]
            out.append(f"{what} of {f.sku_ids[k]}: {c} ({MEANING[c]})")
    return out


def _step_info(sim: ArraySim) -> dict[str, np.ndarray]:
    """The batched info of a settled day (arrays with the run axis first)."""
    plan, close = sim.last_plan, sim.last_close
    assert plan is not None and close is not None
    parts = {
        "visit_refused": plan.visit_code,
        "slot_refused": plan.slot_code,
        "price_refused": plan.price_code,
        "order_refused": plan.order_code,
        "discard_refused": plan.discard_code,
    }
    refused = sum(np.count_nonzero(a.reshape(len(a), -1), axis=1) for a in parts.values())
    st = sim.state
    assert st is not None
    return {
        "net_assets": st.close / 100.0,  # at the close of the day: what the day's report shows
        "cash": st.close_cash / 100.0,
        "units_sold": close.units_sold.astype(np.int64),
        "visits": close.visits.astype(np.int64),
        "refused": np.asarray(refused, dtype=np.int64),
        **parts,
    }


def _reset_info(sim: ArraySim) -> dict[str, np.ndarray]:
    st = sim.state
    assert st is not None
    return {"net_assets": sim.net_assets_fen() / 100.0, "cash": st.cash / 100.0}


def _one(batch: Mapping[str, np.ndarray], i: int, scalars: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Run i's part of a batched dict; the `scalars` keys as Python numbers (as gymnasium batches them back)."""
    out: dict[str, Any] = {}
    for key, value in batch.items():
        v = value[i]
        out[key] = v.item() if key in scalars and np.ndim(v) == 0 else np.asarray(v)
    return out


_SCALAR_INFO = frozenset({"net_assets", "cash", "units_sold", "visits", "refused"})


class ArrayVendEnv(gymnasium.Env[dict[str, np.ndarray], dict[str, np.ndarray]]):
    """One run as a gymnasium env (see the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self, world: WorldArg = "cn20", days: int | None = None, slots: int = DEFAULT_SLOTS, record: bool = False
    ) -> None:
        sim = ArraySim(world, 1, slots=slots, record=record)
        _seal(self, sim)
        self._days = _days(sim, days)
        self.facts = PublicFacts.of(sim.facts)
        self.observation_space = observation_space(sim.facts, slots)  # type: ignore[assignment]
        self.action_space = action_space(sim.facts, slots)  # type: ignore[assignment]
        self._settled = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a run: `seed` is the run seed (None: drawn from the env's generator); no options.

        A seed that is no whole number >= 0 (a boolean, a float, text; a numpy integer is its int) is refused with
        a ValueError (`autovend.rng.run_seed`, as AutoVend-v0 does), and the run under way goes on.
        """
        if seed is not None:
            seed = run_seed(seed)
        if options:
            raise ValueError(f"AutoVend-Array-v0 takes no reset options, got {sorted(options)}")
        super().reset(seed=seed)
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        sim = _sim(self)
        obs = sim.reset([episode_seed])
        self._settled = 0
        return _one(obs, 0), _one(_reset_info(sim), 0, _SCALAR_INFO)

    def step(self, action: Mapping[str, Any]) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """One day: the action, the settlement, the next day's observation (see the module docstring)."""
        sim = _sim(self)
        if sim.state is None:
            raise RuntimeError("call reset() before step()")
        if sim.done or self._settled >= self._days:
            raise RuntimeError("the run is over (terminated or truncated); call reset() for a new one")
        for key, value in action.items():  # the shapes of one run (the vector env checks its batches)
            space = self.action_space.spaces.get(key) if isinstance(self.action_space, spaces.Dict) else None
            if space is not None and np.shape(value) != space.shape:
                raise ValueError(f"action[{key!r}] has shape {np.shape(value)}; it must be {space.shape}")
        obs, net, _ = sim.step({k: np.asarray(v)[None] for k, v in action.items()})
        self._settled += 1
        terminated = sim.done
        truncated = not terminated and self._settled >= self._days
        return _one(obs, 0), float(net[0]) / 100.0, terminated, truncated, _one(_step_info(sim), 0, _SCALAR_INFO)

    def run_calls(self) -> list[list[Call]]:
        """The tool calls of the run's days so far (with `record=True`)."""
        return _sim(self).run_calls(0)


def _days(sim: ArraySim, days: int | None) -> int:
    horizon = sim.facts.horizon
    n = horizon if days is None else int(days)
    if not 1 <= n <= horizon:
        raise ValueError(f"days must be between 1 and the world's horizon {horizon}, got {days}")
    return n


class ArrayVendVectorEnv(VectorEnv[Any, Any, Any]):
    """N runs of `AutoVend-Array-v0` stepped together in numpy (`ArraySim`): one day per step for all of them.

    Behaves as gymnasium's `SyncVectorEnv` over N `ArrayVendEnv` (the same observations, rewards, flags and
    infos; autoreset `NEXT_STEP`: the step after the runs end starts new ones, from each env's generator).
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int,
        world: WorldArg = "cn20",
        days: int | None = None,
        slots: int = DEFAULT_SLOTS,
        record: bool | Sequence[int] = False,
    ) -> None:
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}; pass an integer such as 8")
        self.num_envs = num_envs = int(num_envs)
        sim = ArraySim(world, num_envs, slots=slots, record=record)
        _seal(self, sim)
        self._days = _days(sim, days)
        self.facts = PublicFacts.of(sim.facts)
        self.single_observation_space = observation_space(sim.facts, slots)
        self.single_action_space = action_space(sim.facts, slots)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._rngs: list[np.random.Generator | None] = [None] * num_envs
        self._settled = 0
        self._autoreset = False

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Obs, dict[str, Any]]:
        """Start N runs: seed None (each env draws its own), an int (seed + i) or a list of N.

        Seeds are checked before any run is reset, by the rule of AutoVend-v0's vector env (`autovend.rng.run_seeds`).
        """
        if options:
            raise ValueError(f"AutoVend-Array-v0 takes no reset options, got {sorted(options)}")
        seeds = run_seeds(seed, self.num_envs)
        for i, s in enumerate(seeds):
            if s is not None or self._rngs[i] is None:
                self._rngs[i], _ = np_random(s)
        return self._start([s if s is not None else self._draw(i) for i, s in enumerate(seeds)])

    def _draw(self, i: int) -> int:
        rng = self._rngs[i]
        assert rng is not None
        return int(rng.integers(0, 2**31 - 1))

    def _start(self, seeds: list[int]) -> tuple[Obs, dict[str, Any]]:
        sim = _sim(self)
        obs = sim.reset(seeds)
        self._settled = 0
        self._autoreset = False
        return obs, _with_masks(_reset_info(sim))

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[Obs, npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """One day of every run (after the runs end: new runs, the actions ignored)."""
        N = self.num_envs
        sim = _sim(self)
        if sim.state is None:
            raise RuntimeError("call reset() before step()")
        if self._autoreset:
            obs, info = self._start([self._draw(i) for i in range(N)])
            return obs, np.zeros(N), np.zeros(N, dtype=bool), np.zeros(N, dtype=bool), info
        obs, net, _ = sim.step(actions)
        self._settled += 1
        terminated = np.full(N, sim.done)
        truncated = np.full(N, not sim.done and self._settled >= self._days)
        self._autoreset = bool(terminated[0] or truncated[0])
        return obs, net / 100.0, terminated, truncated, _with_masks(_step_info(sim))

    def run_calls(self, run: int) -> list[list[Call]]:
        """Run `run`'s recorded tool calls, day by day."""
        return _sim(self).run_calls(run)


def _with_masks(batch: dict[str, np.ndarray]) -> dict[str, Any]:
    """A batched info as gymnasium's vector envs give it: every key with its `_key` mask (all set)."""
    out: dict[str, Any] = {}
    for key, value in batch.items():
        out[key] = value
        out[f"_{key}"] = np.ones(len(value), dtype=bool)
    return out


if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point="autovend.arrays.env:ArrayVendEnv",
        vector_entry_point="autovend.arrays.env:ArrayVendVectorEnv",
    )
