"""Checking a partitioned source (`autovend.data.parts`) partition file by partition file, with the flat check's rules.

The small tables are checked as in a flat source. Each partition file of orders and inventory is then read,
coerced and checked on its own (`scan_part`: its text, its rules against the machines and products, the per-row
plausibility rules) and reduced to a small summary: lines per day, statuses, units, the machines it names, a
128-bit hash of each (order id, machine) pair. The rules that look across the whole table run on the combined
summaries: the gap rule and the declared period over the order dates (`plausibility.PeriodRule`), the inventory's
dates against that period, and an order id shared by lines of two machines in different partition files. Only
the partition files those rules flag are read a second time (`recheck_part`) to name their rows, so a source that
follows the contract is read once, and memory holds one partition file and the summaries (a few bytes per order).
Rows are counted within each partition file, which a violation names by its path in the source.

`scan_part` can also hand each clean partition's typed table to a `reduce` function (the calibration's daily
sales), so loading a source for calibration reads every file once.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend.data.checkreport import (
    CheckReport,
    SourceSummary,
    calendar_violations,
    known_keys,
)
from autovend.data.contract import DEFAULT_STATUS, META_FILE, STATUSES, TABLES, TABLES_BY_STEM, rule_schema
from autovend.data.parts import (
    PARTITIONED,
    Location,
    PartFile,
    combined_hash,
    file_digest,
    partition_files,
    read_part,
    small_files_folder,
    temporary_folder,
)
from autovend.data.plausibility import (
    CheckSettings,
    Period,
    PeriodRule,
    day_counts,
    inventory_findings,
    machine_findings,
    merge_day_counts,
    order_row_findings,
    period_rule,
    product_findings,
    weather_findings,
)
from autovend.data.source import TableReadError, finalise_table, read_meta
from autovend.data.tablecheck import Table, coerce_table, from_finding, load_table, rule_violations
from autovend.data.texthash import text_hashes
from autovend.data.violations import Violation, from_mask, in_column_order
from autovend.distinct import distinct

Reduce = Callable[[str, pd.DataFrame], Any]


@dataclass(frozen=True, eq=False)
class ScanContext:
    """What every partition's check needs: where the source is, the known ids, the products' prices, the limits."""

    loc: Location
    keys: dict[str, set[str]]
    products: pd.DataFrame | None  # typed products (for the price rule of the orders)
    settings: CheckSettings


@dataclass(frozen=True, eq=False)
class PartScan:
    """One partition file's check and summary."""

    part: PartFile
    errors: list[Violation]
    warnings: list[Violation]
    days: np.ndarray  # distinct days of ts (datetime64[ns]) and rows on each
    day_rows: np.ndarray
    has_time: bool
    duplicates: int
    size: int
    digest: str
    statuses: dict[str, int]  # orders: lines by status
    units_sold: int  # orders: units of completed lines
    first_ts: pd.Timestamp | None
    last_ts: pd.Timestamp | None
    machines: frozenset[str]  # orders: machines with a completed line; inventory: machines counted


ORDER_BUCKETS = 16  # the (order id, machine) keys of every partition file are compared in this many hash ranges
MACHINE_SEED = 0xA4093822299F31D0  # `texthash`'s seed for the machine ids of the keys


def order_keys(typed: pd.DataFrame, machines: set[str] | None) -> tuple[pd.DataFrame, ...]:
    """Each distinct (order id, machine) pair of the file's lines (machine known) as a 128-bit hash and a hash.

    Every machine of an order counts (as in the flat check, where all the lines of an order seen at two machines
    are marked, whichever file they are in). The keys come in `ORDER_BUCKETS` frames by hash range, so that all
    files' keys are compared one range at a time.
    """
    empty = pd.DataFrame({"h1": np.zeros(0, np.uint64), "h2": np.zeros(0, np.uint64), "m": np.zeros(0, np.uint64)})
    if not {"order_id", "machine_id"} <= set(typed.columns):
        return (empty,) * ORDER_BUCKETS
    ok = typed["order_id"].notna().to_numpy() & typed["machine_id"].notna().to_numpy()
    if machines is not None:
        ok &= typed["machine_id"].isin(pd.Index(list(machines), dtype="string")).fillna(False).to_numpy(dtype=bool)
    o_codes, o_uniques = pd.factorize(typed["order_id"][ok])
    m_codes, m_uniques = pd.factorize(typed["machine_id"][ok])
    n_m = max(len(m_uniques), 1)
    pair = distinct(o_codes.astype(np.int64) * n_m + m_codes)  # the distinct (order, machine) pairs
    order = text_hashes(o_uniques)[pair // n_m]  # each distinct id hashed once, from its Arrow buffer
    keys = pd.DataFrame(
        {"h1": order[:, 0], "h2": order[:, 1], "m": text_hashes(m_uniques, (MACHINE_SEED,))[pair % n_m, 0]}
    )
    bucket = (keys["h1"].to_numpy() >> np.uint64(60)).astype(np.int64)  # the top 4 bits: 16 ranges
    return tuple(keys[bucket == b].reset_index(drop=True) for b in range(ORDER_BUCKETS))


def shared_in(pieces: list[pd.DataFrame]) -> tuple[np.ndarray, set[int]]:
    """The order-id hashes (n, 2) found with more than one machine in one hash range, and the files that hold one.

    `pieces`: every file's keys of the range (`order_keys`); the files are their positions in it.
    """
    frames = [p.assign(part=i) for i, p in enumerate(pieces) if len(p)]
    if not frames:
        return np.zeros((0, 2), dtype=np.uint64), set()
    keys = pd.concat(frames, ignore_index=True)
    h1, h2, m = (keys[c].to_numpy(dtype=np.uint64) for c in ("h1", "h2", "m"))
    order = np.lexsort((m, h2, h1))  # by order id, then machine: an id's machines differ iff its first and last do
    s1, s2, sm = h1[order], h2[order], m[order]
    first = np.r_[True, (s1[1:] != s1[:-1]) | (s2[1:] != s2[:-1])]  # the first key of each order id
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(order)] - 1
    group = np.cumsum(first) - 1
    spread = np.empty(len(order), dtype=bool)
    spread[order] = (sm[starts] != sm[ends])[group]
    shared = keys[spread]
    ids = shared[["h1", "h2"]].drop_duplicates().to_numpy(dtype=np.uint64)
    return ids, set(shared["part"].tolist())


def _read(ctx: ScanContext, part: PartFile) -> tuple[Table | None, list[Violation]]:
    spec = TABLES_BY_STEM[part.stem]
    try:
        raw = read_part(ctx.loc, part, spec.column_names)
    except TableReadError as exc:
        return None, [Violation(part.name, exc.problem, exc.fix, column=exc.column, rows=exc.rows)]
    return coerce_table(spec, part.name, raw, empty_ok=True)


def _key_violations(table: Table, part: PartFile) -> list[Violation]:
    """Rows whose machine or month is not the one of their partition folders."""
    out: list[Violation] = []
    machine, month = part.key("machine_id"), part.key("month")
    if machine is not None and "machine_id" in table.raw.columns:
        other = (table.typed["machine_id"].notna() & (table.typed["machine_id"] != machine)).to_numpy(dtype=bool)
        if other.any():
            out.append(
                from_mask(
                    part.name, "machine_id", other, table.raw["machine_id"],
                    f"is not the machine of its partition folder (machine_id={machine})",
                    "move the rows to the folder of their machine, or correct the machine_id",
                )
            )  # fmt: skip
    if month is not None and "ts" in table.raw.columns:
        ts = table.typed["ts"]
        stamp = (ts.dt.year * 100 + ts.dt.month).to_numpy(dtype=float)  # 202406 for June 2024 (NaN where unknown)
        other = ts.notna().to_numpy() & (stamp != float(month.replace("-", "")))
        if other.any():
            out.append(
                from_mask(
                    part.name, "ts", other, table.raw["ts"],
                    f"is not in the month of its partition folder (month={month})",
                    "move the rows to the folder of their month, or correct the date",
                )
            )  # fmt: skip
    return out


def scan_part(
    part: PartFile, ctx: ScanContext, reduce: Reduce | None = None
) -> tuple[PartScan, Any, tuple[pd.DataFrame, ...]]:
    """Check one partition file (module docstring).

    Returns its scan, its typed table reduced by `reduce` if it is clean, and its order keys (`order_keys`).
    """
    size, digest = file_digest(ctx.loc, part.name)
    table, errors = _read(ctx, part)
    empty_days = (np.zeros(0, dtype="datetime64[ns]"), np.zeros(0, dtype=np.int64))
    none = order_keys(pd.DataFrame(), None)
    if table is None:
        return (
            PartScan(part, errors, [], *empty_days, False, 0, size, digest, {}, 0, None, None, frozenset()),
            None,
            none,
        )
    warnings: list[Violation] = []
    errors += _key_violations(table, part)
    typed = table.typed[[c for c in table.typed.columns if c in table.raw.columns]]
    if part.stem == "orders":
        for finding in order_row_findings({"orders": typed, "products": ctx.products}, ctx.settings):
            (warnings if finding.warning else errors).append(from_finding(table, finding))
    errors += rule_violations(table, ctx.keys)
    days, day_rows = day_counts(table.typed["ts"]) if "ts" in table.raw.columns else empty_days
    statuses: dict[str, int] = {}
    units, first, last, machines = 0, None, None, frozenset[str]()
    frame = table.typed
    keys = none
    if part.stem == "orders" and {"order_id", "machine_id"} <= set(table.raw.columns):
        keys = order_keys(frame, ctx.keys.get("machines"))
    if not errors:
        final = finalise_table(table.spec, frame)
        if part.stem == "orders":
            status = final["status"]
            statuses = {str(k): int(v) for k, v in status.value_counts().items()}
            completed = (status == DEFAULT_STATUS).to_numpy()
            units = int(np.sum(final["qty"].to_numpy(), where=completed))
            first, last = (final["ts"].min(), final["ts"].max()) if len(final) else (None, None)
            machines = frozenset(final["machine_id"][completed].unique().tolist())
        else:
            machines = frozenset(final["machine_id"].unique().tolist())
        scan = PartScan(part, errors, warnings, days, day_rows, table.has_time, table.duplicates, size, digest,
                        statuses, units, first, last, machines)  # fmt: skip
        return scan, reduce(part.stem, final) if reduce is not None else None, keys
    scan = PartScan(part, errors, warnings, days, day_rows, table.has_time, table.duplicates, size, digest,
                    statuses, units, first, last, machines)  # fmt: skip
    return scan, None, keys


@dataclass(frozen=True)
class Recheck:
    """The rules across partition files, settled on the summaries: what a flagged file is checked against."""

    rule: PeriodRule | None
    period: Period | None
    conflicts: np.ndarray  # (n, 2) uint64: hashes of order ids on lines of two machines in different files


def recheck_part(part: PartFile, ctx: ScanContext, across: Recheck) -> tuple[list[Violation], list[Violation]]:
    """The findings of the rules across partition files on one file's rows (errors, warnings)."""
    table, _ = _read(ctx, part)
    if table is None or "ts" not in table.raw.columns:
        return [], []
    typed = table.typed
    findings = []
    if part.stem == "orders" and across.rule is not None:
        findings += across.rule.findings(typed["ts"])
    if part.stem == "inventory" and across.period is not None:
        findings += inventory_findings({"inventory": typed}, across.period, ctx.settings)
    errors = [from_finding(table, f) for f in findings if not f.warning]
    warnings = [from_finding(table, f) for f in findings if f.warning]
    if part.stem == "orders" and len(across.conflicts) and {"order_id", "machine_id"} <= set(table.raw.columns):
        errors += _shared_orders(table, across.conflicts, ctx)
    return errors, warnings


def _shared_orders(table: Table, conflicts: np.ndarray, ctx: ScanContext) -> list[Violation]:
    """Lines whose order id is shared with lines of another machine in another partition file."""
    h = text_hashes(table.typed["order_id"].fillna("").astype(str))  # as `order_keys` hashed them
    known = pd.MultiIndex.from_arrays([conflicts[:, 0], conflicts[:, 1]])
    mask = pd.MultiIndex.from_arrays([h[:, 0], h[:, 1]]).isin(known) & table.typed["order_id"].notna().to_numpy()
    schema = rule_schema(table.spec, ctx.keys)
    check = next(c for c in schema.checks if c.title == "order_id")
    inside = check(table.typed).check_output.reindex(table.typed.index, fill_value=True).to_numpy(dtype=bool)
    mask &= inside  # lines the rule already marked within the file are reported once
    if not mask.any():
        return []
    return [from_mask(table.file, "order_id", mask, table.raw["order_id"], check.error, check.description)]


def _flagged(scan: PartScan, across: Recheck, settings: CheckSettings, sharing: bool) -> bool:
    """Whether a scanned file needs its second read (the rules across files may mark some of its rows)."""
    if scan.part.stem == "orders":
        return sharing or (across.rule is not None and across.rule.flags(scan.days))
    if across.period is None or not len(scan.days):
        return False
    margin = np.timedelta64(settings.max_gap_days, "D")
    first = np.datetime64(across.period.first.to_datetime64(), "ns") - margin
    last = np.datetime64(across.period.last.to_datetime64(), "ns") + margin
    return bool(np.any((scan.days < first) | (scan.days > last)))


@dataclass(frozen=True, eq=False)
class PartitionedInspection:
    """A partitioned source's check: the report; on success the small tables, the files and their reductions."""

    report: CheckReport
    meta: Any
    tables: dict[str, pd.DataFrame]  # the small tables, typed
    has_time: dict[str, bool]
    parts: list[PartFile]
    reduced: list[Any]  # what `reduce` made of each file (Refs of the executor), aligned with `parts`


def inspect_partitioned(
    loc: Location, settings: CheckSettings | None = None, reduce: Reduce | None = None, executor: Any = None
) -> PartitionedInspection:
    """Check a partitioned source (module docstring); `executor` (`autovend.parallel`) runs the file scans."""
    from autovend.parallel import LocalExecutor

    settings = settings or CheckSettings()
    executor = executor or LocalExecutor()
    with temporary_folder() as work:
        folder = small_files_folder(loc, Path(work))
        meta, meta_problems = read_meta(folder)
        errors = [Violation(META_FILE, problem, fix, column=key) for key, problem, fix in meta_problems]
        small: dict[str, Table] = {}
        table_errors: dict[str, list[Violation]] = {}
        for spec in TABLES:
            if spec.stem in PARTITIONED:
                continue
            table, found = load_table(folder, spec)
            table_errors[spec.stem] = found
            if table is not None:
                small[spec.stem] = table
        small_digests = [(p.name, *file_digest(loc, p.name)) for p in _small_paths(loc)]
    parts: list[PartFile] = []
    for stem in PARTITIONED:
        flat = [name for name in TABLES_BY_STEM[stem].file_names if loc.fs.exists(loc.path(name))]
        if flat:
            fix = f"keep the table in one place: the folder {stem}/ or {flat[0]}"
            table_errors[stem] = [Violation(flat[0], f"both {flat[0]} and the folder {stem}/ exist", fix)]
            continue
        if stem == "inventory" and not loc.fs.isdir(loc.path(stem)):
            table_errors[stem] = []
            continue
        found_parts, found = partition_files(loc, stem)
        parts += found_parts
        table_errors[stem] = found
    keys = known_keys(small)
    products = small["products"].typed if "products" in small and "ref_price" in small["products"].raw else None
    ctx = ScanContext(loc, keys, products, settings)
    refs = executor.submit(scan_part, parts, ctx, reduce)
    scans: list[PartScan] = executor.gather(executor.pick(refs, 0))
    reduced = executor.pick(refs, 1)
    keys = executor.pick(refs, 2)
    executor.release(refs)
    shared, sharing = [], set()
    for b in range(ORDER_BUCKETS):  # one hash range at a time: the keys of every file are never held at once
        ids, files = shared_in(executor.gather(executor.submit(operator.itemgetter(b), keys)))
        shared.append(ids)
        sharing |= files
    executor.release(keys)
    order_scans = [s for s in scans if s.part.stem == "orders"]
    rule = period_rule(*merge_day_counts([(s.days, s.day_rows) for s in order_scans]), settings)
    across = Recheck(rule, rule.period if rule is not None else None, np.concatenate(shared))
    flagged = [s.part for i, s in enumerate(scans) if _flagged(s, across, settings, i in sharing)]
    again = executor.gather(executor.submit(recheck_part, flagged, ctx, across))
    rechecked = dict(zip([p.name for p in flagged], again, strict=True))
    warnings: list[Violation] = []
    for scan in scans:
        table_errors[scan.part.stem] += scan.errors
        warnings += scan.warnings
        extra_errors, extra_warnings = rechecked.get(scan.part.name, ([], []))
        table_errors[scan.part.stem] += extra_errors
        warnings += extra_warnings
    typed = {stem: t.typed[[c for c in t.typed.columns if c in t.raw.columns]] for stem, t in small.items()}
    for finding in product_findings(typed, settings):
        (warnings if finding.warning else table_errors["products"]).append(from_finding(small["products"], finding))
    completed = sorted(set().union(*[s.machines for s in order_scans])) if order_scans else []
    seen = {
        **typed,
        "orders": pd.DataFrame({"machine_id": pd.Series(completed, dtype="str"), "status": DEFAULT_STATUS}),
    }
    for finding in weather_findings(typed, across.period, settings) + machine_findings(seen):
        (warnings if finding.warning else table_errors[finding.stem]).append(from_finding(small[finding.stem], finding))
    for spec in TABLES:
        found = table_errors.get(spec.stem, [])
        if spec.stem in small:
            found = found + rule_violations(small[spec.stem], keys)
        errors += in_column_order(spec, found)
    errors += calendar_violations(meta, small)
    n_errors = sum(v.count for v in errors)
    if n_errors or meta is None:
        return PartitionedInspection(CheckReport(loc.url, errors, n_errors, None, warnings), meta, {}, {}, parts, [])
    final = {stem: finalise_table(t.spec, t.typed) for stem, t in small.items()}
    digests = small_digests + [(s.part.name, s.size, s.digest) for s in scans]
    summary = _summary(meta, final, small, scans, combined_hash(digests))
    summary = dataclasses.replace(summary, warnings=tuple(v.format() for v in warnings))
    has_time = {stem: t.has_time for stem, t in small.items()}
    for stem in PARTITIONED:
        mine = [s for s in scans if s.part.stem == stem]
        if mine:
            has_time[stem] = any(s.has_time for s in mine)
    report = CheckReport(loc.url, [], 0, summary, warnings)
    return PartitionedInspection(report, meta, final, has_time, parts, reduced)


def _small_paths(loc: Location) -> list[PartFile]:
    from autovend.data.parts import SMALL_FILES

    return [PartFile("", name, ()) for name in (META_FILE, *SMALL_FILES) if loc.fs.isfile(loc.path(name))]


def _summary(
    meta: Any, final: dict[str, pd.DataFrame], small: dict[str, Table], scans: list[PartScan], content_hash: str
) -> SourceSummary:
    machines, products = final["machines"], final["products"]
    orders = [s for s in scans if s.part.stem == "orders"]
    inventory = [s for s in scans if s.part.stem == "inventory"]
    by_site = machines["site_type"].value_counts()
    cats = products.groupby("category_l1", sort=True).agg(n=("sku_id", "size"), l2=("category_l2", "nunique"))
    statuses = {s: sum(scan.statuses.get(s, 0) for scan in orders) for s in STATUSES}
    all_ids = machines["machine_id"]
    counted = all_ids.isin(sorted(set().union(*[s.machines for s in inventory]))) if inventory else None
    firsts = [s.first_ts for s in orders if s.first_ts is not None]
    lasts = [s.last_ts for s in orders if s.last_ts is not None]
    duplicates = {t.file: t.duplicates for t in small.values()}
    for stem in PARTITIONED:
        mine = [s for s in scans if s.part.stem == stem]
        if mine:
            duplicates[f"{stem}/"] = sum(s.duplicates for s in mine)
    return SourceSummary(
        name=meta.name,
        machines_by_site_type={str(k): int(v) for k, v in by_site.items()},
        products_by_category={str(k): (int(r.n), int(r.l2)) for k, r in cats.iterrows()},
        order_lines=statuses,
        units_sold=sum(s.units_sold for s in orders),
        first_ts=min(firsts),
        last_ts=max(lasts),
        orders_have_time=any(s.has_time for s in orders),
        has_inventory=bool(inventory),
        machines_with_inventory=int(counted.sum()) if counted is not None else 0,
        machines_without_inventory=tuple(sorted(all_ids[~counted].astype(str)))
        if counted is not None
        else tuple(sorted(all_ids.astype(str))),
        duplicate_rows=duplicates,
        content_hash=content_hash,
    )


def small_tables(loc: Location) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The typed machines and products of a partitioned source (None for one that breaks the contract)."""
    out: list[pd.DataFrame | None] = []
    with temporary_folder() as work:
        folder = small_files_folder(loc, Path(work))
        for stem in ("machines", "products"):
            table, found = load_table(folder, TABLES_BY_STEM[stem])
            out.append(finalise_table(table.spec, table.typed) if table is not None and not found else None)
    return out[0], out[1]
