"""`VendingEnv`: the benchmark as an environment (reset, call a tool, end the day), behind the privilege boundary.

    env = VendingEnv("cn20")                         # a World, a bundle folder or a shipped world's name
    obs = env.reset(seed=1)                          # Observation: day 1's report
    res = env.call("get_catalog", {"page_size": 50})  # ToolResult: ok, content, error
    obs, reward, terminated, truncated, info = env.end_day()

The env owns its episode (the simulator, the tool context, the notebook, the trajectory) through
`autovend.env.boundary`: the env object and everything it returns hold none of it, so it can be
handed to an agent. `call` never raises for bad input (the error is in the result), exactly as the
in-process `ToolSession` and the MCP server, which serve the same 18 tools with the same texts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autovend.env.boundary import Sealed, _episode, _record, seal
from autovend.env.episode import Episode
from autovend.env.types import DayStep, Observation, Rules
from autovend.rng import run_seed
from autovend.sim import Simulator
from autovend.tools.prompts import prompt_facts, system_prompt
from autovend.tools.registry import tool_facts, tool_listing
from autovend.tools.result import ToolResult
from autovend.tools.sql import TIME_LIMIT_S
from autovend.tools.trajectory import dumps
from autovend.world.bundle import as_world
from autovend.world.derive import apply_scenario
from autovend.world.model import World
from autovend.world.scenario import Scenario


class VendingEnv:
    """One world's episodes: `reset(seed)`, `call(tool, args)`, `end_day()` (see the module docstring).

    days: settle at most this many days (default: the world's horizon); `end_day` reports
    `truncated` when they are reached before the horizon, and further calls are refused.
    sql_time_limit_s: the query_sql time limit. scenario: change the world first by a scenario (a shipped
    scenario's name, a scenario file, or a `Scenario`; docs/scenarios.md), as `autovend run --scenario` does.
    """

    def __init__(
        self,
        world: World | str | os.PathLike[str],
        *,
        days: int | None = None,
        sql_time_limit_s: float = TIME_LIMIT_S,
        scenario: str | os.PathLike[str] | Scenario | None = None,
    ) -> None:
        w = apply_scenario(as_world(world), scenario)
        horizon = w.horizon_days
        self._days = horizon if days is None else int(days)
        if not 1 <= self._days <= horizon:
            raise ValueError(f"days must be between 1 and the world's horizon {horizon}, got {days}")
        self._sql_time_limit_s = float(sql_time_limit_s)
        seal(self, Sealed(w))

    # ------------------------------------------------------------------ episodes

    def reset(self, seed: int = 0, *, notebook: str = "", trajectory_path: str | Path | None = None) -> Observation:
        """Start a new episode at day 1 with `seed` and return day 1's report.

        notebook: the notebook's starting text. trajectory_path: a JSONL file that logs every call
        of this episode (appended to if it exists). The previous episode, if any, is closed.
        """
        self.begin(seed, notebook=notebook, trajectory_path=trajectory_path)
        return _episode(self).observation()

    def begin(self, seed: int = 0, *, notebook: str = "", trajectory_path: str | Path | None = None) -> None:
        """`reset` without building day 1's report (a tool session reads it only when asked).

        A seed that is no whole number >= 0 (a boolean, a float, text) and a notebook that is no text are
        refused with a ValueError before the previous episode is touched.
        """
        seed = run_seed(seed)
        if not isinstance(notebook, str):
            raise ValueError(
                f"notebook must be text (a str), got a value of type {type(notebook).__name__}; the notebook is "
                "what write_memory writes, a string: pass json.dumps(value) to keep a structure in it"
            )
        if not notebook.isascii():
            try:
                notebook.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"notebook holds a lone UTF-16 surrogate (U+{ord(notebook[exc.start]):04X}) at character "
                    f"{exc.start + 1:,}: it is no Unicode text; pass valid Unicode text"
                ) from None
        record = _record(self)
        if record.episode is not None:
            record.episode.close()
            record.episode = None
        sim = Simulator(record.world, seed=seed)
        record.episode = Episode(sim, notebook, trajectory_path, self._sql_time_limit_s)

    @classmethod
    def restore(
        cls,
        path: str | Path,
        world: World | str | os.PathLike[str],
        *,
        trajectory_path: str | Path | None = None,
        days: int | None = None,
    ) -> VendingEnv:
        """An env continuing the episode saved at `path` (by the harness's `episode_of(env).save`) on `world`."""
        w = as_world(world)
        env = cls(w, days=days)
        episode = Episode.load(path, w, trajectory_path)
        env._sql_time_limit_s = episode.ctx.sql.time_limit_s
        _record(env).episode = episode
        return env

    # ------------------------------------------------------------------ acting

    def call(self, tool: str, args: Mapping[str, Any] | None = None) -> ToolResult:
        """Run one of the 18 tools with JSON-like `args` (None = {}); bad input gives an error result."""
        episode = _episode(self)
        if self._truncated(episode):
            error = (
                f"this environment was set to {self._days} days and they are settled; "
                "call reset(seed) for a new episode"
            )
            return ToolResult(False, {"error": error}, error, dumps({"error": error}), code="episode_over")
        return episode.call(tool, args)

    def call_if_kept(self, tool: str, args: Mapping[str, Any] | None = None) -> ToolResult | None:
        """`call(tool, args)` if it is answered at once from a kept read-only answer, else None (nothing done).

        See `Episode.call_if_kept`; a server uses it to answer such calls without a worker thread.
        """
        episode = _episode(self)
        if self._truncated(episode):
            return None
        return episode.call_if_kept(tool, args)

    def end_day(self, arguments: Mapping[str, Any] | None = None) -> DayStep:
        """Settle the day (the end_day tool) and return the next day's report with the day's reward.

        The reward is the settled day's net result, i.e. the change in net assets since the close of
        the previous day (the start cash before day 1). `arguments` go to the end_day tool as in
        `call("end_day", arguments)`, so they are checked by the same code: anything but {} (or None)
        is refused and the day goes on. A refused end_day (bad arguments, after the episode) gives 0
        and info {"error": ...}.
        """
        return self.day_step(self.call("end_day", arguments))

    def day_step(self, result: ToolResult) -> DayStep:
        """The `DayStep` of an end_day call's result (`call("end_day", ...)`): see `end_day`."""
        episode = _episode(self)
        if result.ok:
            settled = result.content["settled"]
            reward, info = float(settled["net"]), {"settled": settled}
        else:
            reward, info = 0.0, {"error": result.error}
        observation = episode.observation(result.content.get("observation"))
        terminated = episode.sim.done
        return DayStep(observation, reward, terminated, self._truncated(episode), info)

    def _truncated(self, episode: Episode) -> bool:
        return not episode.sim.done and episode.settled_days >= self._days

    # ------------------------------------------------------------------ what the agent reads

    def observation(self) -> Observation:
        """The current day's report (after the episode: the closing state)."""
        return _episode(self).observation()

    def daily_prompt(self) -> str:
        """Today's user prompt for a language model (header, report, reminder), or the closing line."""
        return _episode(self).daily_prompt()

    def system_prompt(self) -> str:
        """The fixed system prompt of this world (no episode needed)."""
        return system_prompt(_record(self).world)

    def tools(self) -> list[dict[str, Any]]:
        """The 18 tools: name, kind (remote, physical, memory), description and input JSON schema."""
        world = _record(self).world
        return tool_listing(tool_facts(prompt_facts(world)), world.economics.memory_limit_chars)

    def rules(self) -> Rules:
        """The operating rules the system prompt states (prices band, fees, rent, lead time, horizon, ...)."""
        return Rules.of(_record(self).world)

    # ------------------------------------------------------------------ state

    @property
    def days(self) -> int:
        """Days an episode of this env settles at most."""
        return self._days

    @property
    def day(self) -> int:
        """The current simulation day (the last day once the episode is over)."""
        return _episode(self).sim.day

    @property
    def terminated(self) -> bool:
        """True once the last day of the world's horizon is settled."""
        return _episode(self).sim.done

    @property
    def truncated(self) -> bool:
        """True once the env's `days` are settled before the horizon."""
        return self._truncated(_episode(self))

    @property
    def done(self) -> bool:
        """True when no more days can be played (terminated or truncated)."""
        episode = _episode(self)
        return episode.sim.done or self._truncated(episode)

    @property
    def notebook(self) -> str:
        """The agent's notebook (changed only through write_memory)."""
        return _episode(self).notebook

    @property
    def counters(self) -> dict[str, Any]:
        """Calls made so far in this episode: total (`seq`), errors, and by tool."""
        return _episode(self).counters

    @property
    def trajectory_path(self) -> Path | None:
        """The episode's JSONL trajectory file, if any."""
        return _episode(self).trajectory_path

    def close(self) -> None:
        """Close the episode's trajectory file and SQL sandbox (the harness can still read its results)."""
        episode = _record(self).episode
        if episode is not None:
            episode.close()

    def __enter__(self) -> VendingEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
