"""The replay of a run's calls, line by line against trajectory.jsonl, and the lockstep run of a shipped agent.

The replay session writes its own trajectory; after each call its new line is compared with the recorded one.
The lines must be equal as text, but for what no replay can re-derive: `wall_ms` (a clock) and a query's
`elapsed_ms`. When the text differs the recorded line is read by the JSON guard (no key twice, no NaN) and
compared field by field with the replayed one (numbers to 1e-9 relative: another CPU may differ in the last
digits), then must be written exactly as AutoVend writes a line. Every field counts: seq, day, tool, arguments,
ok, result and the error text of a refused call (taken from the recorded line, never from its result).

A refused call whose arguments were too large to record (the line holds a note instead) cannot be replayed as
it was: its seq, day, tool and note are compared, and its `ok: false`, result and error text, which follow from
the note, are derived from it.

For a run of a shipped agent that draws its actions from nothing but the tools' answers (`LOCKSTEP`: the
baseline, the oracle, hold), the agent itself is run again, built from run.json's `agent_config` and the run's
seed, and each call it makes must be the next recorded call: an oracle run relabelled as the baseline, a
trajectory with a call removed and the rest renumbered, or a baseline run with another config fails there.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from autovend.agents.harness import HarnessSession, agent_step
from autovend.evaluation.runsave import RUN_FILE, TRAJECTORY_FILE
from autovend.evaluation.verify.diff import Difference, first_difference, same, show
from autovend.evaluation.verify.folder import NOT_RECORDED, Line
from autovend.tools.guard import InputError, loads
from autovend.tools.result import ToolResult
from autovend.tools.trajectory import dumps
from autovend.world.model import World

_ELAPSED = re.compile(r'^,"elapsed_ms":(0|[1-9]\d*)(\.\d+)?(e[+-]?\d+)?$')
_CANONICAL = "the values are those of the replay, but the line is not written as AutoVend writes one"


class Diverged(BaseException):  # noqa: N818 - BaseException: an agent's `except Exception` cannot swallow it
    """The replay left the recorded run: carries the first `Difference`."""

    def __init__(self, difference: Difference) -> None:
        super().__init__(difference.message())
        self.difference = difference


def _head(text: str, tool: str) -> str | None:
    """The line without what a replay cannot re-derive (wall_ms; a query's elapsed_ms); None if not as written."""
    head = text[: text.rfind(',"wall_ms":')]
    if tool != "query_sql":
        return head
    i = head.rfind(',"elapsed_ms":')
    if i < 0:
        return head
    j = head.find("}", i)
    if j < 0 or not _ELAPSED.match(head[i:j]):
        return None
    return head[:i] + head[j:]


def _comparable(rec: dict[str, Any], tool: str) -> dict[str, Any]:
    out = {k: v for k, v in rec.items() if k != "wall_ms"}
    result = out.get("result")
    if tool == "query_sql" and isinstance(result, dict):
        out["result"] = {k: v for k, v in result.items() if k != "elapsed_ms"}
    return out


def _written(rec: dict[str, Any], text: str) -> bool:
    """Whether `text` is `rec` written as the trajectory writer writes it (a lone surrogate as its escape)."""
    again = dumps(rec)
    return again == text or again.encode("utf-8", "backslashreplace").decode("utf-8") == text


class Checker:
    """Compares the replay's trajectory lines with the recorded ones, one call at a time (module docstring)."""

    def __init__(self, lines: list[Line], replayed: Path) -> None:
        self.lines = lines
        self.index = 0  # the next recorded line to compare
        self.counts: Counter[str] = Counter()  # "unrecorded", "tolerance"
        self.first: Difference | None = None
        self._reader = replayed.open(encoding="utf-8")
        self.header = self._reader.readline().rstrip("\n")
        self.agent: str | None = None  # in lockstep: the agent whose calls must be the recorded ones

    def close(self) -> None:
        """Close the replayed trajectory."""
        self._reader.close()

    def _fail(self, difference: Difference) -> Diverged:
        if self.first is None:
            self.first = difference
        return Diverged(self.first)

    def expect(self, name: Any, arguments: Any) -> None:
        """In lockstep: the agent's next call must be the next recorded one."""
        if self.index < len(self.lines):
            line = self.lines[self.index]
            if name == line.tool and line.rec["arguments"] == arguments:
                return  # the line the call writes is compared as text next (`after`)
        got = f"{name} {show(arguments)}"
        if self.index >= len(self.lines):
            last = self.lines[-1].number if self.lines else 1
            why = f"the trajectory ends here, but the {self.agent} agent makes another call: {got}"
            raise self._fail(Difference(TRAJECTORY_FILE, "the call", None, got, line=last + 1, why=why))
        try:
            mine = json.loads(dumps(arguments if arguments is not None else {}))
        except ValueError:
            mine = repr(arguments)
        if name != line.tool or first_difference(line.rec["arguments"], mine) is not None:
            want = f"{line.tool} {show(line.rec['arguments'])}"
            why = f"recorded {want}, but the {self.agent} agent calls {got} here (its actions are not these)"
            diff = Difference(
                TRAJECTORY_FILE, "the call", want, got, line.day, line.seq, line.tool, line.number, why=why
            )
            raise self._fail(diff)

    def after(self) -> None:
        """Compare the line the replay just wrote with the next recorded one."""
        text = self._reader.readline()
        if self.index >= len(self.lines):
            raise self._fail(Difference(TRAJECTORY_FILE, "the call", None, text[:80], why="a call beyond the record"))
        line = self.lines[self.index]
        self.index += 1
        diff = self.compare(line, text.rstrip("\n"))
        if diff is not None:
            raise self._fail(diff)

    def compare(self, line: Line, text: str) -> Difference | None:
        """The first difference between a recorded line and the replayed one (module docstring), or None."""
        at = {"day": line.rec["day"], "call": line.seq, "tool": line.tool, "line": line.number}
        if line.unrecorded:
            return self._unrecorded(line, json.loads(text), at)
        mine = _head(line.text, line.tool)
        if mine is not None and mine == _head(text, line.tool):
            return None
        try:
            rec = loads(line.text, "the line", max_chars=len(line.text) + 1,
                        max_text_chars=len(line.text) + 1)  # fmt: skip
        except InputError as exc:
            return Difference(TRAJECTORY_FILE, "JSON", None, None, **at, why=str(exc))
        found = first_difference(_comparable(rec, line.tool), _comparable(json.loads(text), line.tool))
        if found is not None:
            return Difference(TRAJECTORY_FILE, found[0], found[1], found[2], **at)
        if not _written(rec, line.text):
            return Difference(TRAJECTORY_FILE, "text", None, None, **at, why=_CANONICAL)
        self.counts["tolerance"] += 1
        return None

    def _unrecorded(self, line: Line, again: dict[str, Any], at: dict[str, Any]) -> Difference | None:
        """A refusal whose arguments the line holds as a note: the note says why, so its error text follows from it."""
        rec = line.rec
        for key in ("seq", "day", "tool", "arguments"):
            if not same(rec[key], again[key]):
                return Difference(TRAJECTORY_FILE, key, rec[key], again[key], **at)
        note = str(rec["arguments"])
        error = f"{line.tool}: refused, nothing was done: {note[len(NOT_RECORDED) + 2 : -1]}"  # autovend.env.episode
        want = {"ok": False, "result": {"error": error}, "error": error}
        found = first_difference({k: rec[k] for k in want}, want)
        if found is not None:
            why = f"recorded {show(found[1])}; a call refused for arguments too large to record gives {show(found[2])}"
            return Difference(TRAJECTORY_FILE, found[0], found[1], found[2], **at, why=why)
        self.counts["unrecorded"] += 1
        return None


class CheckedSession(HarnessSession):
    """The replay's session: every call is checked against the record (`Checker`) as it is made."""

    checker: Checker

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run the call, then compare its line; in lockstep, first check it is the recorded one."""
        if self.checker.agent is not None:
            self.checker.expect(name, arguments)
        result = super().call(name, arguments)
        self.checker.after()
        return result


def replay_calls(session: CheckedSession) -> Difference | None:
    """Make the recorded calls in order on the replay session; the first difference, or None."""
    checker = session.checker
    try:
        for line in checker.lines:
            session.call(line.called, line.rec["arguments"])
    except Diverged as d:
        return d.difference
    return checker.first


def replay_agent(session: CheckedSession, agent: Any, entry_point: str) -> Difference | None:
    """Run the shipped agent on the replay session; each of its calls must be the next recorded one."""
    checker = session.checker
    checker.agent = entry_point
    try:
        agent_step(agent, session, "start")
        while checker.index < len(checker.lines) and not session.done:
            agent_step(agent, session, "act_day")
    except Diverged as d:
        return d.difference
    except Exception as exc:  # noqa: BLE001 - any failure of the agent (AgentError included) is a difference here
        line = checker.lines[min(checker.index, len(checker.lines) - 1)] if checker.lines else None
        why = f"the {entry_point} agent could not act as recorded: {type(exc).__name__}: {exc}"
        return Difference(TRAJECTORY_FILE, "the agent", None, None, line=line.number if line else None, why=why)
    if checker.first is not None:
        return checker.first
    if checker.index < len(checker.lines):
        line = checker.lines[checker.index]
        why = f"the {entry_point} agent ends the run before this call, but the trajectory goes on ({line.tool})"
        return Difference(TRAJECTORY_FILE, "the call", line.tool, None, line.day, line.seq, line.tool, line.number,
                          why=why)  # fmt: skip
    return None


# ------------------------------------------------------------------------------------------------ shipped agents


def _config_problem(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "agent_config"
        return f"agent_config.{where}: {first.get('msg')}"
    return str(exc)


def _baseline(config: dict[str, Any], seed: int, world: World) -> Any:
    from autovend.agents.baseline import BaselineAgent
    from autovend.agents.baseline.config import BaselineConfig

    return BaselineAgent(BaselineConfig.model_validate(config), seed=seed)


def _oracle(config: dict[str, Any], seed: int, world: World) -> Any:
    from autovend.agents.identity import grant_hidden
    from autovend.agents.oracle import OracleAgent

    if config:
        raise ValueError("the oracle takes no settings: agent_config must be {}")
    agent = OracleAgent(seed=seed)
    grant_hidden(agent, world)
    return agent


def _hold(config: dict[str, Any], seed: int, world: World) -> Any:
    from autovend.agents.hold import HoldAgent

    if config:
        raise ValueError("hold takes no settings: agent_config must be {}")
    return HoldAgent(seed=seed)


def lockstep_agents() -> dict[str, Callable[[dict[str, Any], int, World], Any]]:
    """Entry point -> how verify builds that shipped agent from run.json (`agent_config`, seed) and the world."""
    from autovend.agents.identity import BASELINE_ENTRY_POINT, HOLD_ENTRY_POINT, ORACLE_ENTRY_POINT

    return {BASELINE_ENTRY_POINT: _baseline, ORACLE_ENTRY_POINT: _oracle, HOLD_ENTRY_POINT: _hold}


def build_agent(meta: dict[str, Any], world: World) -> tuple[Any, Difference | None]:
    """The shipped agent run.json names (None for any other agent), or the difference that stops it being built."""
    make = lockstep_agents().get(str(meta["agent_entry_point"]))
    if make is None:
        return None, None
    try:
        return make(dict(meta["agent_config"]), int(meta["seed"]), world), None
    except (ValueError, TypeError) as exc:
        why = f"cannot build {meta['agent_entry_point']} from it: {_config_problem(exc)}"
        return None, Difference(RUN_FILE, "agent_config", None, None, why=why)
