"""The agent protocol every AutoVend operator follows, and the registry of named agents (`baseline`).

`autovend run --agent` builds agents with `autovend.agents.plugins.load_agent`, which also takes
`openai:MODEL` and plugins (`FILE.py:Class`, `package.module:Class`); docs/agents.md explains it all.

An agent sees the world only through a `ToolSession`: the daily observation
(`session.observation()`, the JSON an LLM gets in its daily prompt), the published rules
(`session.rules()`) and the 18 tools (`session.call(name, arguments)`); the session holds no
simulator or world (`autovend.env.boundary`). The runner drives it::

    agent.start(session)              # once, on day 1 of a fresh run (before the first act_day)
    while not session.done:
        agent.act_day(session)        # the day's tool calls, ending with session.call("end_day")
        checkpoint(agent.state_dict())

and on `--resume` builds a new agent with the same name, seed and config and calls
`agent.load_state(saved)` instead of `start`. An agent must therefore keep everything it needs
between days in `state_dict()` (any picklable values: numbers, strings, lists, dicts, numpy
arrays) and must not make tool calls in `load_state`: the resumed run has to repeat the
uninterrupted one call for call.

Optional attributes the runner records when present: `config` (a pydantic model, written to
run.json) and `usage()` (a dict of token counts and API cost, for LLM agents).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from autovend.errors import ConfigError

if TYPE_CHECKING:
    from autovend.session import ToolSession


@runtime_checkable
class Agent(Protocol):
    """An operator of the network (see the module docstring for the life cycle)."""

    name: str

    def start(self, session: ToolSession) -> None:
        """Prepare for a fresh episode (day 1); may call read-only tools, must not end the day."""

    def act_day(self, session: ToolSession) -> None:
        """Take the current day's actions; the last call must be `session.call("end_day")`."""

    def state_dict(self) -> dict[str, Any]:
        """Everything the agent needs to continue from here (picklable)."""

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from a `state_dict()` taken after a completed day (no tool calls here)."""


AgentFactory = Callable[[int, Path | None], Agent]


def _baseline(seed: int, config_path: Path | None) -> Agent:
    from autovend.agents.baseline import BaselineAgent, load_baseline_config

    return BaselineAgent(load_baseline_config(config_path), seed=seed)


def _oracle(seed: int, config_path: Path | None) -> Agent:
    from autovend.agents.oracle import OracleAgent

    if config_path is not None:
        raise ConfigError("the oracle takes no --agent-config: its plan follows from the world's hidden demand model")
    return OracleAgent(seed=seed)


# `oracle` is the privileged reference policy: it reads the hidden demand model (`autovend.agents.oracle`)
AGENTS: dict[str, AgentFactory] = {"baseline": _baseline, "oracle": _oracle}


def make_agent(name: str, seed: int, config_path: str | Path | None = None) -> Agent:
    """Build the agent registered as `name` for a run with `seed` (optional config file)."""
    factory = AGENTS.get(name)
    if factory is None:
        known = ", ".join(sorted(AGENTS))
        raise ConfigError(f"there is no agent {name!r}; the agents are: {known}")
    return factory(seed, None if config_path is None else Path(config_path))
