"""`ToolSession`: one episode in process (simulator, notebook, trajectory), driven by tool calls by name.

    session = ToolSession(world, seed=1, trajectory_path="runs/s1.jsonl")
    system = session.system_prompt()
    while not session.done:
        prompt = session.daily_prompt()
        ...                                              # the agent decides
        result = session.call("get_device_detail", {"device_id": "CN_OFFICE_01", "window_days": 7})
        result = session.call("end_day", {})

Every call returns a `ToolResult` and never raises: malformed arguments, unknown tools, refused
queries and calls after the episode are error results whose message says how to fix the call. The
MCP server (`autovend.tools.mcp_server`) wraps one session per served episode.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from autovend.errors import AutoVendError
from autovend.sim import Simulator
from autovend.sim.checkpoint import read_payload
from autovend.tools.context import ToolContext, ToolError
from autovend.tools.observation import build_observation
from autovend.tools.prompts import daily_prompt, prompt_facts, system_prompt
from autovend.tools.registry import TOOLS_BY_NAME, tool_facts, tool_listing
from autovend.tools.schemas import validation_message
from autovend.tools.sql import TIME_LIMIT_S, SqlSandbox
from autovend.tools.trajectory import TrajectoryWriter, dumps
from autovend.tools.views import Views
from autovend.world.model import World

log = logging.getLogger(__name__)

SESSION_FORMAT = "autovend-tool-session"
SESSION_VERSION = 1


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call: `ok`, the JSON-ready `content`, and the `error` message when not ok.

    A batch with rejected items is still `ok` (the rejections are in the content); `ok` is False
    only when the call as a whole was refused. `text` is `content` as compact JSON (what an agent
    reads); `data` is the same result as the tool's typed model (`ToolDef.result`, e.g.
    `GetWarehouseResult`), None for an error result.
    """

    ok: bool
    content: dict[str, Any]
    error: str | None = None
    text: str = field(default="", repr=False)
    data: BaseModel | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> str:
        """The content as compact JSON text."""
        return self.text or dumps(self.content)

    def structured_content(self) -> dict[str, Any] | None:
        """The JSON object of `text` (an MCP result's structured content); None for an error result."""
        return json.loads(self.to_json()) if self.ok else None


def _typed(model: type[BaseModel], text: str) -> BaseModel | None:
    """The result text as its tool's typed model; None (and a logged error) if they disagree, a bug in a tool."""
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError:
        log.exception("the result does not match %s; the agent still gets its text", model.__name__)
        return None


class ToolSession:
    """One episode on `world` with `seed`, driven by tool calls (see the module docstring)."""

    def __init__(
        self,
        world: World,
        seed: int = 0,
        trajectory_path: str | Path | None = None,
        notebook: str = "",
        *,
        sql_time_limit_s: float = TIME_LIMIT_S,
    ) -> None:
        self._setup(Simulator(world, seed=seed), notebook, trajectory_path, sql_time_limit_s, {})

    def _setup(
        self,
        sim: Simulator,
        notebook: str,
        trajectory_path: str | Path | None,
        sql_time_limit_s: float,
        counters: dict[str, Any],
    ) -> None:
        self.world = sim.world
        self.sim = sim
        eco = sim.world.economics
        if len(notebook) > eco.memory_limit_chars:
            raise ValueError(f"notebook has {len(notebook)} characters, the limit is {eco.memory_limit_chars}")
        self._ctx = ToolContext(
            sim=sim,
            views=Views.of(sim),
            sql=SqlSandbox(sim.records, time_limit_s=sql_time_limit_s),
            notebook=notebook,
            memory_limit=eco.memory_limit_chars,
        )
        self._facts = tool_facts(prompt_facts(sim.world))
        self._seq = int(counters.get("seq", 0))
        self._by_tool: Counter[str] = Counter(counters.get("by_tool", {}))
        self._errors = int(counters.get("errors", 0))
        self._lock = threading.Lock()
        header = {"world": sim.world.name, "seed": sim.seed, "horizon_days": sim.horizon_days, "day": sim.day}
        self._writer = TrajectoryWriter(trajectory_path, header)

    # ------------------------------------------------------------------ calling tools

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run tool `name` with JSON-like `arguments` (None = {}); never raises for bad input."""
        with self._lock:
            return self._call(name, arguments)

    def _call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        start = time.perf_counter()
        sim = self.sim
        day = sim.day
        tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
        try:
            if tool is None:
                known = ", ".join(TOOLS_BY_NAME)
                raise ToolError(f"there is no tool {name!r}; the tools are: {known}")
            if sim.done:
                raise ToolError(self._over_message())
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, Mapping):
                raise ToolError(
                    f"{name}: arguments must be a JSON object of named parameters, got {type(arguments).__name__}"
                )
            raw = dict(arguments)
            try:
                args = tool.args.model_validate(raw)
            except ValidationError as exc:
                raise ToolError(validation_message(name, tool.args, exc)) from None
            content = tool.handler(self._ctx, args, raw)
            ok, error = True, None
        except AutoVendError as exc:
            ok, error = False, str(exc)
            content = {"error": error}
        except Exception as exc:  # a bug in a tool must not end the episode or the server
            log.exception("tool %s failed", name)
            ok = False
            error = (
                f"{name}: internal error ({type(exc).__name__}: {exc}). Check the state with the query "
                "tools before retrying; please report this."
            )
            content = {"error": error}
        text = dumps(content)
        data = _typed(tool.result, text) if ok and tool is not None else None
        wall_ms = (time.perf_counter() - start) * 1000.0
        self._seq += 1
        self._by_tool[str(name)] += 1
        self._errors += not ok
        self._writer.call(
            seq=self._seq,
            day=day,
            tool=str(name),
            arguments=arguments,
            ok=ok,
            result_json=text,
            error=error,
            wall_ms=wall_ms,
        )
        return ToolResult(ok, content, error, text, data)

    def _over_message(self) -> str:
        nav = self.sim.net_assets
        return (
            f"The episode is over: day {self.sim.horizon_days} was the last day and has been settled "
            f"(final net assets {nav:,.2f} {self.world.economics.currency}). No tool can be used any more."
        )

    # ------------------------------------------------------------------ what the agent reads

    def tools(self) -> list[dict[str, Any]]:
        """The 18 tools: name, kind (remote, physical, memory), description, input and output JSON schemas."""
        return tool_listing(self._facts, self._ctx.memory_limit)

    def observation(self) -> dict[str, Any]:
        """The daily observation of the current day (Appendix A.2 structure)."""
        with self._lock:
            return build_observation(self.sim, self._ctx.views)

    def system_prompt(self) -> str:
        """The fixed system prompt of this world."""
        return system_prompt(self.world)

    def daily_prompt(self) -> str:
        """Today's user prompt (header, observation, reminder); after the episode, a closing line."""
        if self.sim.done:
            return self._over_message()
        return daily_prompt(self.sim.today, self.sim.horizon_days, self.observation())

    # ------------------------------------------------------------------ state

    @property
    def notebook(self) -> str:
        """The agent's notebook (changed only through write_memory)."""
        return self._ctx.notebook

    @property
    def done(self) -> bool:
        """True once the last day has been ended."""
        return self.sim.done

    @property
    def day(self) -> int:
        """The current simulation day."""
        return self.sim.day

    @property
    def counters(self) -> dict[str, Any]:
        """Calls made so far: total (`seq`), errors, and by tool."""
        return {"seq": self._seq, "errors": self._errors, "by_tool": dict(self._by_tool)}

    @property
    def trajectory_path(self) -> Path | None:
        """The JSONL trajectory file, if any."""
        return self._writer.path

    # ------------------------------------------------------------------ checkpoints

    def save(self, path: str | Path) -> Path:
        """Write the episode (simulator checkpoint, notebook, call counters) to one file, atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            sim_path = self.sim.save(Path(tmp) / "sim.ckpt")
            payload = {
                "format": SESSION_FORMAT,
                "version": SESSION_VERSION,
                "sim": sim_path.read_bytes(),
                "notebook": self.notebook,
                "counters": self.counters,
                "sql_time_limit_s": self._ctx.sql.time_limit_s,
            }
            part = Path(tmp) / "session.tmp"
            with part.open("wb") as fh:
                pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(part, path)
        return path

    @classmethod
    def load(cls, path: str | Path, world: World, trajectory_path: str | Path | None = None) -> ToolSession:
        """Restore a session saved by `save` on the same `world`; calls append to `trajectory_path`."""
        path = Path(path)
        payload = read_payload(
            path, fmt=SESSION_FORMAT, version=SESSION_VERSION, what="tool-session checkpoint (see ToolSession.save)"
        )
        with tempfile.TemporaryDirectory() as tmp:
            sim_path = Path(tmp) / "sim.ckpt"
            sim_path.write_bytes(payload["sim"])
            sim = Simulator.load(sim_path, world)
        session = cls.__new__(cls)
        session._setup(sim, payload["notebook"], trajectory_path, payload["sql_time_limit_s"], payload["counters"])
        return session

    def close(self) -> None:
        """Close the trajectory file and the SQL sandbox."""
        self._writer.close()
        self._ctx.sql.close()

    def __enter__(self) -> ToolSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
