"""`LLMAgent`: a language model operating the network through the 18 tools (the paper's daily loop).

    agent = build_llm_agent("openai:gpt-4.1-mini", seed=1)                # hosted (OPENAI_API_KEY)
    agent = build_llm_agent("openai:qwen2.5:7b", base_url="http://127.0.0.1:11434/v1")   # Ollama
    run_episode(world, agent, seed=1, days=180, out_dir="runs/gpt-s1")   # the runner drives it

Each day: the daily prompt is added to the conversation, then the model answers with tool calls
until it calls `end_day`. Every tool call runs on the session (or over MCP) and its result goes
back as a `tool` message; a malformed call (arguments that are not JSON, an unknown tool, wrong
parameters) gets an error result the model can read, never a crash. Per-day caps on model turns
and tool calls (and on replies without any tool call) end the day through the harness, which
records it and tells the model at the top of the next day's prompt. The conversation continues
across days; when it passes the context budget the oldest turn groups are evicted
(`context.Conversation`), the notebook stays. Token usage is summed per request and priced with
the shipped `prices.yaml` (`pricing.DEFAULT_PRICES`); everything the model saw and did goes to
`llm.jsonl` (`transcript`).

Resume: `state_dict()` after a day holds the conversation, usage, counters, the retry generator
and the transcript offset; `load_state` restores them without calling the model or a tool, and
the first `act_day` cuts the transcript back to that offset (the records of the unfinished day
are moved to `llm.discarded.jsonl`; their tokens still count towards the API cost).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autovend.agents.llm.client import ChatClient, Completion, ContextOverflowError, Usage
from autovend.agents.llm.config import LLMConfig
from autovend.agents.llm.context import ASSISTANT, NUDGE, PROMPT, SYSTEM, TOOL, CompactionEvent, Conversation
from autovend.agents.llm.pricing import PriceTable, load_price_table
from autovend.agents.llm.toolcalls import (
    ToolBackend,
    error_text,
    openai_tools,
    parse_arguments,
    result_text,
    sanitized_arguments,
)
from autovend.agents.llm.transcript import LLM_LOG_FILE, Transcript, read_transcript
from autovend.errors import ConfigError, LLMError
from autovend.tools.trajectory import dumps

if TYPE_CHECKING:
    from autovend.agents.llm.mcp_bridge import MCPBridge
    from autovend.session import ToolSession

STATE_FORMAT = "autovend-llm-agent"
STATE_VERSION = 1
DISCARDED_LOG_FILE = "llm.discarded.jsonl"
SPEC_PREFIX = "openai:"
NUDGE_TEXT = (
    "[Harness note] Your reply called no tool. Keep working through the tools, and call end_day when "
    "today's work is done."
)


def parse_spec(spec: str) -> str:
    """The model name of an agent spec 'openai:MODEL' (the model may itself contain ':', e.g. qwen2.5:7b)."""
    if not spec.startswith(SPEC_PREFIX) or not spec[len(SPEC_PREFIX) :].strip():
        raise ConfigError(
            f"an LLM agent is given as openai:MODEL (e.g. openai:gpt-4.1-mini or openai:qwen2.5:7b), got {spec!r}"
        )
    return spec[len(SPEC_PREFIX) :].strip()


@dataclass
class _Day:
    """What one day has used so far and how it ended."""

    day: int
    turns: int = 0
    calls: int = 0
    idle: int = 0
    malformed: int = 0
    refused: int = 0  # calls a tool ran and refused (invalid parameters, unknown tool, ...)
    ended: bool = False  # the model's end_day succeeded
    reason: str = ""  # why the harness ends the day (empty while it does not)
    usage: Usage = field(default_factory=Usage)

    def summary(self) -> dict[str, Any]:
        """The day's record: who ended it and why, turns, tool calls, usage."""
        return {
            "day": self.day,
            "by": "agent" if self.ended else "harness",
            "reason": self.reason or None,
            "turns": self.turns,
            "tool_calls": self.calls,
            "malformed_tool_calls": self.malformed,
            "refused_tool_calls": self.refused,
            "usage": self.usage.to_dict(),
        }


class LLMAgent:
    """A chat model with tools, run by the harness (see the module docstring)."""

    def __init__(
        self,
        model: str,
        client: ChatClient,
        *,
        config: LLMConfig | None = None,
        prices: PriceTable | None = None,
        log_path: str | Path | None = None,
        bridge: MCPBridge | None = None,
    ) -> None:
        self.model = model
        self.name = SPEC_PREFIX + model
        self.config = config or LLMConfig()
        self._client = client
        self._client.on_retry = self._on_retry
        table = prices if prices is not None else load_price_table()
        self._price = table.price(model)
        self._prices_as_of = table.as_of
        self._log_path = None if log_path is None else Path(log_path)
        self._bridge = bridge
        self._conv = Conversation(tokens_per_char=1.0 / self.config.chars_per_token)
        self._tools: list[dict[str, Any]] | None = None
        self._usage = Usage()
        self._discarded = Usage()
        self._counters: dict[str, int] = {
            "turns": 0,
            "tool_calls": 0,
            "malformed_tool_calls": 0,
            "refused_tool_calls": 0,
            "nudges": 0,
            "retries": 0,
            "compactions": 0,
            "context_overflows": 0,
            "days_closed_by_harness": 0,
        }
        self._days: list[dict[str, Any]] = []
        self._pending_note: str | None = None
        self._log: Transcript | None = None
        self._resume_offset: int | None = None
        self._day = 0

    # ------------------------------------------------------------------ protocol

    def start(self, session: ToolSession | ToolBackend) -> None:
        """Set up a fresh episode: the system prompt and tool definitions (no tool call, no model call)."""
        self._attach(session)

    def act_day(self, session: ToolSession | ToolBackend) -> None:
        """Play the current day: the daily prompt, model turns with tool calls, until the day is ended."""
        backend = self._attach(session)
        day = backend.day
        self._day = day
        prompt = self._day_prompt(backend)
        if self._pending_note:
            prompt = self._pending_note + "\n\n" + prompt
            self._pending_note = None
        self._add({"role": "user", "content": prompt}, PROMPT)
        today = _Day(day)
        while not today.ended and not today.reason:
            self._turn(backend, today)
        settled = None if today.ended else self._end_by_harness(backend, today)
        self._counters["tool_calls"] += today.calls
        summary = today.summary()
        self._days.append(summary)
        self._write("day_closed", **{k: v for k, v in summary.items() if k != "day"}, settled=settled)

    def _day_prompt(self, backend: ToolBackend) -> str:
        """The day's user prompt (an intervention adds to it: `autovend.agents.llm.interventions`)."""
        return backend.daily_prompt()

    def _system(self, backend: ToolBackend) -> str:
        """The system prompt (an intervention adds to it)."""
        return backend.system_prompt()

    def _turn(self, backend: ToolBackend, today: _Day) -> None:
        """One model request and its tool calls; sets `today.ended` or `today.reason` when the day is over."""
        c = self.config
        if today.turns >= c.max_turns_per_day:
            today.reason = f"the cap of {c.max_turns_per_day} model turns per day was reached"
            return
        event = self._conv.compact(c.context_budget_tokens, c.evict_tokens, c.keep_last_groups, today.day)
        if event is not None:
            self._counters["compactions"] += 1
            self._write("compaction", **_event_fields(event))
        estimate = self._conv.estimate()
        reply = self._complete(today.day, today.turns + 1)
        today.turns += 1
        self._counters["turns"] += 1
        self._usage.add(reply.usage)
        today.usage.add(reply.usage)
        message = reply.message
        parsed = []
        for tc in message.get("tool_calls") or ():
            name = tc["function"]["name"]
            args, error = parse_arguments(name, tc["function"]["arguments"])
            if error is not None:  # keep valid JSON in the conversation: servers re-read old calls
                tc["function"]["arguments"] = sanitized_arguments(tc["function"]["arguments"])
            parsed.append((tc, name, args, error))
        sent = len(self._conv.messages)
        self._conv.append(message, today.day, ASSISTANT)
        self._conv.record_usage(reply.usage.input_tokens, reply.usage.output_tokens, sent)
        self._write(
            "response",
            turn=today.turns,
            message=message,
            reasoning=reply.reasoning,
            finish_reason=reply.finish_reason,
            usage=reply.usage.to_dict(),
            context_tokens=estimate,
            attempts=reply.attempts,
            latency_ms=round(reply.latency_s * 1000.0, 1),
        )
        if not parsed:
            today.idle += 1
            if today.idle > c.max_idle_turns:
                today.reason = f"{today.idle} replies in a row called no tool"
            else:
                self._counters["nudges"] += 1
                self._add({"role": "user", "content": NUDGE_TEXT}, NUDGE)
            return
        today.idle = 0
        for tc, name, args, error in parsed:
            text, ok = self._answer(backend, today, name, args, error)
            self._add({"role": "tool", "tool_call_id": tc["id"], "content": text}, TOOL, tool=name, ok=ok,
                      malformed=error is not None)  # fmt: skip
        if not today.ended and today.calls >= c.max_tool_calls_per_day:
            today.reason = f"the cap of {c.max_tool_calls_per_day} tool calls per day was reached"

    def _answer(self, backend: ToolBackend, today: _Day, name: str, args: Any, error: str | None) -> tuple[str, bool]:
        """The result text of one tool call of a reply (and whether it succeeded); runs it if it may run."""
        cap = self.config.max_tool_calls_per_day
        if today.ended:
            return error_text(f"{name}: not run, because end_day earlier in the same reply already closed day "
                              f"{today.day}"), False  # fmt: skip
        if today.calls >= cap:
            return error_text(f"{name}: not run, because the cap of {cap} tool calls per day is reached; the harness "
                              "ends the day"), False  # fmt: skip
        today.calls += 1
        if error is not None:
            today.malformed += 1
            self._counters["malformed_tool_calls"] += 1
            return error_text(error), False
        result = backend.call(name, args)
        if not result.ok:
            today.refused += 1
            self._counters["refused_tool_calls"] += 1
        today.ended = name == "end_day" and result.ok
        return result_text(name, result, self.config.max_tool_result_chars, next_report=not backend.done), result.ok

    def _end_by_harness(self, backend: ToolBackend, today: _Day) -> dict[str, Any] | None:
        """End the day with the harness's own end_day; the model hears of it in the next day's prompt."""
        result = backend.call("end_day", {})
        if not result.ok:
            raise LLMError(f"the harness could not end day {today.day}: {result.error}")
        settled = result.content.get("settled")
        self._counters["days_closed_by_harness"] += 1
        if not backend.done:
            self._pending_note = (
                f"[Harness note] Day {today.day} was ended by the harness, not by you: {today.reason}. "
                f"Its settlement: {dumps(settled)}"
            )
        return settled

    def state_dict(self) -> dict[str, Any]:
        """The conversation, usage, counters, retry generator and transcript offset (JSON-ready)."""
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "model": self.model,
            "conversation": self._conv.to_state(),
            "tools": self._tools,
            "usage": self._usage.to_dict(),
            "counters": dict(self._counters),
            "days": [dict(d) for d in self._days],
            "pending_note": self._pending_note,
            "rng": self._client.rng.bit_generator.state,
            "log_offset": None if self._log is None else self._log.offset,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from `state_dict()` (no model or tool call; the transcript is cut on the next act_day)."""
        if state.get("format") != STATE_FORMAT or state.get("version") != STATE_VERSION:
            raise ConfigError(
                f"the checkpoint holds no LLM agent state of version {STATE_VERSION} "
                f"(format {state.get('format')!r}, version {state.get('version')!r}); start the run afresh"
            )
        if state.get("model") != self.model:
            raise ConfigError(
                f"the run was made with model {state.get('model')!r}, not {self.model!r}; resume it with "
                f"--agent openai:{state.get('model')}"
            )
        self._conv = Conversation.from_state(state["conversation"])
        self._tools = state.get("tools")
        self._usage = Usage.from_dict(state.get("usage"))
        self._counters.update({k: int(v) for k, v in state.get("counters", {}).items()})
        self._days = [dict(d) for d in state.get("days", [])]
        self._pending_note = state.get("pending_note")
        self._client.rng.bit_generator.state = state["rng"]
        self._resume_offset = state.get("log_offset")
        if self._log is not None:
            self._log.close()
            self._log = None

    # ------------------------------------------------------------------ accounting

    def usage(self) -> dict[str, Any]:
        """What run.json records: the token counts (`token_usage`), their cost (`api_cost_usd`), the harness's counters.

        Counts: requests, input_tokens, cached_tokens, output_tokens, reasoning_tokens, unreported
        (everything paid for, replayed days included), `discarded` (the part from days replayed after
        a resume); then the model, base URL and prices used, the harness counters and the MCP target.
        The runner moves `api_cost_usd` to the top of run.json and keeps the rest as `token_usage`.
        """
        total = self._usage.plus(self._discarded)
        cost = self._price.cost(total.input_tokens, total.cached_tokens, total.output_tokens)
        return {
            **total.to_dict(),
            "discarded": self._discarded.to_dict(),
            "model": self.model,
            "base_url": self._client.base_url,
            "price_entry": self._price.entry,
            "prices_as_of": self._prices_as_of,
            "price_usd_per_million": {
                "input": self._price.input,
                "cached_input": self._price.cached_input,
                "output": self._price.output,
            },
            "harness": {
                **self._counters,
                "days_ended_by_harness": [d["day"] for d in self._days if d["by"] == "harness"],
            },
            "mcp": None if self._bridge is None else self._bridge.target,
            "api_cost_usd": round(cost, 6),
        }

    @property
    def conversation(self) -> Conversation:
        """The conversation as it stands (read-only use)."""
        return self._conv

    @property
    def days(self) -> list[dict[str, Any]]:
        """One summary per played day: who ended it and why, turns, tool calls, usage."""
        return list(self._days)

    def close(self) -> None:
        """Close the transcript and the MCP connection, if any."""
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._bridge is not None:
            self._bridge.close()

    # ------------------------------------------------------------------ internals

    def _attach(self, session: Any) -> ToolBackend:
        backend: ToolBackend = session if self._bridge is None else self._bridge.bind(session)
        if self._log is None:
            self._open_log(session)
        if self._tools is None:
            self._tools = openai_tools(backend.tools())
        self._conv.tools_chars = len(dumps(self._tools))
        if not self._conv.messages:
            self._day = backend.day
            system = self._system(backend)
            self._conv.append({"role": "system", "content": system}, backend.day, SYSTEM)
            self._write(
                "start",
                model=self.model,
                base_url=self._client.base_url,
                agent=self.name,
                config=self.config.model_dump(),
                price_entry=self._price.entry,
                mcp=None if self._bridge is None else self._bridge.target,
                system_prompt=system,
                tools=self._tools,
            )
        return backend

    def _open_log(self, session: Any) -> None:
        path = self._log_path
        if path is None:
            trajectory = getattr(session, "trajectory_path", None)
            if trajectory is None:
                return
            path = Path(trajectory).parent / LLM_LOG_FILE
        fresh = self._resume_offset is None and not self._conv.messages  # a new episode: no stale records
        self._log = Transcript(path, truncate_to=self._resume_offset, fresh=fresh)
        discarded_path = path.parent / DISCARDED_LOG_FILE
        if fresh:
            discarded_path.unlink(missing_ok=True)
        if self._log.discarded:
            with discarded_path.open("a", encoding="utf-8") as fh:
                for rec in self._log.discarded:
                    fh.write(dumps(rec) + "\n")
        if discarded_path.exists():
            self._discarded = Usage()
            for rec in read_transcript(discarded_path):
                if rec.get("kind") == "response":
                    self._discarded.add(Usage.from_dict(rec.get("usage")))
        if self._resume_offset is not None:
            lost = self._log.discarded
            lost_usage = Usage()
            for rec in lost:
                if rec.get("kind") == "response":
                    lost_usage.add(Usage.from_dict(rec.get("usage")))
            days = sorted({int(r.get("day", 0)) for r in lost})
            self._write(
                "resume",
                discarded_records=len(lost),
                discarded_days=days,
                discarded_usage=lost_usage.to_dict(),
            )
        self._resume_offset = None

    def _write(self, kind: str, **fields: Any) -> None:
        if self._log is not None:
            self._log.write(kind, self._day, **fields)

    def _add(self, message: dict[str, Any], kind: str, **extra: Any) -> None:
        self._conv.append(message, self._day, kind)
        self._write("message", message=message, tag=kind, **extra)

    def _on_retry(self, info: dict[str, Any]) -> None:
        self._counters["retries"] += 1
        self._write("retry", **info)

    def _complete(self, day: int, turn: int) -> Completion:
        assert self._tools is not None
        try:
            try:
                return self._client.complete(self._conv.messages, self._tools, id_prefix=f"call_d{day}_t{turn}")
            except ContextOverflowError:
                self._counters["context_overflows"] += 1
                free = max(self._conv.estimate() // 2, self.config.evict_tokens)
                event = self._conv.evict(free, keep_last=1, day=day)
                if event is None:
                    raise
                self._counters["compactions"] += 1
                self._write("compaction", emergency=True, **_event_fields(event))
                return self._client.complete(self._conv.messages, self._tools, id_prefix=f"call_d{day}_t{turn}")
        except LLMError as exc:
            self._write("error", turn=turn, message=str(exc))
            raise


def _event_fields(event: CompactionEvent) -> dict[str, Any]:
    return {k: v for k, v in event.to_dict().items() if k != "day"}
