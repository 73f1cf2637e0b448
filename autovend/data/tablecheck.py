"""One table of a source while it is checked: read, coerce its text, run its rules, group the failing rows.

`load_table` finds and reads a table's file in a source folder; `coerce_table` parses a frame as read (a whole
file, or one partition file of a partitioned table) and reports every problem under the file's name;
`rule_violations` runs the pandera rules of `autovend.data.contract` over the typed columns.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from autovend.data.contract import Kind, TableSpec, rule_schema
from autovend.data.duplicates import count_duplicates
from autovend.data.plausibility import Finding
from autovend.data.source import ColumnIssue, TableReadError, coerce_column, entry_problem, read_table_file
from autovend.data.violations import Violation, from_mask, missing_column


@dataclass
class Table:
    """One table (or one partition file of a table) while it is being checked."""

    spec: TableSpec
    file: str
    raw: pd.DataFrame
    typed: pd.DataFrame
    duplicates: int
    has_time: bool


RELEASED = pd.DataFrame()  # what a finalised Table holds in place of its raw and typed frames


def from_issue(file: str, column: str, issue: ColumnIssue, raw: pd.Series) -> Violation:
    """A coercion problem of a column as a violation (blank cells show no values)."""
    return from_mask(file, column, issue.mask, raw, issue.problem, issue.fix, show_values=issue.problem != "is blank")


def load_table(folder: Path, spec: TableSpec) -> tuple[Table | None, list[Violation]]:
    """Find, read and coerce one table; None when it is absent or cannot be read."""
    present = [folder / name for name in spec.file_names if os.path.lexists(folder / name)]
    refused = [(p, entry_problem(folder, p)) for p in present]
    bad = [Violation(p.name, problem[0], problem[1]) for p, problem in refused if problem is not None]
    if bad:
        return None, bad
    files = [p for p in present if p.is_file()]
    if len(files) > 1:
        names = " and ".join(f.name for f in files)
        return None, [
            Violation(files[0].name, f"both {names} exist", f"keep one of {names} and remove or rename the other")
        ]
    if not files:
        if not spec.required:
            return None, []
        names = " or ".join(spec.file_names)
        return None, [Violation(spec.file_names[0], "file not found", f"add {names}: the contract requires it")]
    path = files[0]
    try:
        raw = read_table_file(path, spec.column_names)
    except TableReadError as exc:
        return None, [Violation(path.name, exc.problem, exc.fix, column=exc.column, rows=exc.rows)]
    return coerce_table(spec, path.name, raw, empty_ok=not spec.required)


def coerce_table(spec: TableSpec, file: str, raw: pd.DataFrame, *, empty_ok: bool) -> tuple[Table, list[Violation]]:
    """Parse the frame `raw` (the file `file` as read) to the contract's types, with every problem found."""
    violations: list[Violation] = []
    if not empty_ok and raw.empty:
        violations.append(Violation(file, "has no rows", f"{spec.stem} must hold at least one row"))
    found = list(raw.columns)
    typed: dict[str, pd.Series] = {}
    has_time = False
    for col in spec.columns:
        if col.name not in raw.columns:
            if col.required:
                violations.append(missing_column(file, col.name, found))
            else:
                typed[col.name] = unknown_column(col.kind, raw.index)
            continue
        coerced = coerce_column(col, raw[col.name])
        typed[col.name] = coerced.values
        has_time = has_time or coerced.has_time
        violations += [from_issue(file, col.name, issue, raw[col.name]) for issue in coerced.issues]
    frame = pd.DataFrame(typed, index=raw.index, copy=False)  # the parsed columns as they are (millions of rows)
    return Table(spec, file, raw, frame, count_duplicates(raw, frame), has_time), violations


def unknown_column(kind: Kind, index: pd.Index) -> pd.Series:
    """An optional column the file lacks: all unknown, in the column's checked dtype."""
    if kind in (Kind.INTEGER, Kind.DECIMAL):
        return pd.Series(np.nan, index=index, dtype="float64")
    if kind in (Kind.TIMESTAMP, Kind.DATE):
        return pd.Series(pd.NaT, index=index, dtype="datetime64[ns]")
    if kind is Kind.BOOLEAN:
        return pd.Series(pd.NA, index=index, dtype="boolean")
    return pd.Series(pd.NA, index=index, dtype="str")


def rule_violations(table: Table, keys: dict[str, set[str]]) -> list[Violation]:
    """Run the table's pandera rule checks over its typed columns; group the failing rows."""
    schema = rule_schema(table.spec, keys)
    frame = table.typed
    out: list[Violation] = []
    for name, column in schema.columns.items():
        if name not in frame.columns or name not in table.raw.columns:
            continue
        series = frame[name]
        for check in column.checks:
            result = check(series)
            ok = result.check_output.reindex(series.index, fill_value=True).to_numpy(dtype=bool)
            if not ok.all():
                out.append(from_mask(table.file, name, ~ok, table.raw[name], check.error, check.description))
    for check in schema.checks:
        name = check.title or ""
        if name not in table.raw.columns:
            continue
        ok = check(frame).check_output.reindex(frame.index, fill_value=True).to_numpy(dtype=bool)
        if not ok.all():
            out.append(from_mask(table.file, name, ~ok, table.raw[name], check.error, check.description))
    return out


def from_finding(table: Table, finding: Finding) -> Violation:
    """A plausibility finding as a violation of the table's file (rows 1-based, values as written)."""
    if finding.mask is None or finding.column is None:
        return Violation(table.file, finding.problem, finding.fix, column=finding.column)
    return from_mask(table.file, finding.column, finding.mask, table.raw[finding.column], finding.problem, finding.fix)
