"""How the runner holds an agent to the protocol of `autovend.agents.base`: one `end_day` per `act_day`.

The runner gives the agent a `HarnessSession` (a `ToolSession` in every respect) and calls `start` and
`act_day` through `agent_step`, which stops the run with an `AgentError` naming the agent, the day and the
fix when the agent

- ends a day in `start`, or calls `end_day` a second time in one `act_day`: the call is refused before it
  runs (no second day is settled, nothing is written to the trajectory), also if the agent catches the error;
- returns from `act_day` without ending its day;
- calls `sys.exit` (or raises SystemExit): the run stops with a message instead of exiting quietly.

The agent's code runs inside `autovend.env.boundary.agent_code(session)`: the boundary's accessors refuse it there.

The run folder keeps its last checkpoint, so once the agent is fixed `--resume` continues the run.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from autovend.env.boundary import _episode, agent_code
from autovend.errors import AgentError
from autovend.session import ToolResult, ToolSession

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping
    from pathlib import Path

    from autovend.agents.base import Agent
    from autovend.world.model import World

RESUME = "fix the agent, then run the same command with --resume (the run folder keeps its last checkpoint)"


@dataclass
class _Step:
    """The step an agent is in: `start` or `act_day`, the settled days it may reach, why a call was refused."""

    name: str = ""
    most_settled: int | None = None  # None outside a step
    refused: str | None = None


# kept beside the sessions, not in them: the agent's session holds its environment and nothing else
_STEPS: weakref.WeakKeyDictionary[HarnessSession, _Step] = weakref.WeakKeyDictionary()


class HarnessSession(ToolSession):
    """A ToolSession that refuses an `end_day` past the days the current step may end (see the module)."""

    @property
    def refused(self) -> str | None:
        """Why a call was refused in the current step, or None."""
        return _STEPS.get(self, _Step()).refused

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """As `ToolSession.call`; an `end_day` beyond the step's one day raises `AgentError` and is not run."""
        step = _STEPS.get(self)
        limit = None if step is None or name != "end_day" else step.most_settled
        if step is not None and limit is not None and (day := settled_days(self)) >= limit:
            if step.name == "start":
                why = f"called end_day in start(), before day {day + 1}; start() prepares, act_day() ends the day"
            else:
                why = (
                    f"called end_day a second time in one act_day (day {day} was already ended); the call was "
                    "refused. An act_day ends exactly one day: its last call is end_day, and only one"
                )
            step.refused = why
            raise AgentError(why)
        return super().call(name, arguments)

    @classmethod
    def load(
        cls, path: str | Path, world: World | str | os.PathLike[str], trajectory_path: str | Path | None = None
    ) -> HarnessSession:
        """As `ToolSession.load`, as a HarnessSession."""
        session = super().load(path, world, trajectory_path)
        assert isinstance(session, HarnessSession)
        return session

    def begin(self, step: str, most_settled: int) -> None:
        """Start a step (`start` or `act_day`) that may reach `most_settled` settled days."""
        _STEPS[self] = _Step(step, most_settled)

    def end(self) -> None:
        """End the current step: calls are no longer checked."""
        _STEPS.get(self, _Step()).most_settled = None


def settled_days(session: ToolSession) -> int:
    """Days settled so far (read by the harness also while the agent's code runs: the tools' own access)."""
    return _episode(session).settled_days


def agent_step(agent: Agent, session: HarnessSession, step: Literal["start", "act_day"]) -> None:
    """Run `agent.start` or `agent.act_day` and check that it ended exactly the days it must (module docstring)."""
    before = settled_days(session)
    allowed = 1 if step == "act_day" else 0
    session.begin(step, before + allowed)
    try:
        with agent_code(session):
            (agent.act_day if step == "act_day" else agent.start)(session)
    except SystemExit as exc:
        raise AgentError(
            f"agent {agent.name!r} called sys.exit({exc.code!r}) in {step}() on day {before + 1}; an agent returns "
            f"from {step}() and never exits the process. The run stopped: {RESUME}"
        ) from None
    except AgentError:
        if session.refused is None:
            raise
    finally:
        session.end()
    if session.refused is not None:
        raise AgentError(f"agent {agent.name!r} {session.refused}. The run stopped: {RESUME}")
    after = settled_days(session)
    if step == "act_day" and after == before:
        raise AgentError(
            f"agent {agent.name!r} returned from act_day() without ending day {before + 1}: its last call must be "
            f'session.call("end_day"). The run stopped: {RESUME}'
        )
    if after != before + allowed:  # days ended behind the session's back (e.g. a mirrored MCP session)
        raise AgentError(
            f"agent {agent.name!r} ended {after - before} days in one {step}() (day {before + 1}); an act_day ends "
            f"exactly one day. The run stopped: {RESUME}"
        )
