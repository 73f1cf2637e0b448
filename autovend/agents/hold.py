"""HoldAgent, shipped: the zero of the normalised score (`autovend.evaluation.headroom`), a module plugin in any folder.

`autovend run --agent autovend.agents.hold:HoldAgent` (and the shipped sweep spec `baselines-cn20`) run it without a
checkout. The class is the complete example of docs/agents.md, `examples/agents/hold.py`, line for line (a test holds
the two to each other).
"""

from __future__ import annotations

from typing import Any


class HoldAgent:
    """Holds its cash: net assets fall by the fixed daily fee, the floor any real policy must beat."""

    name = "hold"  # the agent's name in run.json, reports and comparisons

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # autovend passes the run's seed; this agent draws no random numbers
        self.lowest = float("inf")  # the lowest net assets seen so far: state that must survive a resume

    def start(self, session: Any) -> None:
        """Day 1 of a fresh run: read the rules the system prompt states (no tool call needed)."""
        rules = session.rules()
        self.lowest = rules.start_cash

    def act_day(self, session: Any) -> None:
        """One day: read the report, note it in the notebook, then end the day (always the last call)."""
        balance = session.observation()["balance"]
        self.lowest = min(self.lowest, balance["net_assets"])
        session.call("write_memory", {"text": f"day {session.day}: holding, lowest net assets {self.lowest:.2f}"})
        session.call("end_day", {})

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue after a completed day (picklable)."""
        return {"lowest": self.lowest}

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()` on --resume (no tool calls here)."""
        self.lowest = float(state["lowest"])
