"""`Episode`: the privileged inside of one episode (simulator, tool context, notebook, counters, trajectory).

This is the harness's object: it holds the simulator (and with it the world's demand model and the
hidden log) in plain attributes. It is never handed to an agent; agents get a `VendingEnv` or a
`ToolSession`, which reach their episode through `autovend.env.boundary`. The runner, the
evaluation and tests reach it with `episode_of(env_or_session)`.

`call` runs a tool by name and never raises for bad input: malformed arguments, unknown tools,
refused queries and calls after the episode are error results whose message says how to fix the call.
"""

from __future__ import annotations

import json
import logging
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from autovend.env.types import Observation, Rules
from autovend.errors import AutoVendError, EpisodeOver
from autovend.io import write_pickle
from autovend.sim import Simulator
from autovend.sim.checkpoint import read_payload
from autovend.tools.context import ToolContext, ToolError
from autovend.tools.guard import InputError, check_arguments, kind_of
from autovend.tools.observation import build_observation
from autovend.tools.prompts import daily_prompt, prompt_facts, system_prompt
from autovend.tools.registry import STATE_READ_TOOLS, TOOLS_BY_NAME, ToolDef, tool_facts, tool_listing
from autovend.tools.result import ToolResult
from autovend.tools.schemas import clip, quote, validation_message
from autovend.tools.sql import SqlSandbox
from autovend.tools.trajectory import TrajectoryWriter, dumps
from autovend.tools.views import Views
from autovend.world.model import World

log = logging.getLogger(__name__)

SESSION_FORMAT = "autovend-tool-session"
SESSION_VERSION = 1


MAX_TOOL_NAME_RECORDED = 200  # characters of an unknown tool's name kept in the trajectory


def _arguments_key(raw: dict[str, Any]) -> str | None:
    """The arguments as canonical JSON (sorted keys), the key of a kept answer; None if they have no such form."""
    try:
        return json.dumps(raw, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


class Episode:
    """One episode on a simulator, driven by tool calls (see the module docstring)."""

    def __init__(
        self,
        sim: Simulator,
        notebook: str,
        trajectory_path: str | Path | None,
        sql_time_limit_s: float,
        counters: Mapping[str, Any] | None = None,
    ) -> None:
        counters = counters or {}
        self.sim = sim
        self.world = sim.world
        eco = sim.world.economics
        if len(notebook) > eco.memory_limit_chars:
            raise ValueError(f"notebook has {len(notebook)} characters, the limit is {eco.memory_limit_chars}")
        self.ctx = ToolContext(
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
        self.lock = threading.Lock()
        header = {"world": sim.world.name, "seed": sim.seed, "horizon_days": sim.horizon_days, "day": sim.day}
        self._writer = TrajectoryWriter(trajectory_path, header)

    # ------------------------------------------------------------------ calling tools

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run tool `name` with JSON-like `arguments` (None = {}); never raises for bad input."""
        with self.lock:
            return self._call(name, arguments)

    def call_if_kept(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult | None:
        """`call(name, arguments)` if it is answered at once, else None (nothing done, nothing recorded).

        At once means: no other call of this episode is running, and `name` is a read-only tool whose
        answer to these arguments is kept for the current state (`Views.answer`), so no handler runs.
        A server answers such calls on its event loop and sends the others to a worker thread.
        """
        if name not in STATE_READ_TOOLS or not (arguments is None or isinstance(arguments, Mapping)):
            return None
        if not self.lock.acquire(blocking=False):
            return None
        try:
            key = _arguments_key(dict(arguments or {}))
            if key is None or self.sim.done or not self.ctx.views.is_kept((name, key)):
                return None
            return self._call(name, arguments)
        finally:
            self.lock.release()

    def _call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        start = time.perf_counter()
        sim = self.sim
        day = sim.day
        tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
        answer: ToolResult | None = None  # a read-only tool's kept answer (Views.answer)
        recorded: Any = arguments  # what the trajectory holds as the arguments
        arguments_json: str | None = None  # the same as compact JSON, when the guard wrote it
        try:
            if tool is None:
                known = ", ".join(TOOLS_BY_NAME)
                raise ToolError(f"there is no tool {quote(name)}; the tools are: {known}", "unknown_tool")
            if sim.done:
                raise ToolError(self.over_message(), "episode_over")
            if arguments is None:
                arguments = recorded = {}
            if not isinstance(arguments, Mapping):
                raise ToolError(
                    f"{name}: arguments must be a JSON object of named parameters, got {kind_of(arguments)}",
                    "invalid_arguments",
                )
            raw = dict(arguments)
            try:
                arguments_json = check_arguments(raw)
            except InputError as exc:
                if not exc.recordable:
                    recorded = f"<not recorded: {exc}>"
                raise ToolError(f"{name}: refused, nothing was done: {exc}", "input_limit") from None
            try:
                args = tool.args.model_validate(raw)
            except ValidationError as exc:
                raise ToolError(validation_message(name, tool.args, exc), "invalid_arguments") from None
            key = _arguments_key(raw) if name in STATE_READ_TOOLS else None
            if key is None:
                content = tool.handler(self.ctx, args, raw)
            else:  # the same question in the same state: the kept answer (Views.answer)
                answer = self.ctx.views.answer((name, key), lambda: self._answer(tool, args, raw))
                content = answer.content
            ok, error, code = True, None, None
        except AutoVendError as exc:
            ok, error = False, str(exc)
            code = exc.code if isinstance(exc, ToolError) else "episode_over" if isinstance(exc, EpisodeOver) else None
            content = {"error": error}
        except Exception as exc:  # a bug in a tool must not end the episode or the server
            log.exception("tool %s failed", name)
            ok, code = False, "internal_error"
            error = (
                f"{name}: internal error ({type(exc).__name__}: {exc}). Check the state with the query "
                "tools before retrying; please report this."
            )
            content = {"error": error}
        text = answer.text if answer is not None else dumps(content)
        wall_ms = (time.perf_counter() - start) * 1000.0
        self._seq += 1
        label = str(name) if tool is not None else clip(str(name), MAX_TOOL_NAME_RECORDED)
        self._by_tool[label] += 1
        self._errors += not ok
        self._writer.call(
            seq=self._seq,
            day=day,
            tool=label,
            arguments=recorded,
            ok=ok,
            result_json=text,
            error=error,
            wall_ms=wall_ms,
            arguments_json=arguments_json,
        )
        if answer is not None:
            return answer
        return ToolResult(ok, content, error, text, tool.result if ok and tool is not None else None, code)

    def _answer(self, tool: ToolDef, args: BaseModel, raw: dict[str, Any]) -> ToolResult:
        """A read-only tool's successful result in the current state (raises as its handler does)."""
        content = tool.handler(self.ctx, args, raw)
        text = dumps(content)
        return ToolResult(True, content, None, text, tool.result)

    def over_message(self) -> str:
        """What every call gets once the last day is settled."""
        nav = self.sim.net_assets
        return (
            f"The episode is over: day {self.sim.horizon_days} was the last day and has been settled "
            f"(final net assets {nav:,.2f} {self.world.economics.currency}). No tool can be used any more."
        )

    # ------------------------------------------------------------------ what the agent reads

    def tools(self) -> list[dict[str, Any]]:
        """The 18 tools: name, kind (remote, physical, memory), description and input JSON schema."""
        return tool_listing(self._facts, self.ctx.memory_limit)

    def report(self) -> dict[str, Any]:
        """The daily observation JSON of the current day (Appendix A.2 structure)."""
        with self.lock:
            return build_observation(self.sim, self.ctx.views)

    def observation(self, report: dict[str, Any] | None = None) -> Observation:
        """The current day's `Observation` (the report, its date and the daily prompt).

        `report`: the current day's report when the caller already has it (end_day's result carries it).
        """
        sim = self.sim
        report = self.report() if report is None else report
        info = sim.today
        prompt = self.over_message() if sim.done else daily_prompt(info, sim.horizon_days, report)
        return Observation(
            day=sim.day,
            horizon_days=sim.horizon_days,
            date=info.date,
            weekday=info.weekday,
            is_workday=info.is_workday,
            done=sim.done,
            report=report,
            prompt=prompt,
        )

    def system_prompt(self) -> str:
        """The fixed system prompt of this world."""
        return system_prompt(self.world)

    def daily_prompt(self) -> str:
        """Today's user prompt (header, observation, reminder); after the episode, a closing line."""
        if self.sim.done:
            return self.over_message()
        return daily_prompt(self.sim.today, self.sim.horizon_days, self.report())

    def rules(self) -> Rules:
        """The published operating rules of the world."""
        return Rules.of(self.world)

    # ------------------------------------------------------------------ state

    @property
    def notebook(self) -> str:
        """The agent's notebook (changed only through write_memory)."""
        return self.ctx.notebook

    @property
    def settled_days(self) -> int:
        """Days settled so far."""
        return len(self.sim.reports)

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
        with self.lock, tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            sim_path = self.sim.save(Path(tmp) / "sim.ckpt")
            payload = {
                "format": SESSION_FORMAT,
                "version": SESSION_VERSION,
                "sim": sim_path.read_bytes(),
                "notebook": self.notebook,
                "counters": self.counters,
                "sql_time_limit_s": self.ctx.sql.time_limit_s,
            }
            write_pickle(path, payload)
        return path

    @classmethod
    def load(cls, path: str | Path, world: World, trajectory_path: str | Path | None = None) -> Episode:
        """Restore an episode saved by `save` on the same `world`; calls append to `trajectory_path`."""
        path = Path(path)
        payload = read_payload(
            path, fmt=SESSION_FORMAT, version=SESSION_VERSION, what="tool-session checkpoint (see Episode.save)"
        )
        with tempfile.TemporaryDirectory() as tmp:
            sim_path = Path(tmp) / "sim.ckpt"
            sim_path.write_bytes(payload["sim"])
            sim = Simulator.load(sim_path, world)
        notebook = str(payload["notebook"])
        if not notebook.isascii():  # AutoVend before the input guard saved lone surrogates, which no page can show
            safe = notebook.encode("utf-8", "replace").decode("utf-8")
            if safe != notebook:
                log.warning("%s: the notebook held lone UTF-16 surrogates; they are loaded as '?'", path)
                notebook = safe
        return cls(sim, notebook, trajectory_path, payload["sql_time_limit_s"], payload["counters"])

    def close(self) -> None:
        """Close the trajectory file and the SQL sandbox."""
        self._writer.close()
        self.ctx.sql.close()
