"""The benchmark as an environment with a privilege boundary: `VendingEnv` and what it returns.

    from autovend.env import VendingEnv
    env = VendingEnv("worlds/cn20")
    obs = env.reset(seed=1)                                   # Observation (the daily report)
    res = env.call("get_warehouse", {})                       # ToolResult
    obs, reward, terminated, truncated, info = env.end_day()  # DayStep

`autovend.env.boundary` says what the boundary guarantees; the harness (runner, evaluation, tests)
reaches the simulator behind an env or a `ToolSession` with `autovend.env.boundary.episode_of` /
`simulator_of`, which agents must not call.
`autovend.gym` wraps `VendingEnv` as the gymnasium environment `AutoVend-v0`.
"""

from autovend.env.environment import VendingEnv
from autovend.env.types import DayStep, Observation, Rules
from autovend.tools.result import ToolResult

__all__ = ["DayStep", "Observation", "Rules", "ToolResult", "VendingEnv"]
