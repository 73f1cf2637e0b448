"""What `autovend verify` reports: the first `Difference` between a run folder and its replay, in a `Verification`.

Numbers are equal when they agree to `RELATIVE` (1e-9) relative (money is in fen, so this is to the fen and
closer); bools, strings and types exactly (`same`, `first_difference`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RELATIVE = 1e-9


class Tampered(Exception):  # noqa: N818 - raised and caught inside verify only: the folder is not what it says
    """A difference found while reading the folder (a malformed file, a missing one); carries the `Difference`."""

    def __init__(self, difference: Difference) -> None:
        super().__init__(difference.message())
        self.difference = difference


@dataclass(frozen=True)
class Difference:
    """The first place where the folder and its replay disagree (or where the folder is not what AutoVend writes).

    where: the file (trajectory.jsonl, run.json, records.sqlite, ...); field: the key, column or field path;
    line: the line of trajectory.jsonl (or of report.md / report.html); table and row: a SQLite table and the
    1-based row (in rowid order) or a row of daily.csv; why: a sentence when the two values alone do not say it.
    """

    where: str
    field: str
    recorded: Any
    replayed: Any
    day: int | None = None
    call: int | None = None  # the call's seq
    tool: str | None = None
    line: int | None = None
    table: str | None = None
    row: int | None = None
    why: str | None = None

    def message(self) -> str:
        """One line: where (file, line, day, call, table, row), the field, both values (or why)."""
        at = [f"line {self.line}"] if self.line is not None else []
        if self.day is not None:
            at.append(f"day {self.day}")
        if self.call is not None:
            at.append(f"call {self.call} ({self.tool})")
        if self.table is not None:
            at.append(f"table {self.table}")
        if self.row is not None:
            at.append(f"row {self.row:,}")
        place = ", ".join([self.where, *at])
        if self.why is not None:
            return f"{place}: {self.field}: {self.why}"
        return f"{place}: {self.field}: recorded {show(self.recorded)}, replayed {show(self.replayed)}"

    def to_json(self) -> dict[str, Any]:
        """The difference as JSON-ready values."""
        return {
            "where": self.where,
            "line": self.line,
            "day": self.day,
            "call": self.call,
            "tool": self.tool,
            "table": self.table,
            "row": self.row,
            "field": self.field,
            "recorded": jsonable(self.recorded),
            "replayed": jsonable(self.replayed),
            "why": self.why,
            "message": self.message(),
        }


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify_run`.

    checked: what was compared, in order (the files and parts re-derived); files: the SHA-256 of each file of the
    folder that was compared (a record of the verification holds to these bytes: `recorded_verification`).
    """

    run_dir: Path
    world_hash: str
    seed: int
    days: int
    calls: int  # calls replayed
    difference: Difference | None
    notes: tuple[str, ...] = field(default=())
    checked: tuple[str, ...] = field(default=())
    files: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when everything compared equal."""
        return self.difference is None

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON-ready values (`record_verification` adds the verifier that made it)."""
        return {
            "verified": self.ok,
            "world_hash": self.world_hash,
            "seed": self.seed,
            "days": self.days,
            "calls": self.calls,
            "difference": None if self.difference is None else self.difference.to_json(),
            "notes": list(self.notes),
            "checked": list(self.checked),
            "files": dict(self.files),
        }


def show(value: Any) -> str:
    """A value as short JSON text (at most about 200 characters)."""
    text = json.dumps(jsonable(value), ensure_ascii=False, default=repr)
    return text if len(text) <= 200 else text[:200] + "…"


def jsonable(value: Any) -> Any:
    """A value JSON can hold: non-finite floats as text, numpy scalars as Python values."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if hasattr(value, "item") and not isinstance(value, list | dict | str):
        try:
            return value.item()
        except (TypeError, ValueError):
            return repr(value)
    return value


def is_number(x: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def same(a: Any, b: Any) -> bool:
    """Equal values: numbers to `RELATIVE` (bools exactly, never equal to numbers), everything else exactly."""
    if not is_number(a) or not is_number(b):
        return type(a) is type(b) and bool(a == b)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return bool(a == b)
    return abs(a - b) <= RELATIVE * max(1.0, abs(a), abs(b))


def first_difference(recorded: Any, replayed: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The path of the first leaf where two JSON values differ, with both values; None when equal."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in list(dict.fromkeys([*recorded, *replayed])):
            sub = f"{path}.{key}" if path else str(key)
            if key not in recorded or key not in replayed:
                return sub, recorded.get(key, "<absent>"), replayed.get(key, "<absent>")
            found = first_difference(recorded[key], replayed[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i, (x, y) in enumerate(zip(recorded, replayed, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        if len(recorded) != len(replayed):
            return f"{path} (length)", len(recorded), len(replayed)
        return None
    return None if same(recorded, replayed) else (path, recorded, replayed)
