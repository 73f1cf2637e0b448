"""What a check of a source reports: its violations, warnings and, on success, a summary of the source.

`CheckReport` is what `autovend check` prints (flat sources: `autovend.data.check`; partitioned ones:
`autovend.data.partcheck`); `known_keys` and `calendar_violations` are the rules both run on the small tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from autovend.data.contract import META_FILE, STATUSES, SourceMeta
from autovend.data.tablecheck import Table
from autovend.data.violations import Violation

DEFAULT_MAX_ERRORS = 50
MACHINES_NAMED = 10  # name the machines without inventory records when there are at most this many


@dataclass(frozen=True)
class SourceSummary:
    """What a conforming source holds, for the check's success message and the pipeline's logs."""

    name: str
    machines_by_site_type: dict[str, int]
    products_by_category: dict[str, tuple[int, int]]  # category_l1 -> (products, distinct category_l2)
    order_lines: dict[str, int]  # status -> lines
    units_sold: int  # completed lines only
    first_ts: pd.Timestamp
    last_ts: pd.Timestamp
    orders_have_time: bool
    has_inventory: bool
    machines_with_inventory: int
    machines_without_inventory: tuple[str, ...]
    duplicate_rows: dict[str, int]  # file name -> exact duplicate rows (copies beyond the first)
    content_hash: str
    warnings: tuple[str, ...] = ()  # the check's warnings, one formatted line each

    def to_dict(self) -> dict[str, object]:
        """The summary as plain JSON-able values (for the pipeline's check stage)."""
        return {
            "name": self.name,
            "machines_by_site_type": dict(self.machines_by_site_type),
            "products_by_category": {
                k: {"products": n, "subcategories": l2} for k, (n, l2) in self.products_by_category.items()
            },
            "order_lines": dict(self.order_lines),
            "units_sold": int(self.units_sold),
            "first_ts": self.first_ts.isoformat(),
            "last_ts": self.last_ts.isoformat(),
            "orders_have_time": bool(self.orders_have_time),
            "machines_with_inventory": int(self.machines_with_inventory),
            "machines_without_inventory": list(self.machines_without_inventory),
            "duplicate_rows": {k: int(v) for k, v in self.duplicate_rows.items()},
            "content_hash": self.content_hash,
            "warnings": list(self.warnings),
        }

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs in display order."""
        n_machines = sum(self.machines_by_site_type.values())
        by_site = ", ".join(f"{k} {v}" for k, v in self.machines_by_site_type.items())
        n_products = sum(n for n, _ in self.products_by_category.values())
        by_cat = ", ".join(
            f"{k} {n} in {l2} subcategor{'y' if l2 == 1 else 'ies'}" for k, (n, l2) in self.products_by_category.items()
        )
        lines = self.order_lines
        n_lines = sum(lines.values())
        fmt = "%Y-%m-%d %H:%M:%S" if self.orders_have_time else "%Y-%m-%d"
        dates = f"{self.first_ts.strftime(fmt)} .. {self.last_ts.strftime(fmt)}"
        if not self.orders_have_time:
            dates += " (dates only, no times of day)"
        if not self.has_inventory:
            inventory = "no inventory table: every machine is calibrated from sales alone"
        else:
            missing = self.machines_without_inventory
            inventory = f"{self.machines_with_inventory} with records, {len(missing)} without"
            if 0 < len(missing) <= MACHINES_NAMED:
                inventory += f" ({', '.join(missing)})"
        dups = ", ".join(f"{k} {v:,}" for k, v in self.duplicate_rows.items() if v) or "none"
        return [
            ("source", self.name),
            ("machines", f"{n_machines:,} ({by_site})"),
            ("products", f"{n_products:,} ({by_cat})"),
            (
                "order lines",
                f"{n_lines:,} (" + ", ".join(f"{status} {lines.get(status, 0):,}" for status in STATUSES) + ")",
            ),
            ("units sold", f"{self.units_sold:,} (completed lines)"),
            ("date range", dates),
            ("inventory", inventory),
            ("exact duplicate rows", dups),
            ("warnings", _groups_text(len(self.warnings)) + ", listed below" if self.warnings else "none"),
            ("content hash", self.content_hash),
        ]


def _groups_text(n: int) -> str:
    return f"{n:,} group{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class CheckReport:
    """The outcome of `check_source`: every violation (grouped) or, on success, the summary; and warnings."""

    path: Path | str  # the source folder, or a partitioned source's URL
    errors: list[Violation]
    n_errors: int
    summary: SourceSummary | None
    warnings: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the source follows the contract."""
        return self.n_errors == 0

    def format(self, max_errors: int = DEFAULT_MAX_ERRORS) -> str:
        """The report as text: at most `max_errors` violation lines, then a count of the rest."""
        if self.ok:
            lines = [f"{self.path}: follows the raw-records contract."]
            if self.summary is not None:
                lines += [f"  {label}: {value}" for label, value in self.summary.rows()]
            return "\n".join(lines + self.warning_lines(max_errors))
        plural = "s" if self.n_errors != 1 else ""
        lines = [
            f"{self.path}: breaks the raw-records contract: {self.n_errors:,} error{plural} "
            f"in {len(self.errors):,} group{'s' if len(self.errors) != 1 else ''}."
        ]
        shown = self.errors[: max(max_errors, 0)]
        lines += [f"- {v.format()}" for v in shown]
        rest = self.errors[len(shown) :]
        if rest:
            n_rest = sum(v.count for v in rest)
            lines.append(
                f"... and {len(rest):,} more group{'s' if len(rest) != 1 else ''} ({n_rest:,} errors) "
                "not shown; raise --max-errors to see them."
            )
        lines += self.warning_lines(max_errors)
        lines.append(f"Fix these and run `autovend check {self.path}` again.")
        return "\n".join(lines)

    def warning_lines(self, max_warnings: int = DEFAULT_MAX_ERRORS) -> list[str]:
        """The warnings as text lines (none when there are none), at most `max_warnings` of them."""
        if not self.warnings:
            return []
        n = len(self.warnings)
        lines = [f"Warnings ({_groups_text(n)}; they do not fail the check, but look at these records):"]
        lines += [f"  warning: {v.format()}" for v in self.warnings[: max(max_warnings, 0)]]
        if n > max_warnings:
            lines.append(f"... and {n - max_warnings:,} more warnings not shown; raise --max-errors to see them.")
        return lines


def known_keys(tables: dict[str, Table]) -> dict[str, set[str]]:
    """Ids of machines and products as loaded (only for tables that could be read and have the key)."""
    keys: dict[str, set[str]] = {}
    for stem in ("machines", "products"):
        table = tables.get(stem)
        key = table.spec.key if table is not None else None
        if table is not None and key is not None and key in table.typed.columns and key in table.raw.columns:
            keys[stem] = set(table.typed[key].dropna().unique())
    return keys


def calendar_violations(meta: SourceMeta | None, tables: dict[str, Table]) -> list[Violation]:
    """Without calendar.csv the holiday library must know the country, or calibration would fail later."""
    if meta is None or "calendar" in tables:
        return []
    import holidays

    if meta.country in holidays.list_supported_countries():
        return []
    return [
        Violation(
            META_FILE,
            f"country {meta.country!r} has no public-holiday calendar in the holidays library, "
            "and the source has no calendar table",
            "add calendar.csv (date, is_workday, holiday_name) to the source",
            column="country",
        )
    ]
