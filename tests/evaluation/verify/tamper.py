"""A generator of tampered run folders: each `Tamper` changes a copy of a finished run as a cheat (or a slip) would.

`tampered(src, base)` copies the run once per tamper into `base/<name>` and applies it; each tamper says where
verify must find the difference (`where`: the file; `field`: what the difference's field starts with). Every
class of issue [R2]'s "Tampering that verifies OK" list is here, and more:

- run.json: a seed that is no integer, the call counters, the wall time (below the tools' own), the tokens, the
  cost, a run that claims to be the oracle's;
- trajectory.jsonl: a read-only call removed with run.json's counters adjusted (a gap in seq), a seq repeated, a
  line that is a JSON list, the last line cut short, a line with a key twice;
- records.sqlite and hidden.sqlite: a row deleted, units tripled, a table added, the file removed;
- daily.csv edited; metrics.json removed, edited, with NaN or with a key twice; report.md and report.html edited.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Tamper:
    """One way to change a run folder, and where verify must say it differs."""

    name: str
    apply: Callable[[Path], None]
    where: str
    field: str  # the difference's field starts with this


def _meta(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        meta = json.loads((run / "run.json").read_text())
        edit(meta)
        (run / "run.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")

    return apply


def _lines(edit: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        path = run / "trajectory.jsonl"
        path.write_text("\n".join(edit(path.read_text().splitlines())) + "\n")

    return apply


def _sql(name: str, statement: str, rows: int = 1) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        conn = sqlite3.connect(run / name)
        try:
            assert conn.execute(statement).rowcount == rows, statement  # the tamper changed exactly one row
            conn.commit()
        finally:
            conn.close()

    return apply


def _remove(name: str) -> Callable[[Path], None]:
    return lambda run: (run / name).unlink()


def _edit_text(name: str, old: str, new: str, last: bool = False) -> Callable[[Path], None]:
    def apply(run: Path) -> None:
        text = (run / name).read_text()
        assert old in text, (name, old)
        if last:
            i = text.rindex(old)
            (run / name).write_text(text[:i] + new + text[i + len(old) :])
        else:
            (run / name).write_text(text.replace(old, new, 1))

    return apply


def _first(lines: list[str], tool: str) -> int:
    return next(i for i, line in enumerate(lines) if f'"tool":"{tool}"' in line)


def _drop_read_call(run: Path) -> None:
    """Remove the first get_warehouse call and adjust run.json's counters to match (seq is left as it was)."""
    path = run / "trajectory.jsonl"
    lines = path.read_text().splitlines()
    del lines[_first(lines, "get_warehouse")]
    path.write_text("\n".join(lines) + "\n")

    def counts(meta: dict[str, Any]) -> None:
        meta["tool_calls"]["seq"] -= 1
        meta["tool_calls"]["by_tool"]["get_warehouse"] -= 1

    _meta(counts)(run)


def _repeat_seq(lines: list[str]) -> list[str]:
    rec = json.loads(lines[3])
    rec["seq"] -= 1
    lines[3] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    return lines


def _key_twice(lines: list[str]) -> list[str]:
    i = _first(lines, "end_day")
    lines[i] = lines[i].replace('"ok":true,', '"ok":true,"ok":true,', 1)
    return lines


def _claim_oracle(meta: dict[str, Any]) -> None:
    meta.update(agent="oracle", agent_entry_point="autovend.agents.oracle:OracleAgent", privileged=True)
    meta["agent_config"] = {}


def _wall(meta: dict[str, Any]) -> None:
    meta["wall_time_s"] = 0.0


def _calls_by_tool(meta: dict[str, Any]) -> None:
    meta["tool_calls"]["by_tool"]["end_day"] += 1


TAMPERS: tuple[Tamper, ...] = (
    Tamper("seed-abc", _meta(lambda m: m.update(seed="abc")), "run.json", "seed"),
    Tamper("claims-the-oracle", _meta(_claim_oracle), "", ""),  # the oracle, run again, disagrees (where varies)
    Tamper("tool-calls-edited", _meta(_calls_by_tool), "run.json", "tool_calls.by_tool.end_day"),
    Tamper("wall-time-edited", _meta(_wall), "run.json", "wall_time_s"),
    Tamper("tokens-edited", _meta(lambda m: m.update(token_usage={"requests": 3})), "run.json", "token_usage"),
    Tamper("cost-edited", _meta(lambda m: m.update(api_cost_usd=1.25)), "run.json", "api_cost_usd"),
    Tamper("line-removed-counts-adjusted", _drop_read_call, "trajectory.jsonl", "seq"),
    Tamper("seq-repeated", _lines(_repeat_seq), "trajectory.jsonl", "seq"),
    Tamper("line-is-a-list", _lines(lambda ls: [*ls[:2], "[1, 2]", *ls[3:]]), "trajectory.jsonl", "JSON"),
    Tamper("last-line-cut-short", _edit_text("trajectory.jsonl", "}\n", "}", last=True), "trajectory.jsonl", "file"),
    Tamper("key-twice-in-a-line", _lines(_key_twice), "trajectory.jsonl", "JSON"),
    Tamper(
        "records-row-deleted",
        _sql(
            "records.sqlite",
            "DELETE FROM daily_costs WHERE rowid = (SELECT rowid FROM daily_costs ORDER BY rowid LIMIT 1 OFFSET 1)",
        ),
        "records.sqlite",
        "",
    ),
    Tamper(
        "records-units-tripled",
        _sql(
            "records.sqlite",
            "UPDATE daily_sales SET units = units * 3 WHERE rowid = (SELECT min(rowid) FROM daily_sales WHERE units > 0)",
        ),
        "records.sqlite",
        "units",
    ),
    Tamper(
        "hidden-row-deleted",
        _sql(
            "hidden.sqlite",
            "DELETE FROM demand WHERE rowid = (SELECT rowid FROM demand ORDER BY rowid LIMIT 1 OFFSET 1)",
        ),
        "hidden.sqlite",
        "",
    ),
    Tamper(
        "hidden-demand-tripled",
        _sql(
            "hidden.sqlite",
            "UPDATE demand SET demand = demand * 3 WHERE rowid = (SELECT min(rowid) FROM demand WHERE demand > 0)",
        ),
        "hidden.sqlite",
        "demand",
    ),
    Tamper(
        "records-table-added", _sql("records.sqlite", "CREATE TABLE extra (x)", rows=-1), "records.sqlite", "schema"
    ),
    Tamper("records-missing", _remove("records.sqlite"), "records.sqlite", "file"),
    Tamper("hidden-missing", _remove("hidden.sqlite"), "hidden.sqlite", "file"),
    Tamper("daily-edited", _edit_text("daily.csv", "\n1,", "\n1 ,"), "daily.csv", ""),
    Tamper("metrics-deleted", _remove("metrics.json"), "metrics.json", "file"),
    Tamper(
        "metrics-nan", _edit_text("metrics.json", '"waste_rate": ', '"waste_rate": NaN, "x": '), "metrics.json", "JSON"
    ),
    Tamper("metrics-key-twice", _edit_text("metrics.json", "{", '{\n  "net_assets": 1.0,'), "metrics.json", "JSON"),
    Tamper(
        "metrics-edited", _edit_text("metrics.json", '"waste_rate": ', '"waste_rate": 0.5, "x": '), "metrics.json", ""
    ),
    Tamper("report-md-edited", _edit_text("report.md", "# Run ", "# Run, verified, "), "report.md", "text"),
    Tamper("report-html-edited", _edit_text("report.html", "<title>", "<title>Verified "), "report.html", "text"),
)


def tampered(src: Path, base: Path, tampers: tuple[Tamper, ...] = TAMPERS) -> Iterator[tuple[Tamper, Path]]:
    """Each tamper applied to its own copy of the run `src` (under `base`)."""
    for tamper in tampers:
        run = base / tamper.name
        shutil.copytree(src, run)
        tamper.apply(run)
        yield tamper, run
