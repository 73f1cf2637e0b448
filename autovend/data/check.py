"""Checking a source folder against the raw-records contract: every violation, grouped, and a summary.

A violation groups the rows of one file and column that share one problem, so a million bad rows
make one `Violation` holding the count and the first few rows, never a million objects. The checks
run in two passes per table: coercion of the text (blank cells, wrong types, timestamp forms), then
the pandera rule schema of `autovend.data.contract` over the typed columns (bounds, allowed values,
uniqueness, references to machines and products). Then the plausibility rules of
`autovend.data.plausibility` (limits from the params section `check`) add errors for values that cannot
be real and warnings for ambiguous ones; warnings never make a source fail. Nothing is written to the
source folder, and a table that is a link leading outside it is refused without being opened.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from autovend.data.checkreport import (
    DEFAULT_MAX_ERRORS,
    CheckReport,
    SourceSummary,
    calendar_violations,
    known_keys,
)
from autovend.data.contract import META_FILE, STATUSES, TABLES, SourceMeta
from autovend.data.hashing import source_hash
from autovend.data.plausibility import CheckSettings, plausibility_findings
from autovend.data.source import finalise_table, read_meta
from autovend.data.tablecheck import RELEASED, Table, from_finding, load_table, rule_violations
from autovend.data.violations import EXAMPLES_SHOWN, ROWS_SHOWN, Violation, in_column_order

__all__ = [
    "DEFAULT_MAX_ERRORS",
    "EXAMPLES_SHOWN",
    "ROWS_SHOWN",
    "CheckReport",
    "Inspection",
    "SourceSummary",
    "Violation",
    "check_source",
]


@dataclass(frozen=True)
class Inspection:
    """Everything one pass over a source yields: the report, and on success the typed tables."""

    report: CheckReport
    meta: SourceMeta | None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    has_time: dict[str, bool] = field(default_factory=dict)


def _summary(
    meta: SourceMeta, final: dict[str, pd.DataFrame], tables: dict[str, Table], content_hash: str
) -> SourceSummary:
    machines, products, orders = final["machines"], final["products"], final["orders"]
    inventory = final.get("inventory")
    by_site = machines["site_type"].value_counts()
    cats = products.groupby("category_l1", sort=True).agg(n=("sku_id", "size"), l2=("category_l2", "nunique"))
    status_codes, status_names = pd.factorize(orders["status"])  # codes, not a Python string a row
    statuses = pd.Series(np.bincount(status_codes[status_codes >= 0], minlength=len(status_names)), index=status_names)
    completed = (status_codes == status_names.get_indexer(["completed"])[0]) & (status_codes >= 0)
    all_ids = machines["machine_id"]
    if inventory is not None:
        counted = all_ids.isin(inventory["machine_id"].unique())
        without = tuple(sorted(all_ids[~counted].astype(str)))
        n_with = int(counted.sum())
    else:
        without, n_with = tuple(sorted(all_ids.astype(str))), 0
    return SourceSummary(
        name=meta.name,
        machines_by_site_type={str(k): int(v) for k, v in by_site.items()},
        products_by_category={str(k): (int(r.n), int(r.l2)) for k, r in cats.iterrows()},
        order_lines={s: int(statuses.get(s, 0)) for s in STATUSES},
        units_sold=int(np.sum(orders["qty"].to_numpy(), where=completed)),
        first_ts=orders["ts"].min(),
        last_ts=orders["ts"].max(),
        orders_have_time=tables["orders"].has_time,
        has_inventory=inventory is not None,
        machines_with_inventory=n_with,
        machines_without_inventory=without,
        duplicate_rows={t.file: t.duplicates for t in tables.values()},
        content_hash=content_hash,
    )


def inspect_source(path: Path, settings: CheckSettings | None = None) -> Inspection:
    """Run every check on the source folder `path`; on success also return its typed tables.

    `settings` holds the plausibility limits (params section `check`); None means the defaults.
    """
    settings = settings or CheckSettings()
    if not path.is_dir():
        problem = "source folder not found" if not path.exists() else "is not a folder"
        fix = "give the path of a folder holding source.yaml, machines, products and orders"
        violation = Violation(str(path), problem, fix)
        return Inspection(CheckReport(path, [violation], 1, None), None)
    meta, meta_problems = read_meta(path)
    violations = [Violation(META_FILE, problem, fix, column=key) for key, problem, fix in meta_problems]
    tables: dict[str, Table] = {}
    table_violations: dict[str, list[Violation]] = {}
    for spec in TABLES:
        table, found = load_table(path, spec)
        table_violations[spec.stem] = found
        if table is not None:
            tables[spec.stem] = table
    keys = known_keys(tables)
    warnings: list[Violation] = []
    typed = {stem: t.typed[[c for c in t.typed.columns if c in t.raw.columns]] for stem, t in tables.items()}
    for finding in plausibility_findings(typed, settings):
        violation = from_finding(tables[finding.stem], finding)
        (warnings if finding.warning else table_violations[finding.stem]).append(violation)
    for spec in TABLES:
        found = table_violations[spec.stem]
        if spec.stem in tables:
            found = found + rule_violations(tables[spec.stem], keys)
        violations += in_column_order(spec, found)
    violations += calendar_violations(meta, tables)
    n_errors = sum(v.count for v in violations)
    if n_errors or meta is None:
        return Inspection(CheckReport(path, violations, n_errors, None, warnings), meta)
    del typed  # the plausibility views; each table's raw text and typed columns go as it is finalised
    final = {}
    for stem, t in tables.items():
        final[stem] = finalise_table(t.spec, t.typed)
        t.raw = t.typed = RELEASED  # the summary reads only the table's file, duplicates and has_time
    summary = _summary(meta, final, tables, source_hash(path))
    summary = dataclasses.replace(summary, warnings=tuple(v.format() for v in warnings))
    has_time = {stem: t.has_time for stem, t in tables.items()}
    return Inspection(CheckReport(path, [], 0, summary, warnings), meta, final, has_time)


def check_source(path: str | Path, settings: CheckSettings | None = None) -> CheckReport:
    """Check the source folder at `path` against the raw-records contract; never raises for bad data.

    `settings`: the plausibility limits (params section `check`); None means the defaults.
    """
    from autovend.data.parts import is_partitioned, locate

    if is_partitioned(path):
        from autovend.data.partcheck import inspect_partitioned

        return inspect_partitioned(locate(path), settings).report
    return inspect_source(Path(path), settings).report
