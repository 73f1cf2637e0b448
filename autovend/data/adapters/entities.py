"""Describing machines and products from their written order lines: one value per machine or product.

A machine's (or product's) value of a column is the most frequent non-blank cell over its written rows
(ties go to the lowest), or '' when every cell is blank; the mapping's value map then gives what is written.
Machines or products whose rows disagree are reported as conflicts. A value the map does not cover, with
`otherwise: refuse`, or a written value the contract would refuse, is a `Violation` naming the rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.data.adapters.ids import sku_ids, slugify
from autovend.data.adapters.mapping import KEEP, REFUSE, Mapped, TableMapping
from autovend.data.adapters.parse import format_minor_units, recode
from autovend.data.adapters.result import Conflict, FieldReport
from autovend.data.adapters.rows import Lines
from autovend.data.check import ROWS_SHOWN, Violation
from autovend.data.contract import MACHINES, PRODUCTS, SITE_TYPE_PATTERN

MACHINE_COLUMNS: list[str] = [*MACHINES.column_names, "name"]
PRODUCT_COLUMNS: list[str] = list(PRODUCTS.column_names)


def modal(values: pd.Series, keys: pd.Series) -> pd.Series:
    """Most frequent value per key (ties go to the lowest value), indexed by key, sorted."""
    frame = pd.DataFrame({"k": keys.to_numpy(), "v": values.to_numpy()})
    counts = frame.groupby(["k", "v"], sort=False).size().rename("n").reset_index()
    counts = counts.sort_values(["k", "n", "v"], ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates("k").set_index("k")["v"]


@dataclass(frozen=True, eq=False)
class Written:
    """The rows written, as the entity step sees them: cells, keys, parsed fields and row numbers."""

    file: str
    cells: pd.DataFrame
    lines: Lines
    rows: np.ndarray  # 1-based row numbers, header excluded

    def modal_cell(self, column: str, keys: pd.Series, index: pd.Index) -> pd.Series:
        """Most frequent non-blank cell of `column` per key, '' when all blank, over `index` (the keys)."""
        text = self.cells[column]
        filled = text != ""
        return modal(text[filled], keys[filled]).reindex(index).fillna("").astype(object)

    def rows_of(self, keys: pd.Series, key: str, column: str, cell: str) -> tuple[int, ...]:
        """Row numbers where `keys` is `key` and `column` holds `cell`."""
        mask = (keys == key).to_numpy() & (self.cells[column] == cell).to_numpy()
        return tuple(int(r) for r in self.rows[mask])


def _violation(written: Written, rows: tuple[int, ...], column: str, problem: str, fix: str, cell: str) -> Violation:
    return Violation(written.file, problem, fix, column, rows[:ROWS_SHOWN], len(rows), (repr(cell),) if cell else ())


def describe(
    written: Written,
    keys: pd.Series,
    index: pd.Index,
    mapped: Mapped,
    key: str,
    valid: Callable[[str], bool],
    rule: str,
) -> tuple[pd.Series, FieldReport | None, list[Violation]]:
    """One text attribute per key (machine or product), its value-map report, and the violations."""
    if mapped.column is None:
        return pd.Series(mapped.value, index=index, dtype=object), None, []
    col = mapped.column
    cell = written.modal_cell(col, keys, index)
    out = cell.copy()
    hit = pd.Series(False, index=index)
    if mapped.values:
        coded = recode(cell, mapped.values)
        hit = coded.notna()
        out = coded.where(hit, cell)
    policy = mapped.policy
    thing = "machine" if key.startswith("machines.") else "product"
    problems: list[Violation] = []
    defaulted: list[str] = []
    for k in index[~hit.to_numpy()]:
        raw = cell[k]
        if policy == REFUSE:
            what = f"{col} {raw!r}" if raw else f"{col} blank on every row"
            problems.append(
                _violation(
                    written,
                    written.rows_of(keys, k, col, raw),
                    col,
                    f"{thing} {k!r} has {what}, which {key}.values does not map",
                    f"add {raw!r} to {key}.values in the mapping, or set {key}.otherwise (e.g. unknown)",
                    raw,
                )
            )
        elif policy != KEEP:
            out[k] = policy
            defaulted.append(str(k))
    for k in index[~out.map(valid).to_numpy(dtype=bool)]:
        if policy == REFUSE and not hit[k]:
            continue  # already reported
        raw = cell[k]
        problems.append(
            _violation(
                written,
                written.rows_of(keys, k, col, raw),
                col,
                f"{thing} {k!r} would get {key.split('.')[-1]} {out[k]!r} from {col} {raw!r}, which is not {rule}",
                f"map it in {key}.values, or set {key}.otherwise",
                raw,
            )
        )
    report = None
    if mapped.values:
        report = field_report(written.cells[col], mapped, key, tuple(defaulted))
    return out, report, problems


def field_report(text: pd.Series, mapped: Mapped, key: str, defaulted: tuple[str, ...] = ()) -> FieldReport:
    """What the value map did to the written cells of its column."""
    coded = recode(text, mapped.values)
    hit = coded.notna()
    applied = {str(v): str(t) for v, t in sorted(set(zip(text[hit], coded[hit], strict=True)))}
    unmapped = text[~hit].value_counts().sort_index()
    return FieldReport(
        key, str(mapped.column), applied, {str(k): int(n) for k, n in unmapped.items()}, mapped.policy, defaulted
    )


def conflicts(written: Written, keys: pd.Series, table: str, columns: list[str]) -> list[Conflict]:
    """Keys whose non-blank cells of a column differ: one Conflict per key and column."""
    out: list[Conflict] = []
    for col in dict.fromkeys(columns):
        text = written.cells[col]
        filled = (text != "").to_numpy()
        counts = pd.DataFrame({"k": keys[filled], "v": text[filled]}).groupby(["k", "v"], sort=True).size()
        n_values = counts.groupby(level=0).size()
        for k in n_values.index[n_values > 1]:
            out.append(Conflict(table, col, str(k), {str(v): int(n) for v, n in counts.loc[k].items()}))
    return out


def _site_type_ok(value: str) -> bool:
    return re.fullmatch(SITE_TYPE_PATTERN, value) is not None


def _any(value: str) -> bool:
    return True


def _non_blank(value: str) -> bool:
    return bool(value.strip())


@dataclass(frozen=True, eq=False)
class Described:
    """A table of machines or products, the value-map reports, the conflicts and the violations."""

    table: pd.DataFrame
    reports: list[FieldReport]
    conflicts: list[Conflict]
    problems: list[Violation]


def machines_table(written: Written, mapping: TableMapping) -> Described:
    """machines.csv: one row per machine id of the written rows, sorted by id."""
    m = mapping.machines
    keys = written.lines.machine
    index = pd.Index(sorted(keys.unique()), dtype=object)
    site, site_report, problems = describe(
        written, keys, index, m.site_type, "machines.site_type", _site_type_ok, "a lower-case name [a-z][a-z0-9_]*"
    )
    reports = [site_report]
    location = pd.Series("", index=index, dtype=object)
    if m.location is not None:
        slug = written.modal_cell(m.location, keys, index).map(slugify)
        location = (site + "/" + slug).where(slug != "", "")
    name = pd.Series("", index=index, dtype=object)
    if m.name is not None:
        name, name_report, name_problems = describe(written, keys, index, m.name, "machines.name", _any, "")
        reports.append(name_report)
        problems += name_problems
    capacity = pd.Series("", index=index, dtype=object)
    if m.capacity is not None and m.capacity.value is not None:
        capacity[:] = str(int(m.capacity.value))
    elif written.lines.capacity is not None:
        known = written.lines.capacity.notna().to_numpy()
        capacity = modal(written.lines.capacity[known].astype("int64"), keys[known]).reindex(index)
        capacity = capacity.map(lambda c: "" if pd.isna(c) else str(int(c))).astype(object)
    table = pd.DataFrame(
        {"machine_id": index, "site_type": site, "location": location, "capacity": capacity, "name": name},
        columns=MACHINE_COLUMNS,
    ).reset_index(drop=True)
    text_columns = [c for c in (m.site_type.column, m.location, m.name.column if m.name else None) if c]
    return Described(table, [r for r in reports if r], conflicts(written, keys, "machines", text_columns), problems)


def product_ids(keys: pd.Index, mapping: TableMapping) -> dict[str, str]:
    """sku_id per product cell: the cell itself, or made from it with the mapping's slug prefix."""
    prefix = mapping.orders.sku_id.slug_prefix
    return {k: k for k in keys} if prefix is None else sku_ids(keys, prefix)


def _amounts(values: pd.Series | None, keys: pd.Series, index: pd.Index, positive: bool) -> pd.Series:
    """Most frequent known (and, if `positive`, > 0) amount per key, in minor units; missing where none."""
    if values is None:
        return pd.Series(pd.NA, index=index, dtype="Int64")
    known = values.notna().to_numpy()
    if positive:
        known = known & (values > 0).fillna(False).to_numpy(dtype=bool)
    return modal(values[known].astype("int64"), keys[known]).reindex(index).astype("Int64")


def products_table(written: Written, mapping: TableMapping) -> Described:
    """products.csv: one row per product of the written rows, sorted by sku_id."""
    p = mapping.products
    keys = written.lines.sku
    index = pd.Index(sorted(keys.unique()), dtype=object)
    reports: list[FieldReport | None] = []
    problems: list[Violation] = []
    name = pd.Series("", index=index, dtype=object)
    if p.name is not None:
        name, report, found = describe(written, keys, index, p.name, "products.name", _any, "")
        reports.append(report)
        problems += found
    levels = []
    for key, mapped in (("products.category_l1", p.category_l1), ("products.category_l2", p.category_l2)):
        level, report, found = describe(written, keys, index, mapped, key, _non_blank, "a non-blank category")
        levels.append(level)
        reports.append(report)
        problems += found
    lines = written.lines
    ref = _amounts(lines.units if lines.ref_units is None else lines.ref_units, keys, index, positive=True)
    cost = _amounts(lines.cost_units, keys, index, positive=True)
    decimals = mapping.money.decimals
    ids = product_ids(index, mapping)
    table = pd.DataFrame(
        {
            "sku_id": [ids[k] for k in index],
            "name": name.to_numpy(),
            "category_l1": levels[0].to_numpy(),
            "category_l2": levels[1].to_numpy(),
            "ref_price": format_minor_units(ref, decimals).to_numpy(),
            "unit_cost": _optional_money(cost, decimals).to_numpy(),
            "shelf_life_days": "",
        },
        columns=PRODUCT_COLUMNS,
    ).sort_values("sku_id", ignore_index=True)
    text_columns = [m.column for m in (p.name, p.category_l1, p.category_l2) if m is not None and m.column]
    text_columns = [c for c in text_columns if c != mapping.orders.sku_id.column]
    return Described(table, [r for r in reports if r], conflicts(written, keys, "products", text_columns), problems)


def _optional_money(units: pd.Series, decimals: int) -> pd.Series:
    known = units.notna()
    out = pd.Series("", index=units.index, dtype=object)
    if known.any():
        out[known] = format_minor_units(units[known], decimals)
    return out
