"""`ToolSession`: one episode in process, driven by tool calls by name (what an in-process agent is handed).

    session = ToolSession(world, seed=1, trajectory_path="runs/s1.jsonl")
    system = session.system_prompt()
    while not session.done:
        prompt = session.daily_prompt()
        ...                                              # the agent decides
        result = session.call("get_device_detail", {"device_id": "CN_OFFICE_01", "window_days": 7})
        result = session.call("end_day", {})

Every call returns a `ToolResult` and never raises: malformed arguments, unknown tools, refused
queries and calls after the episode are error results whose message says how to fix the call. The
MCP server (`autovend.mcp.server`) wraps one session per served episode.

A session is a transport over a `VendingEnv` (`autovend.env`): it holds neither the simulator nor
the world, so handing it to an agent hands over the tools and nothing else (see
`autovend.env.boundary`). The harness saves it and reads its simulator with
`autovend.env.boundary.episode_of(session)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autovend.env.boundary import _record, seal
from autovend.env.environment import VendingEnv
from autovend.env.types import Rules
from autovend.tools.result import ToolResult
from autovend.tools.sql import TIME_LIMIT_S
from autovend.world.model import World

__all__ = ["ToolResult", "ToolSession"]


class ToolSession:
    """One episode on `world` (a `World` or a bundle folder) with `seed`, driven by tool calls (module docstring)."""

    def __init__(
        self,
        world: World | str | os.PathLike[str],
        seed: int = 0,
        trajectory_path: str | Path | None = None,
        notebook: str = "",
        *,
        sql_time_limit_s: float = TIME_LIMIT_S,
    ) -> None:
        env = VendingEnv(world, sql_time_limit_s=sql_time_limit_s)
        env.begin(seed, notebook=notebook, trajectory_path=trajectory_path)
        self._attach(env)

    def _attach(self, env: VendingEnv) -> None:
        self._env = env
        seal(self, _record(env))  # the harness finds the episode from the session as from its env

    # ------------------------------------------------------------------ calling tools

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run tool `name` with JSON-like `arguments` (None = {}); never raises for bad input."""
        return self._env.call(name, arguments)

    def call_if_kept(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult | None:
        """`call(name, arguments)` if a read-only tool's answer is kept for the current state, else None.

        Nothing is done or recorded when None is returned; `call` then runs the tool (a server uses
        this to answer repeated questions without a worker thread).
        """
        return self._env.call_if_kept(name, arguments)

    # ------------------------------------------------------------------ what the agent reads

    def tools(self) -> list[dict[str, Any]]:
        """The 18 tools: name, kind (remote, physical, memory), description and input JSON schema."""
        return self._env.tools()

    def observation(self) -> dict[str, Any]:
        """The daily observation of the current day (Appendix A.2 structure)."""
        return self._env.observation().report

    def system_prompt(self) -> str:
        """The fixed system prompt of this world."""
        return self._env.system_prompt()

    def daily_prompt(self) -> str:
        """Today's user prompt (header, observation, reminder); after the episode, a closing line."""
        return self._env.daily_prompt()

    def rules(self) -> Rules:
        """The operating rules the system prompt states (price band, fees, rent, lead time, horizon, ...)."""
        return self._env.rules()

    # ------------------------------------------------------------------ state

    @property
    def notebook(self) -> str:
        """The agent's notebook (changed only through write_memory)."""
        return self._env.notebook

    @property
    def done(self) -> bool:
        """True once the last day has been ended."""
        return self._env.done

    @property
    def day(self) -> int:
        """The current simulation day."""
        return self._env.day

    @property
    def counters(self) -> dict[str, Any]:
        """Calls made so far: total (`seq`), errors, and by tool."""
        return self._env.counters

    @property
    def trajectory_path(self) -> Path | None:
        """The JSONL trajectory file, if any."""
        return self._env.trajectory_path

    # ------------------------------------------------------------------ checkpoints

    @classmethod
    def load(
        cls, path: str | Path, world: World | str | os.PathLike[str], trajectory_path: str | Path | None = None
    ) -> ToolSession:
        """Restore a session saved by the harness (`episode_of(session).save(path)`) on the same `world`.

        Calls append to `trajectory_path`.
        """
        session = cls.__new__(cls)
        session._attach(VendingEnv.restore(path, world, trajectory_path=trajectory_path))
        return session

    def close(self) -> None:
        """Close the trajectory file and the SQL sandbox."""
        self._env.close()

    def __enter__(self) -> ToolSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
