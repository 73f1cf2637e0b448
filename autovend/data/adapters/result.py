"""What adapting an export produced: the source's tables and the report of what was read, mapped and left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class DropGroup:
    """Rows left out for one reason, by row number (1-based, header excluded).

    `bad` rows could not be read as the mapping says (they are refused unless the mapping sets
    `bad_rows: drop`); the others were left out on purpose (`drop_rows`, a status mapped to `drop`).
    """

    reason: str
    rows: tuple[int, ...]
    bad: bool = True
    column: str | None = None
    fix: str = ""

    @property
    def n_rows(self) -> int:
        """Number of rows in the group."""
        return len(self.rows)

    @property
    def lines(self) -> tuple[int, ...]:
        """The rows' line numbers in the file, header = line 1 (for an export without line breaks in cells)."""
        return tuple(row + 1 for row in self.rows)


@dataclass(frozen=True)
class FieldReport:
    """How one value map of the mapping was applied to the written rows.

    `applied`: each cell value (trimmed, as written in the export) found in the map -> the value written;
    `unmapped`: cell values not in the map ('' is the blank cell) -> written rows carrying them, which got
    `policy` (a value, or `keep`); `defaulted`: machines or products whose value came from `policy`.
    """

    key: str
    column: str
    applied: dict[str, str]
    unmapped: dict[str, int]
    policy: str
    defaulted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Conflict:
    """A machine or product whose rows carry several values of one column; the most frequent one was kept."""

    table: str
    column: str
    key: str
    counts: dict[str, int]


@dataclass(frozen=True, eq=False)
class AdaptResult:
    """The adapted source (source.yaml content and tables) and the report of what the adapter did."""

    source: dict[str, str]
    machines: pd.DataFrame
    products: pd.DataFrame
    orders: pd.DataFrame
    rows_read: int
    dropped: tuple[DropGroup, ...]
    fields: tuple[FieldReport, ...]
    conflicts: tuple[Conflict, ...]

    @property
    def rows_written(self) -> int:
        """Order lines written to orders.csv."""
        return len(self.orders)

    @property
    def rows_dropped(self) -> int:
        """Rows not written, over all reasons."""
        return sum(group.n_rows for group in self.dropped)

    @property
    def n_units(self) -> int:
        """Units over the written order lines (sum of qty)."""
        return int(self.orders["qty"].sum())

    @property
    def n_completed_units(self) -> int:
        """Units over the completed order lines (sales)."""
        return int(self.orders.loc[self.orders["status"] == "completed", "qty"].sum())

    def field(self, key: str) -> FieldReport:
        """The report of the value map at mapping key `key`, e.g. 'products.category_l1'."""
        for report in self.fields:
            if report.key == key:
                return report
        raise KeyError(f"no value map at {key!r}; mapped: {[r.key for r in self.fields]}")

    def conflicts_of(self, table: str, column: str) -> dict[str, dict[str, int]]:
        """The conflicts of one column for one table: machine or product -> {value: rows}."""
        return {c.key: dict(c.counts) for c in self.conflicts if c.table == table and c.column == column}

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able values (the tables are summarised by their sizes)."""
        return {
            "source": dict(self.source),
            "rows_read": self.rows_read,
            "rows_written": self.rows_written,
            "rows_dropped": self.rows_dropped,
            "dropped": [
                {"reason": g.reason, "bad": g.bad, "column": g.column, "rows": list(g.rows)} for g in self.dropped
            ],
            "machines": len(self.machines),
            "products": len(self.products),
            "units": self.n_units,
            "fields": [
                {
                    "key": f.key,
                    "column": f.column,
                    "applied": dict(f.applied),
                    "unmapped": dict(f.unmapped),
                    "policy": f.policy,
                    "defaulted": list(f.defaulted),
                }
                for f in self.fields
            ],
            "conflicts": [
                {"table": c.table, "column": c.column, "key": c.key, "counts": dict(c.counts)} for c in self.conflicts
            ],
        }
