"""The gymnasium environment `AutoVend-v0`: `import autovend.gym` registers it (needs the `[gym]` extra).

    import gymnasium
    import autovend.gym

    env = gymnasium.make("AutoVend-v0", world="cn20")              # a shipped world's name or a bundle folder
    obs, info = env.reset(seed=1)                                  # seed = the run seed of `autovend run`
    obs, reward, terminated, truncated, info = env.step('{"tool": "get_warehouse", "args": {}}')
    obs, reward, terminated, truncated, info = env.step('{"end_day": true}')

A step is one tool call. The action is a JSON text: `{"tool": NAME, "args": {...}}` for one of the
18 tools (`args` may be left out) or `{"end_day": true}` to close the day (the same as
`{"tool": "end_day"}`). The observation is a dict: `kind` ("report" or "result"), `day` and
`text`, ASCII JSON. After `reset` and after the day is ended, `kind` is "report" and `text` is
the day's `Observation.to_json()` (day, date, weekday, is_workday, done, and the report the daily
prompt shows); after any other call, `kind` is "result" and `text` is `{"ok", "content", "error"}`
of the tool. The reward is 0 for tool calls and, for ending a day, the day's change in net assets
(CNY), so rewards add up to final net assets minus start cash. `terminated` comes with the last
day of the horizon, `truncated` with `days`. `info` has `ok`, `error` and `tool`, and `settled`
(the day's settlement) after end_day.

A malformed action (not JSON, not one of the two forms, an unknown tool, JSON that breaks the rules
of `autovend.tools.guard`: a key twice, NaN, an integer beyond 2^53, over 32 levels deep, a lone
surrogate, over `MAX_ACTION` characters) is an error result with reward 0 that changes nothing;
actions after the end get an error result too. A result longer than `MAX_TEXT` characters (only a
huge query_sql answer can be) is replaced by an error asking for a narrower query. `render()`
(render_mode "ansi") gives the last observation as an agent reads it: the daily prompt after a
report, the result's JSON after a tool call. The env holds a `VendingEnv`, so the privilege boundary
of `autovend.env.boundary` holds here too; pass the world as a name or a path (default: the shipped
`cn20`; a `World` object passed to `gymnasium.make` would stay in `env.spec.kwargs`). `days=N` stops
after N days; `scenario=NAME` (a shipped scenario, or a scenario file) changes the world first
(docs/scenarios.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import gymnasium
from gymnasium import spaces

from autovend.env import VendingEnv
from autovend.env.types import Observation
from autovend.rng import run_seed
from autovend.tools.guard import InputError, loads
from autovend.tools.result import ToolResult
from autovend.world.model import World

ENV_ID = "AutoVend-v0"
MAX_TEXT = 1 << 24  # characters of an observation's text
MAX_ACTION = 1 << 17  # characters of an action's JSON text
ASCII_PRINTABLE = "".join(chr(c) for c in range(32, 127))
KINDS = ("report", "result")


def _ascii_json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def parse_action(action: Any) -> tuple[str, dict[str, Any]] | str:
    """(tool, args) from an action text, or the message saying what is wrong with it."""
    forms = 'an action is a JSON text {"tool": NAME, "args": {...}} or {"end_day": true}'
    if not isinstance(action, str):
        return f"{forms}, got a {type(action).__name__}"
    if len(action) > MAX_ACTION:
        return f"the action has {len(action):,} characters, over the limit of {MAX_ACTION:,}; send less"
    try:  # the JSON rules of every door: no key twice, no NaN, integers within 2^53, 32 levels, Unicode text
        data = loads(action, "the action", max_chars=MAX_ACTION)
    except InputError as exc:
        return f"{exc}; {forms}"
    if isinstance(data, dict) and data.get("end_day") is True and set(data) == {"end_day"}:
        return "end_day", {}
    if isinstance(data, dict) and isinstance(data.get("tool"), str) and set(data) <= {"tool", "args"}:
        args = data.get("args", {})
        if not isinstance(args, dict):
            return f"args must be a JSON object of named parameters, got {type(args).__name__}; {forms}"
        return data["tool"], args
    return f"{forms}, got {action[:200]!r}"


class AutoVendEnv(gymnasium.Env[dict[str, Any], str]):
    """AutoVend as a gymnasium environment (see the module docstring for actions and observations)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # text frames; only recording wrappers read the fps

    def __init__(
        self,
        world: str | os.PathLike[str] | World = "cn20",
        days: int | None = None,
        render_mode: str | None = None,
        scenario: str | os.PathLike[str] | None = None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self._env = VendingEnv(world, days=days, scenario=scenario)
        horizon = self._env.rules().horizon_days
        self.action_space = spaces.Text(max_length=MAX_ACTION, min_length=1, charset=ASCII_PRINTABLE + "\t\n\r")
        self.observation_space = spaces.Dict(
            {
                "kind": spaces.Text(max_length=6, min_length=6, charset="elmoprstu"),
                "day": spaces.Discrete(horizon, start=1),
                "text": spaces.Text(max_length=MAX_TEXT, min_length=2, charset=ASCII_PRINTABLE),
            }
        )
        self._shown = ""
        self._started = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: `seed` is the run seed (None: drawn from the env's generator).

        options: {"notebook": text} starts with a notebook. A seed that is no whole number >= 0 (a
        boolean, a float, text; a numpy integer is its int), options that are no mapping and a notebook
        that is no text are refused with a ValueError, and the episode under way goes on.
        """
        if seed is not None:
            seed = run_seed(seed)
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict such as {{'notebook': 'text'}}, got a {type(options).__name__}")
        opts = dict(options or {})
        unknown = set(opts) - {"notebook"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; the only option is 'notebook'")
        notebook = opts.get("notebook", "")
        if not isinstance(notebook, str):
            raise ValueError(
                f"options['notebook'] must be text (a str), got a value of type {type(notebook).__name__}; the "
                "notebook is what write_memory writes, a string: pass json.dumps(value) to keep a structure in it"
            )
        super().reset(seed=seed)
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        obs = self._env.reset(episode_seed, notebook=notebook)
        self._started = True
        return self._report(obs), {"ok": True, "error": None, "tool": None}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One tool call (or end of the day); see the module docstring."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        parsed = parse_action(action)
        if isinstance(parsed, str):
            return self._result(ToolResult(False, {"error": parsed}, parsed), "", 0.0)
        tool, args = parsed
        if tool != "end_day":
            return self._result(self._env.call(tool, args), tool, 0.0)
        result = self._env.call("end_day", args)  # checked by the tool's own code, as ToolSession.call does
        if not result.ok:  # arguments refused, or the episode is over: the same result ToolSession gives
            return self._result(result, tool, 0.0)
        step = self._env.day_step(result)
        info = {"ok": True, "error": None, "tool": tool, "settled": step.info["settled"]}
        return self._report(step.observation), step.reward, step.terminated, step.truncated, info

    def _report(self, obs: Observation) -> dict[str, Any]:
        self._shown = obs.prompt
        return {"kind": "report", "day": obs.day, "text": obs.to_json()}

    def _result(
        self, result: ToolResult, tool: str, reward: float
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        content = json.loads(result.to_json())  # the transports' JSON (anything JSON cannot hold is text there)
        text = _ascii_json({"ok": result.ok, "content": content, "error": result.error})
        error = result.error
        if len(text) > MAX_TEXT:
            error = f"the result has {len(text):,} characters, over the limit of {MAX_TEXT:,}; ask for less"
            text = _ascii_json({"ok": False, "content": {"error": error}, "error": error})
        self._shown = text
        obs = {"kind": "result", "day": self._env.day, "text": text}
        info = {"ok": result.ok and error is None, "error": error, "tool": tool or None}
        return obs, reward, self._env.terminated, self._env.truncated, info

    def render(self) -> str | None:
        """The last observation as the agent reads it (render_mode "ansi"); None without a render mode."""
        return self._shown if self.render_mode == "ansi" else None

    def close(self) -> None:
        """Close the episode's files and SQL sandbox (safe to call twice)."""
        self._env.close()


if ENV_ID not in gymnasium.registry:
    gymnasium.register(  # gymnasium.make_vec's native mode: N episodes in one process (autovend.vector)
        id=ENV_ID, entry_point="autovend.gym:AutoVendEnv", vector_entry_point="autovend.vector:AutoVendVectorEnv"
    )
