"""Reading a run folder for `autovend verify` as untrusted input: run.json's keys and types, the trajectory's lines.

Nothing here trusts the folder: run.json is read by the JSON guard of every door (`autovend.tools.guard.loads`:
no key twice, no NaN, ...) and each key it must hold is checked for its type; every line of trajectory.jsonl must
be one JSON object of the writer's keys in the writer's order, its `seq` counting 1, 2, 3, ... with no gap or
repetition. Problems of the folder's content raise `Tampered` (verify reports them as the first difference);
a folder that is no finished run at all raises `RunFolderError`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autovend.errors import RunFolderError
from autovend.evaluation.runsave import RUN_FILE, RUN_FORMAT, RUN_VERSION, TRAJECTORY_FILE
from autovend.evaluation.verify.diff import Difference, Tampered, is_number
from autovend.tools.guard import MAX_TEXT_CHARS, InputError, loads

CALL_KEYS = ("kind", "seq", "day", "tool", "arguments", "ok", "result", "error", "wall_ms")  # the writer's order
HEADER_KEYS = ("kind", "autovend_version", "world", "seed", "horizon_days", "day")
NOT_RECORDED = "<not recorded"  # how the trajectory notes arguments it could not hold (autovend.env.episode)
_WALL_TAIL = re.compile(r'^,"wall_ms":(0|[1-9]\d*)(\.\d+)?(e[+-]?\d+)?\}$')
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# an unknown tool's name over MAX_TOOL_NAME_RECORDED characters, as the trajectory keeps it (tools.schemas.clip)
_CLIPPED = re.compile(r"^(.{200})\.\.\. \(([\d,]{3,9}) characters\)$", re.DOTALL)


@dataclass(frozen=True)
class Line:
    """One call line of trajectory.jsonl: its number in the file, its text (no newline) and its values."""

    number: int
    text: str
    rec: dict[str, Any]

    @property
    def seq(self) -> int:
        """The call's seq (1, 2, ... in a valid trajectory)."""
        return int(self.rec["seq"])

    @property
    def tool(self) -> str:
        """The tool's name as recorded."""
        return str(self.rec["tool"])

    @property
    def day(self) -> int:
        """The day the call was made on."""
        return int(self.rec["day"])

    @property
    def called(self) -> str:
        """The tool name to call again (an unknown name too long to record: its kept start, padded to its length).

        The trajectory keeps such a name as its first 200 characters and its length; the tools answer any name of
        that beginning and length alike, so the replay writes the same line.
        """
        found = _CLIPPED.match(self.tool)
        if found is None:
            return self.tool
        return found.group(1) + "?" * (int(found.group(2).replace(",", "")) - len(found.group(1)))

    @property
    def unrecorded(self) -> bool:
        """Arguments too large (or deep) to record: the trajectory holds a note, and the refusal's text is lost."""
        args = self.rec.get("arguments")
        return isinstance(args, str) and args.startswith(NOT_RECORDED)


def _bad(key: str, value: Any, want: str) -> Tampered:
    return Tampered(Difference(RUN_FILE, key, value, want, why=f"{_short(value)} is not {want}"))


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr) if value is not None else "null"
    return text if len(text) <= 80 else text[:80] + "…"


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _finite(x: Any) -> bool:
    return is_number(x) and math.isfinite(x)


# run.json: key -> (test, what it must be, required)
_META_RULES: dict[str, tuple[Any, str, bool]] = {
    "version": (lambda v: v == RUN_VERSION, f"run format version {RUN_VERSION}", True),
    "seed": (_is_int, "an integer", True),
    "days": (lambda v: _is_int(v) and v >= 0, "a whole number of days", True),
    "horizon_days": (lambda v: _is_int(v) and v >= 1, "a whole number of days", True),
    "world_name": (lambda v: isinstance(v, str) and v != "", "a world's name", True),
    "world_hash": (lambda v: isinstance(v, str) and bool(_HEX64.match(v)), "a world hash (64 hex digits)", True),
    "world_path": (lambda v: v is None or isinstance(v, str), "a path or null", False),
    "agent": (lambda v: isinstance(v, str) and v != "", "an agent's name", True),
    "agent_config": (lambda v: isinstance(v, dict), "an object (the agent's settings)", True),
    "agent_entry_point": (lambda v: isinstance(v, str) and v != "", "the agent's entry point (module:Class)", True),
    "privileged": (lambda v: isinstance(v, bool), "true or false", False),
    "evaluated": (lambda v: isinstance(v, bool), "true or false", False),
    "done": (lambda v: isinstance(v, bool), "true or false", True),
    "start_cash": (_finite, "a finite number", True),
    "final_cash": (_finite, "a finite number", True),
    "final_net_assets": (_finite, "a finite number", True),
    "code_version": (lambda v: isinstance(v, str), "a version string", True),
    "token_usage": (lambda v: isinstance(v, dict), "an object of token counts", True),
    "api_cost_usd": (lambda v: v is None or (_finite(v) and v >= 0), "null or a cost of 0 or more", True),
    "wall_time_s": (lambda v: _finite(v) and v >= 0, "a time of 0 seconds or more", True),
    "resumed_from_day": (lambda v: v is None or (_is_int(v) and v >= 0), "null or a day", False),
    "days_requested": (lambda v: v is None or (_is_int(v) and v >= 1), "null or a number of days", False),
    "tool_calls": (lambda v: isinstance(v, dict), "an object of call counts", True),
}


def read_meta(run_dir: Path) -> dict[str, Any]:
    """run.json of a finished run, read by the JSON guard; RunFolderError for no finished run, Tampered for bad keys."""
    path = run_dir / RUN_FILE
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir} is not a folder; give a run folder written by autovend")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunFolderError(f"{run_dir} has no readable {RUN_FILE}; give a run folder written by autovend") from exc
    try:
        meta = loads(data, "the text", max_chars=MAX_TEXT_CHARS)
    except InputError as exc:
        raise Tampered(Difference(RUN_FILE, "JSON", None, None, why=str(exc))) from None
    if not isinstance(meta, dict):
        raise Tampered(Difference(RUN_FILE, "JSON", None, None, why=f"a JSON {type(meta).__name__}, not an object"))
    if meta.get("format") != RUN_FORMAT:
        raise RunFolderError(f"{path} is not an AutoVend run description (format {_short(meta.get('format'))})")
    if meta.get("finished") is not True:
        raise RunFolderError(f"{run_dir} holds an unfinished run; finish it (--resume) before verifying it")
    for key, (test, want, required) in _META_RULES.items():
        if key not in meta:
            if required:
                raise Tampered(Difference(RUN_FILE, key, "<absent>", want, why=f"missing (it must be {want})"))
            continue
        if not test(meta[key]):
            raise _bad(key, meta[key], want)
    counts = meta["tool_calls"]
    by_tool = counts.get("by_tool")
    if not _is_int(counts.get("seq")) or not _is_int(counts.get("errors")) or not isinstance(by_tool, dict):
        raise _bad("tool_calls", counts, "an object with seq, errors (integers) and by_tool")
    if not all(_is_int(v) for v in by_tool.values()):
        raise _bad("tool_calls.by_tool", by_tool, "an object of integer counts")
    return meta


def read_trajectory(run_dir: Path) -> tuple[str, list[Line]]:
    """The header line and the call lines of trajectory.jsonl, each checked (module docstring)."""
    path = run_dir / TRAJECTORY_FILE
    if not path.is_file():
        raise Tampered(Difference(TRAJECTORY_FILE, "file", "<missing>", "<the calls of the run>", why="missing"))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Tampered(
            Difference(TRAJECTORY_FILE, "file", None, None, why=f"cannot be read as UTF-8 text ({exc})")
        ) from None
    if not text.endswith("\n"):
        raise Tampered(Difference(TRAJECTORY_FILE, "file", None, None, line=text.count("\n") + 1, why=_CUT))
    raw = text.split("\n")[:-1]
    if not raw:
        raise Tampered(Difference(TRAJECTORY_FILE, "file", None, None, why="empty: it holds no header line"))
    header = _header(raw[0])
    lines = [_call(n, t, n - 1) for n, t in enumerate(raw[1:], 2)]
    return header, lines


_CUT = "the last line is cut short (no newline at its end): a finished run's trajectory ends with a whole line"


def json_object(number: int, text: str) -> dict[str, Any]:
    """The JSON object on line `number` of trajectory.jsonl (Tampered for invalid JSON or another JSON value)."""
    try:
        rec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Tampered(
            Difference(TRAJECTORY_FILE, "JSON", None, None, line=number, why=f"not valid JSON ({exc})")
        ) from None
    if not isinstance(rec, dict):
        why = f"a JSON {type(rec).__name__}, not an object (each line of a trajectory is one JSON object)"
        raise Tampered(Difference(TRAJECTORY_FILE, "JSON", None, None, line=number, why=why))
    return rec


def _header(text: str) -> str:
    rec = json_object(1, text)
    if tuple(rec) != HEADER_KEYS or rec["kind"] != "start":
        want = ", ".join(HEADER_KEYS)
        raise Tampered(
            Difference(TRAJECTORY_FILE, "header", list(rec), list(HEADER_KEYS), line=1, why=f"not a header ({want})")
        )
    return text


def _call(number: int, text: str, want_seq: int) -> Line:
    rec = json_object(number, text)
    keys = tuple(rec)
    if keys != CALL_KEYS or rec["kind"] != "call":
        why = f'its keys are {", ".join(map(str, keys))}; a call line has {", ".join(CALL_KEYS)} (kind "call")'
        raise Tampered(Difference(TRAJECTORY_FILE, "keys", list(keys), list(CALL_KEYS), line=number, why=why))
    seq = rec["seq"]
    if not _is_int(seq) or seq != want_seq:
        what = "a repetition" if _is_int(seq) and seq < want_seq else "a gap"
        why = f"recorded {_short(seq)}, expected {want_seq} (calls are numbered 1, 2, 3, ...: {what})"
        raise Tampered(Difference(TRAJECTORY_FILE, "seq", seq, want_seq, line=number, why=why))
    checks = (
        ("day", _is_int(rec["day"]) and rec["day"] >= 1, "a day"),
        ("tool", isinstance(rec["tool"], str), "a tool's name"),
        ("ok", isinstance(rec["ok"], bool), "true or false"),
        ("error", rec["error"] is None or isinstance(rec["error"], str), "null or a message"),
        ("wall_ms", _finite(rec["wall_ms"]) and rec["wall_ms"] >= 0, "a time of 0 ms or more"),
    )
    for key, good, want in checks:
        if not good:
            raise Tampered(Difference(TRAJECTORY_FILE, key, rec[key], want, line=number, call=seq, why=f"not {want}"))
    tail = text[text.rfind(',"wall_ms":') :]
    if not _WALL_TAIL.match(tail):
        why = "the line does not end as AutoVend writes it (the wall time, then the end of the object)"
        raise Tampered(Difference(TRAJECTORY_FILE, "wall_ms", tail, None, line=number, call=seq, why=why))
    return Line(number, text, rec)
