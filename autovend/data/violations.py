"""A violation of the raw-records contract: one problem of one file (and column), with the rows it affects.

A violation groups the rows of one file and column that share one problem, so a million bad rows make one
`Violation` holding the count and the first few rows, never a million objects. The file is the table's file
name (orders.csv), or for a partitioned table the partition file's path in the source (orders/machine_id=M1/
part-0.parquet), its rows counted within that file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.data.contract import META_FILE, TableSpec

ROWS_SHOWN = 5
EXAMPLES_SHOWN = 3


@dataclass(frozen=True)
class Violation:
    """One problem of one file (and column), with the rows it affects (1-based, header excluded).

    `count` is the number of rows with this problem (1 for a problem of a whole file or column);
    `rows` holds the first `ROWS_SHOWN` of them and `examples` a few of the offending values.
    """

    file: str
    problem: str
    fix: str
    column: str | None = None
    rows: tuple[int, ...] = ()
    count: int = 1
    examples: tuple[str, ...] = ()

    def format(self) -> str:
        """One line: where, what is wrong, which values, and what to fix."""
        where = [self.file]
        if self.rows:
            shown = ", ".join(str(r) for r in self.rows)
            more = self.count - len(self.rows)
            label = "row" if self.count == 1 else "rows"
            where.append(f"{label} {shown}" + (f" (+{more:,} more)" if more > 0 else ""))
        if self.column is not None:
            where.append(f"{'key' if self.file == META_FILE else 'column'} {self.column}")
        values = ""
        if self.examples:
            values = (" (value " if len(self.examples) == 1 else " (values ") + ", ".join(self.examples) + ")"
        return f"{', '.join(where)}: {self.problem}{values}. Fix: {self.fix}"


def examples(raw: pd.Series, idx: np.ndarray) -> tuple[str, ...]:
    """A few distinct offending values (as written) among the first rows of `idx`."""
    sample = raw.iloc[idx[: 20 * EXAMPLES_SHOWN]]
    values = pd.unique(sample.astype("str").fillna("").to_numpy())
    return tuple(repr(str(v)) for v in values[:EXAMPLES_SHOWN])


def from_mask(
    file: str, column: str, mask: np.ndarray, raw: pd.Series, problem: str, fix: str, show_values: bool = True
) -> Violation:
    """The violation of the rows where `mask` holds (their values taken from `raw`, the column as written)."""
    idx = np.flatnonzero(mask)
    rows = tuple(int(i) + 1 for i in idx[:ROWS_SHOWN])
    shown = examples(raw, idx) if show_values else ()
    return Violation(file, problem, fix, column=column, rows=rows, count=int(idx.size), examples=shown)


def missing_column(file: str, name: str, found: list[str]) -> Violation:
    """A required column the file lacks (with a near miss named when one is there)."""
    near = [c for c in found if c.strip().lower() == name and c != name]
    fix = f"add a column named {name} (lower case, as in the contract)"
    if near:
        fix = f"rename column {near[0]!r} to {name!r} (names are lower case, without spaces)"
    listing = ", ".join(repr(c) for c in found) or "none"
    return Violation(file, f"missing required column (columns found: {listing})", fix, column=name)


def in_column_order(spec: TableSpec, violations: list[Violation]) -> list[Violation]:
    """File-level problems first, then by the contract's column order (stable within a column)."""
    order = {name: i for i, name in enumerate(spec.column_names)}
    return sorted(violations, key=lambda v: -1 if v.column is None else order.get(v.column, len(order)))
