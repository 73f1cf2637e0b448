"""The privilege boundary: nothing an agent is handed reaches the simulator, the world or the hidden log."""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np
import pandas as pd
import pytest

from autovend.env import VendingEnv
from autovend.env.boundary import episode_of, simulator_of
from autovend.env.episode import Episode
from autovend.runner import run_episode
from autovend.session import ToolSession
from autovend.sim import Simulator
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

from .walker import find_privileged


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=8))


# ------------------------------------------------------------------ the walker can fail


class _Holder:
    def __init__(self, value: Any) -> None:
        self._value = value

    def act(self) -> None:
        """A method: its bound form leads back to the holder."""


class _Slotted:
    __slots__ = ("_hidden",)

    def __init__(self, value: Any) -> None:
        self._hidden = value


def test_the_walker_finds_every_kind_of_leak(world):
    sim = Simulator(world, seed=1)
    world_in_closure = (lambda w: lambda: w)(world)
    leaks = {
        "an underscored attribute": _Holder(sim),
        "a slot": _Slotted(sim.hidden),
        "a closure": world_in_closure,
        "a bound method's object": _Holder(Episode(sim, "", None, 2.0)).act,
        "a partial": functools.partial(print, sim),
        "a weak reference": weakref.ref(sim),
        "a copy of b in a list": [world.demand_model.b.copy()],
        "a table of U": {"t": pd.DataFrame({"device_id": world.machines["device_id"], "U": world.demand_model.U})},
        "U as a plain array": (np.array(world.demand_model.U, copy=True),),
        "the demand settings (kappa, ...)": _Holder(world.demand_model.settings),
        "the shock process": [world.demand_model.shock],
    }
    for what, obj in leaks.items():
        assert find_privileged(obj, world), what
    # and it stays quiet on what is not privileged
    assert find_privileged({"rows": [[1, 2.5, "x"]], "f": _Holder(3).act, "w": world.name}, world) == []


# ------------------------------------------------------------------ what agents receive


class _Recorder:
    """An agent that uses every kind of tool and keeps everything it was handed."""

    name = "recorder"

    def __init__(self) -> None:
        self.received: list[Any] = []

    def start(self, session: ToolSession) -> None:
        self.received += [session, session.observation(), session.rules(), session.tools(), session.system_prompt()]

    def act_day(self, session: ToolSession) -> None:
        calls = [
            ("get_catalog", {"page_size": 5}),
            ("place_order", {"items": [{"sku_id": "SKU0001", "qty": 12}]}),
            ("get_warehouse", {}),
            ("query_sql", {"sql": "SELECT * FROM orders"}),
            ("get_sales_history", {"window_days": 7}),
            ("write_memory", {"text": f"day {session.day}"}),
            ("no_such_tool", {}),
            ("end_day", {}),
        ]
        self.received += [session.daily_prompt(), session.counters, session.notebook]
        self.received += [session.call(name, args) for name, args in calls]

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        pass


def test_nothing_an_in_process_agent_receives_reaches_the_truth(world, tmp_path):
    agent = _Recorder()
    seen_sessions: list[ToolSession] = []
    original = agent.start
    agent.start = lambda s: (seen_sessions.append(s), original(s))  # type: ignore[method-assign]
    summary = run_episode(world, agent, seed=1, days=4, out_dir=tmp_path / "run", checkpoint="sync", evaluate=False)
    assert summary.days == 4 and len(agent.received) == 5 + 4 * 11
    assert find_privileged(agent.received, world) == []
    # the session really is backed by a simulator the harness can reach: the boundary is not vacuous
    (session,) = seen_sessions
    assert set(vars(session)) == {"_env"}
    assert isinstance(simulator_of(session), Simulator) and simulator_of(session).day == 5


def test_nothing_the_env_returns_reaches_the_truth(world):
    env = VendingEnv(world, days=3)
    received: list[Any] = [env, env.rules(), env.tools(), env.system_prompt()]
    received.append(env.reset(seed=2))
    received.append(env.call("place_order", {"items": [{"sku_id": "SKU0002", "qty": 5}]}))
    received.append(env.call("get_device_detail", {"device_id": "CN_WORKSITE_01"}))
    for _ in range(3):
        received.append(env.end_day())
    received += [env.observation(), env.daily_prompt(), env.call("get_warehouse", {})]
    assert find_privileged(received, world) == []
    assert not any(isinstance(v, (Simulator, World, Episode)) for v in vars(env).values())
    env.close()


def test_the_harness_reaches_the_episode_behind_env_and_session(world):
    session = ToolSession(world, seed=3)
    episode = episode_of(session)
    assert isinstance(episode, Episode) and simulator_of(session) is episode.sim
    assert episode.sim.seed == 3 and episode.world is world
    with pytest.raises(TypeError, match="not an AutoVend environment or tool session"):
        episode_of(object())
    with pytest.raises(RuntimeError, match=r"call reset\(seed\) first"):
        episode_of(VendingEnv(world))
    session.close()
