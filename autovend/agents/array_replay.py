"""`ArrayReplayAgent`: an array run's days played as tool calls, so that the runner writes it as a run folder.

    sim = ArraySim("cn20", n_runs=8, record=[3])            # or AutoVend-Array-v0 with record=True
    ...                                                       # the days, stepped with any array policy
    agent = ArrayReplayAgent(sim.run_calls(3))
    run_episode(world, agent, seed=seeds[3], days=len(agent.days), out_dir="runs/cn20/array-s4")

Each array day is a set of the simulator's own actions (`autovend.arrays.log.day_calls` writes them as the
tool calls that make them); played in order through the run's `ToolSession`, then end_day, they repeat the
array run exactly, and the folder is a normal run folder: `autovend verify` re-simulates it from its
trajectory. A call that is refused, or an item rejected, means the two disagree: the agent stops the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autovend.arrays.log import Call
from autovend.errors import AutoVendError

if TYPE_CHECKING:
    from autovend.session import ToolSession


class ReplayMismatch(AutoVendError):
    """The simulator refused a call the array run had carried out."""


class ArrayReplayAgent:
    """Plays recorded array days (`days[d - 1]`: the tool calls of day d) through a tool session."""

    name = "array-replay"

    def __init__(self, days: list[list[Call]], seed: int = 0) -> None:
        self.days = days
        self.seed = int(seed)

    def start(self, session: ToolSession) -> None:
        """Nothing to read: the calls are known."""

    def act_day(self, session: ToolSession) -> None:
        """Day d's recorded calls, then end_day."""
        d = session.day
        if d > len(self.days):
            raise ReplayMismatch(f"the array run recorded {len(self.days)} days; there is no day {d} to play")
        for tool, args in self.days[d - 1]:
            res = session.call(tool, args)
            rejected = res.content.get("rejected") if res.ok else None
            if not res.ok or rejected:
                why = rejected[0]["message"] if rejected else res.error
                raise ReplayMismatch(f"day {d}: the simulator refused {tool} that the array run carried out: {why}")
        session.call("end_day", {})

    def state_dict(self) -> dict[str, Any]:
        """Nothing changes between days (the calls are the agent's whole state, given at the start)."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""
