"""Shared pieces of the LLM harness tests: a toy world, a fake server, and a small protocol driver.

`play` drives an agent the way the runner does (agent.start on a fresh run, act_day until the
episode is over, a checkpoint after every completed day: the session, the agent's state_dict and
the trajectory's byte offset; on resume the trajectory is cut back and the agent loads its state).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autovend.agents.llm import LLMConfig, build_llm_agent
from autovend.agents.llm.agent import LLMAgent
from autovend.env.boundary import episode_of
from autovend.session import ToolSession
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

DAYS = 8
SEED = 1
# toy calendar from 2025-01-01: day 1 New Year (holiday), days 2-3 workdays, 4-5 weekend, 6-10 workdays

PRICES_YAML = """\
currency: USD
unit_tokens: 1000000
models:
  default: {input: 0.0, output: 0.0}
  fake: {input: 2.0, cached_input: 0.5, output: 8.0}
"""


def make_world(days: int = DAYS) -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=days))


@pytest.fixture(scope="session")
def world() -> World:
    return make_world()


@pytest.fixture(scope="session")
def prices_file(tmp_path_factory) -> Path:
    """A price table where the model 'fake' costs 2.0 / 0.5 (cached) / 8.0 USD per million tokens."""
    path = tmp_path_factory.mktemp("prices") / "prices.yaml"
    path.write_text(PRICES_YAML, encoding="utf-8")
    return path


def make_agent(
    base_url: str,
    prices: Path | None = None,
    sleeps: list[float] | None = None,
    mcp: str | None = None,
    **cfg: Any,
) -> LLMAgent:
    """An agent on the fake server (no API key needed with a base URL); `sleeps` records backoff waits."""
    config = LLMConfig(backoff_initial_s=0.01, backoff_max_s=0.05, **cfg)
    record = sleeps.append if sleeps is not None else (lambda s: None)
    return build_llm_agent(
        "openai:fake",
        base_url=base_url,
        api_key_env="AUTOVEND_TEST_NO_KEY",
        mcp=mcp,
        config=config,
        prices_path=prices,
        seed=SEED,
        sleep=record,
    )


def play(
    world: World,
    make: Callable[[], LLMAgent],
    out: Path,
    *,
    resume: bool = False,
    stop_after: int | None = None,
) -> tuple[ToolSession, LLMAgent]:
    """Run (or resume) an episode into `out`, checkpointing after each day; stop after day `stop_after`."""
    traj = out / "trajectory.jsonl"
    agent = make()
    if resume:
        with (out / "agent.pkl").open("rb") as fh:
            saved = pickle.load(fh)
        with traj.open("r+b") as fh:
            fh.truncate(saved["offset"])
        session = ToolSession.load(out / "session.ckpt", world, trajectory_path=traj)
        agent.load_state(saved["agent"])
    else:
        out.mkdir(parents=True, exist_ok=True)
        session = ToolSession(world, seed=SEED, trajectory_path=traj)
        agent.start(session)
    while not session.done:
        agent.act_day(session)
        episode_of(session).save(out / "session.ckpt")
        tmp = out / "agent.pkl.tmp"
        with tmp.open("wb") as fh:
            pickle.dump({"agent": agent.state_dict(), "offset": traj.stat().st_size}, fh)
        os.replace(tmp, out / "agent.pkl")
        if stop_after is not None and session.day > stop_after:
            break
    return session, agent
