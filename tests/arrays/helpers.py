"""Shared by the array tests: random actions (good and bad), and the simulator the array runs are held to."""

from __future__ import annotations

import numpy as np

from autovend.arrays.core import ArraySim
from autovend.env.boundary import episode_of
from autovend.session import ToolSession


def random_action(sim: ArraySim, rng: np.random.Generator, obs: dict[str, np.ndarray], fill: bool = False) -> dict:
    """An action that moves a bit of everything, with some values that break the rules."""
    N, M, S = obs["slot_product"].shape
    K = sim.facts.n_products
    product = obs["slot_product"].astype(np.int64)
    if fill:  # empty slots get products the warehouse holds
        for n in range(N):
            stock = [k for k in rng.permutation(np.flatnonzero(obs["warehouse_units"][n] > 0)).tolist()]
            for m in range(M):
                have = set(product[n, m][product[n, m] >= 0].tolist())
                free = np.flatnonzero(product[n, m] < 0)
                new = [k for k in stock if k not in have][: len(free)]
                product[n, m, free[: len(new)]] = new
    change = rng.random((N, M, S)) < 0.12
    product[change] = rng.integers(-2, K + 1, int(change.sum()))  # -2 and K are unknown products
    target = np.maximum(obs["slot_units"] + rng.integers(-6, 14, (N, M, S)), -1)  # -1: invalid
    price = np.where(rng.random((N, M, S)) < 0.1, rng.uniform(0.4, 2.2, (N, M, S)), obs["slot_price"])
    return {
        "visit": (rng.random((N, M)) < 0.6).astype(np.int64),
        "visit_order": rng.integers(0, M, (N, M)),
        "slot_product": product,
        "slot_target": target,
        "slot_waste": rng.integers(0, 4, (N, M, S)) * (rng.random((N, M, S)) < 0.2),
        "slot_price": price,
        "order": rng.integers(-1, 50, (N, K)) * (rng.random((N, K)) < 0.2),
        "discard": rng.integers(0, 6, (N, K)) * (rng.random((N, K)) < 0.05),
    }


class Mirror:
    """One `ToolSession` per array run, fed the tool calls the array runs recorded, and compared every day."""

    def __init__(self, world, seeds: list[int]) -> None:
        self.sessions = [ToolSession(world, seed=s) for s in seeds]

    def play_day(self, sim: ArraySim, day: int) -> None:
        """Every run's recorded calls of `day`, then end_day; each call must be carried out in full."""
        for i, session in enumerate(self.sessions):
            for tool, args in sim.run_calls(i)[day - 1]:
                res = session.call(tool, args)
                assert res.ok, (day, tool, res.error)
                assert not res.content.get("rejected"), (day, tool, res.content["rejected"][:2])
            assert session.call("end_day", {}).ok

    def compare(self, sim: ArraySim, obs: dict[str, np.ndarray]) -> None:
        """Cash, net assets, shelves, warehouse, orders in transit, expired units and prices, run by run."""
        st = sim.state
        for i, session in enumerate(self.sessions):
            s = episode_of(session).sim
            assert s.cash_fen == st.cash[i]
            assert round(s.net_assets * 100) == sim.net_assets_fen()[i]
            if s.done:
                continue
            shelf = np.zeros((s.n_machines, s.n_products), dtype=np.int64)
            held = obs["slot_product"][i] >= 0
            m, slot = np.nonzero(held)
            shelf[m, obs["slot_product"][i][m, slot]] = obs["slot_units"][i][m, slot]
            assert np.array_equal(shelf, s.shelf_units())
            assert np.array_equal(obs["warehouse_units"][i], s.warehouse_units())
            assert np.array_equal(obs["in_transit"][i], s.in_transit_units())
            assert np.array_equal(obs["warehouse_expired"][i], s.expired_by()[1])
            expired = np.zeros_like(shelf)
            expired[m, obs["slot_product"][i][m, slot]] = obs["slot_expired"][i][m, slot]
            assert np.array_equal(expired, s.expired_by()[0])
            assert np.array_equal(st.price[i], s.price_matrix_fen())
            assert np.array_equal(st.last_visit[i], s.last_visit_days())
