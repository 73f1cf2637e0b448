r"""The JSONL trajectory: one line per tool call (the raw material of the evaluation).

The first line of a file is a header ({"kind": "start", ...}: world, seed, horizon, AutoVend
version); each call then adds {"kind": "call", "seq", "day", "tool", "arguments", "ok", "result",
"error", "wall_ms"}: `day` is the day the call was made on (end_day settles that day), `result` the
JSON content returned, `wall_ms` the time spent in the tool. Lines are flushed as they are written,
so a crashed run keeps every call made before the crash. A restored session appends to its file.

Every line can be written, whatever a caller sent: a value JSON cannot hold is written as text (`dumps`), and a
lone UTF-16 surrogate in a string (only a refused call's arguments can hold one: `autovend.tools.guard`) is
written as its JSON escape (`\ud800`), which reads back as the same string.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import IO, Any

from autovend import __version__

MAX_RECORDED_DEPTH = 64  # objects and arrays nested deeper are written as a note
_MAX_INT_BITS = 13_000  # about 3,900 digits: Python writes at most 4,300 (sys.get_int_max_str_digits)


def dumps(obj: Any) -> str:
    """Compact, valid JSON (UTF-8 text kept as is); values JSON cannot hold are written as text.

    Non-finite floats become "nan"/"inf" strings, numpy scalars their Python value, an integer of
    thousands of digits or a value nested over `MAX_RECORDED_DEPTH` levels a note saying so, anything
    else its repr: a log line can always be written, whatever a caller passed in.
    """
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(_jsonable(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _jsonable(x: Any, depth: int = 0) -> Any:
    if isinstance(x, (dict, list, tuple)) and depth >= MAX_RECORDED_DEPTH:
        return f"<nested deeper than {MAX_RECORDED_DEPTH} levels: not recorded>"
    if isinstance(x, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    if isinstance(x, int) and not isinstance(x, bool) and x.bit_length() > _MAX_INT_BITS:
        return f"<an integer of about {int(x.bit_length() * math.log10(2)) + 1:,} digits: not recorded>"
    if x is None or isinstance(x, (str, int, bool)):
        return x
    if hasattr(x, "item"):
        try:
            return _jsonable(x.item())
        except (TypeError, ValueError):
            pass
    return repr(x)


class TrajectoryWriter:
    """Appends call records to a JSONL file; `None` path means no file (calls are only counted)."""

    def __init__(self, path: str | Path | None, header: dict[str, Any] | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._fh: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists() or self.path.stat().st_size == 0
            # backslashreplace: a lone surrogate (invalid in UTF-8) becomes its JSON escape, see the module docstring
            self._fh = self.path.open("a", encoding="utf-8", errors="backslashreplace")
            if fresh and header is not None:
                self._write(dumps({"kind": "start", "autovend_version": __version__, **header}))

    def _write(self, line: str) -> None:
        assert self._fh is not None
        self._fh.write(line + "\n")
        self._fh.flush()

    def call(
        self,
        *,
        seq: int,
        day: int,
        tool: str,
        arguments: Any,
        ok: bool,
        result_json: str,
        error: str | None,
        wall_ms: float,
        arguments_json: str | None = None,
    ) -> None:
        """Write one call; `result_json` is the result content already encoded with `dumps`.

        arguments_json: `arguments` already encoded as compact JSON (by `autovend.tools.guard.check_arguments`).
        """
        if self._fh is None:
            return
        if arguments_json is None:
            arguments_json = dumps(arguments)
        head = dumps({"kind": "call", "seq": seq, "day": day, "tool": tool})
        tail = dumps({"error": error, "wall_ms": round(wall_ms, 3)})
        flag = "true" if ok else "false"
        self._write(f'{head[:-1]},"arguments":{arguments_json},"ok":{flag},"result":{result_json},{tail[1:]}')

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_trajectory(path: str | Path) -> list[dict[str, Any]]:
    """All records of a trajectory file, in order."""
    with Path(path).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
