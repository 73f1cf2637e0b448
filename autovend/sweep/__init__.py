"""Sweeps of agents x seeds x worlds on Dask distributed, with results.csv and a leaderboard (`autovend sweep`).

The spec (`spec`), the runs and the function a worker runs (`tasks`), the one agent builder
(`agents`), the client that submits and follows them (`engine`), its picture of progress
(`progress`), and what is written at the end (`results`, `leaderboard`). See docs/sweeps.md.
"""

from autovend.sweep.engine import SweepOutcome, SweepPlan, run_sweep
from autovend.sweep.spec import AgentEntry, SweepSpec, WorldEntry, load_spec, parse_spec

__all__ = ["AgentEntry", "SweepOutcome", "SweepPlan", "SweepSpec", "WorldEntry", "load_spec", "parse_spec", "run_sweep"]
