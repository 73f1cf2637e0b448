"""`ArrayBaseline`: the rule-based baseline as an array policy for `AutoVend-Array-v0` (N runs at once).

    envs = gymnasium.make_vec("AutoVend-Array-v0", num_envs=N, world="cn20")
    policy = ArrayBaseline(envs.unwrapped.facts.world, n_runs=N, slots=envs.unwrapped.sim.slots)
    obs, _ = envs.reset(seed=1)
    while True:
        obs, reward, terminated, truncated, info = envs.step(policy.act(obs))
        if terminated[0] or truncated[0]:
            break

A machine holds at most the env's slots of products at once (the baseline has no such limit): products the
baseline would put on a full machine as clearance are left out and counted (`slot_cuts`; none on cn20's seeds 1-3
at 64 slots), and a review that needs more slots than there are raises `SlotsFull`.

The day is `autovend.agents.baseline`'s, step for step (observe, clean, estimate, prices, visits, orders),
with its settings (`BaselineConfig`) and its rules ported to arrays over the runs (`book`, `estimate`,
`targets`, `visits`, `serve`, `review`, `orders`, `trials`). Like the baseline it reads only what an agent
may: the published rules, catalog, machines and calendar (from a tool session on day 1) and the observations.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.book import Book
from autovend.agents.array_baseline.estimate import band_fen, estimate
from autovend.agents.array_baseline.orders import clean, network_exposure, place_orders
from autovend.agents.array_baseline.serve import Visits, serve
from autovend.agents.array_baseline.trials import arms_today, update_trials
from autovend.agents.array_baseline.visits import Calendar, visits_today
from autovend.agents.baseline.calls import all_rows, ok
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.setup import new_state, price_band, static_from
from autovend.agents.baseline.state import Static
from autovend.arrays.kernel import nonzero
from autovend.calibration.kernels import compiled
from autovend.errors import ConfigError
from autovend.session import ToolSession
from autovend.tools.schemas import CALENDAR_DAYS_MAX
from autovend.world.model import World

IntArray = npt.NDArray[np.int64]


def read_static(world: World | str | os.PathLike[str], cfg: BaselineConfig) -> Static:
    """The baseline's day-1 facts, read as `BaselineAgent.start` reads them (through a tool session)."""
    session = ToolSession(world, seed=0)
    try:
        rules = session.rules()
        band = price_band(rules, cfg)
        obs = session.observation()
        catalog = all_rows(session, "get_catalog", {})
        cal = ok(session.call("get_calendar", {"days_ahead": CALENDAR_DAYS_MAX}), "get_calendar")
        return static_from(rules, band, catalog, obs, cal)
    finally:
        session._env.close()


class ArrayBaseline:
    """The baseline for N array runs (see the module docstring)."""

    name = "array-baseline"

    def __init__(
        self,
        world: World | str | os.PathLike[str],
        n_runs: int,
        slots: int,
        config: BaselineConfig | None = None,
    ) -> None:
        self.config = cfg = config or BaselineConfig()
        if cfg.memory_half_life_days > 0:
            raise ConfigError("the array baseline keeps no discounted history: set memory_half_life_days to 0")
        self.st = read_static(world, cfg)
        self.n_runs = n_runs
        self.slots = slots
        self.cal = Calendar(self.st.weekday, self.st.workday)
        order = np.argsort(np.array(self.st.sku_ids, dtype=object), kind="stable")
        self._sku_rank = np.empty(len(order), dtype=np.int64)
        self._sku_rank[order] = np.arange(len(order))
        self._ref_fen = np.asarray(self.st.ref_fen, dtype=np.int64)
        self._lo_fen, self._hi_fen = band_fen(self._ref_fen, self.st.band)
        self.reset()

    @property
    def slot_cuts(self) -> IntArray:
        """(N,) clearance products each run left out because the machine's slots were full."""
        return self.book.slot_cuts.copy()

    def reset(self) -> None:
        """Forget the runs: the next `act` must be a day-1 observation."""
        self.book = Book.new(self.st, new_state(self.st, self.config, 1), self.config, self.n_runs, self.slots)

    def act(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The day's action of every run from its observation (batched: a leading run axis)."""
        book, st, cfg = self.book, self.st, self.config
        d = int(np.asarray(obs["day"]).reshape(-1)[0])
        N, M, S = book.pk.shape
        if obs["slot_product"].shape != (N, M, S):
            raise ValueError(
                f"the policy was made for {N} runs of {M} machines x {S} slots, got {obs['slot_product'].shape}"
            )
        if d > 1:
            book.sync_sales(obs, d - 1, cfg.window_days, self._sku_rank)
        units = obs["warehouse_units"].astype(np.int64)
        expired = obs["warehouse_expired"].astype(np.int64)
        expiring = obs["warehouse_expiring"].astype(np.int64)
        wh = {
            "units": units,
            "expired": expired,
            "expiring": expiring,
            "next_expiry": obs["warehouse_next_expiry"].astype(np.int64),
            "good": units - expired - expiring,
        }
        discard = clean(book, st, cfg, d, wh)
        est = estimate(book, st, cfg)
        update_trials(book, cfg, d)
        pct = arms_today(book, cfg, d)
        avail = wh["good"].copy()
        wh_next = wh["next_expiry"].copy()
        visits = Visits.none(N, M, S)
        rank = np.full((N, M), -1, dtype=np.int64)
        if st.workday[d]:
            network = network_exposure(book, len(st.sku_ids))
            rank = visits_today(est, self.cal, obs, d, avail)
            for r in range(int(rank.max()) + 1):
                n, m = nonzero(rank == r)
                serve(est, self.cal, obs, n, m, d, avail, wh_next, network, visits)
        order = place_orders(est, d, avail, obs["in_transit"].astype(np.int64), np.asarray(obs["cash"], dtype=float))
        book.record_exposure(d, cfg.window_days, cfg.facing_units)
        return self._action(obs, visits, rank, pct, discard, order)

    def _action(
        self,
        obs: dict[str, np.ndarray],
        visits: Visits,
        rank: IntArray,
        pct: IntArray,
        discard: IntArray,
        order: IntArray,
    ) -> dict[str, Any]:
        """The env action: the served machines' slots as the book has them, the others as they are; prices."""
        book = self.book
        N, M, S = book.pk.shape
        product = np.empty((N, M, S), dtype=np.int64)
        target = np.empty((N, M, S), dtype=np.int64)
        price = np.empty((N, M, S))
        env_k = np.asarray(obs["slot_product"], dtype=np.int32)
        env_units = np.asarray(obs["slot_units"], dtype=np.int32)
        slot_action(visits.served, book.pk, book.shelf, env_k, env_units, pct, self._ref_fen, self._lo_fen,
                    self._hi_fen, product, target, price)  # fmt: skip
        return {
            "visit": visits.served.astype(np.int8),
            "visit_order": np.where(rank >= 0, rank, 0),
            "slot_product": product,
            "slot_target": target,
            "slot_remove": visits.remove,
            "slot_waste": visits.waste,
            "slot_price": price,
            "order": order,
            "discard": discard,
        }


@compiled(nogil=True, boundscheck=False)
def slot_action(
    served: npt.NDArray[np.bool_], pk: IntArray, shelf: IntArray, env_k: npt.NDArray[np.int32],
    env_units: npt.NDArray[np.int32], pct: IntArray, ref: IntArray, lo: IntArray, hi: IntArray, product: IntArray,
    target: IntArray, price: npt.NDArray[np.float64],
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """The slots of the action: a served machine's as the book has them, the others as they are.

    Each held product's price multiplier is `estimate.clip_fen` of its machine's percent over the reference
    price (1.0 on an empty slot).
    """
    N, M, S = pk.shape
    for n in range(N):
        for m in range(M):
            for s in range(S):
                if served[n, m]:
                    k = pk[n, m, s]
                    target[n, m, s] = shelf[n, m, s] if k >= 0 else 0
                else:
                    k = np.int64(env_k[n, m, s])
                    target[n, m, s] = env_units[n, m, s]
                product[n, m, s] = k
                if k >= 0:
                    fen = min(max((ref[k] * pct[n, m] + 50) // 100, lo[k]), hi[k])
                    price[n, m, s] = fen / ref[k]
                else:
                    price[n, m, s] = 1.0
