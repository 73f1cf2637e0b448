"""Reading the order-line fields of a one-table export row by row, and the reasons rows are left out.

Each row is either kept or left out for exactly one reason, the first that applies in this order: every
cell the mapping reads is blank (trailing rows of a spreadsheet export), `drop_rows`, a blank product, the
status, a blank machine, the order id, the timestamp, the quantity, the unit price, the extra columns, the
product and machine number columns (ref_price, unit_cost, capacity), and last a product never sold at a
price > 0 when ref_price comes from the unit prices. Reasons of *bad* rows (unreadable as the mapping says)
carry the column and the fix; rows left out on purpose are not bad.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.data.adapters.mapping import DROP, KEEP, REFUSE, ColumnOrValue, Mapped, TableMapping
from autovend.data.adapters.parse import Parsed, parse_minor_units, parse_times, parse_whole, recode
from autovend.data.adapters.result import DropGroup
from autovend.data.contract import DEFAULT_STATUS, STATUSES
from autovend.data.source import YEARS

NO_REF_PRICE = "product never sold at a price > 0 (no ref_price)"


class Drops:
    """The first reason each row is left out for; reasons keep the order they were added in."""

    def __init__(self, n_rows: int) -> None:
        self.code = np.full(n_rows, -1, dtype=np.int64)
        self.groups: list[DropGroup] = []

    @property
    def kept(self) -> np.ndarray:
        """Rows not left out so far."""
        return self.code < 0

    def add(self, mask: np.ndarray | pd.Series, reason: str, *, column: str | None, fix: str, bad: bool = True) -> None:
        """Leave out the rows of `mask` not already left out, for `reason`."""
        new = np.asarray(mask, dtype=bool) & self.kept
        if new.any():
            self.code[new] = len(self.groups)
            self.groups.append(DropGroup(reason, (), bad, column, fix))

    def add_per_value(
        self, mask: np.ndarray | pd.Series, text: pd.Series, reason: str, *, column: str, fix: str, bad: bool = True
    ) -> None:
        """As `add`, one reason per distinct cell (in sorted order); `{v}` in reason and fix is the cell's repr."""
        new = np.asarray(mask, dtype=bool) & self.kept
        if not new.any():
            return
        cells = text[new]
        values = sorted(cells.unique())
        codes = pd.Categorical(cells, categories=values).codes.astype(np.int64)
        self.code[np.flatnonzero(new)] = len(self.groups) + codes
        self.groups += [DropGroup(reason.format(v=repr(v)), (), bad, column, fix.format(v=repr(v))) for v in values]

    def result(self) -> tuple[DropGroup, ...]:
        """The groups with their rows (1-based, header excluded)."""
        rows = np.arange(len(self.code), dtype=np.int64) + 1
        return tuple(
            DropGroup(g.reason, tuple(int(r) for r in rows[self.code == i]), g.bad, g.column, g.fix)
            for i, g in enumerate(self.groups)
        )


@dataclass(frozen=True, eq=False)
class Lines:
    """The order-line fields of every row (meaningful on kept rows only); money in integer minor units."""

    order_id: pd.Series
    machine: pd.Series
    sku: pd.Series  # the export's product cell; sku ids are made from it later
    ts: pd.Series
    qty: pd.Series
    units: pd.Series  # unit price
    status: pd.Series
    extra: dict[str, pd.Series]
    ref_units: pd.Series | None  # products.ref_price column
    cost_units: pd.Series | None  # products.unit_cost column
    capacity: pd.Series | None  # machines.capacity column

    def take(self, mask: np.ndarray) -> Lines:
        """The fields of the rows in `mask`, re-indexed from 0."""

        def sub(series: pd.Series | None) -> pd.Series | None:
            return None if series is None else series[mask].reset_index(drop=True)

        return Lines(
            order_id=sub(self.order_id),
            machine=sub(self.machine),
            sku=sub(self.sku),
            ts=sub(self.ts),
            qty=sub(self.qty),
            units=sub(self.units),
            status=sub(self.status),
            extra={name: series[mask].reset_index(drop=True) for name, series in self.extra.items()},
            ref_units=sub(self.ref_units),
            cost_units=sub(self.cost_units),
            capacity=sub(self.capacity),
        )


def _constant(cells: pd.DataFrame, value: object) -> pd.Series:
    return pd.Series([value] * len(cells), index=cells.index, dtype=object)


def row_field(cells: pd.DataFrame, mapped: Mapped, key: str, drops: Drops, allowed: tuple[str, ...] = ()) -> pd.Series:
    """A text field of each row: the cell recoded by the value map, leaving out rows as `otherwise` says.

    With `allowed`, written values must be one of them (compared ignoring case, written lower case); a blank is
    allowed and left blank.
    """
    if mapped.column is None:
        return _constant(cells, mapped.value)
    col = mapped.column
    text = cells[col]
    out = text.astype(object)
    miss = np.ones(len(text), dtype=bool)
    if mapped.values:
        coded = recode(text, mapped.values)
        hit = coded.notna().to_numpy()
        out = coded.where(hit, text)
        drops.add_per_value(
            hit & (coded == DROP).to_numpy(),
            text,
            f"{col} {{v}} maps to drop ({key}.values)",
            column=col,
            fix="",
            bad=False,
        )
        miss = ~hit
    policy = mapped.policy
    if policy == DROP:
        drops.add_per_value(
            miss, text, f"{col} {{v}} is not in {key}.values (otherwise: drop)", column=col, fix="", bad=False
        )
    elif policy == REFUSE:
        drops.add_per_value(
            miss,
            text,
            f"{col} {{v}} is not in {key}.values",
            column=col,
            fix=f"add {{v}} to {key}.values in the mapping, or set {key}.otherwise",
        )
    elif policy != KEEP:
        out = out.where(~miss, policy)
    if allowed:
        low = out.str.casefold()
        ok = (low.isin(allowed) | (low == "")).to_numpy()
        drops.add_per_value(
            ~ok,
            text,
            f"{col} {{v}} is not one of {', '.join(allowed)}",
            column=col,
            fix=f"map it in {key}.values (e.g. {{v}}: {allowed[0]})",
        )
        out = low.where(ok, out)
    return out


def _blank(drops: Drops, cells: pd.DataFrame, col: str, what: str) -> None:
    drops.add(cells[col] == "", f"{col} is blank", column=col, fix=f"give every line {what} in {col}")


def _whole(cells: pd.DataFrame, field: ColumnOrValue, mapping: TableMapping, drops: Drops, minimum: int) -> pd.Series:
    if field.column is None:
        return _constant(cells, int(str(field.value))).astype("Int64")
    parsed = parse_whole(cells[field.column], mapping.money, minimum)
    drops.add(
        parsed.bad,
        f"{field.column} is not a whole number >= {minimum}",
        column=field.column,
        fix=f"write a whole number >= {minimum}, e.g. 2",
    )
    return parsed.values


def _amount_text(mapping: TableMapping) -> str:
    money = mapping.money
    example = "3" if money.decimals == 0 else "3" + money.decimal + "5".ljust(money.decimals, "0")
    separator = f"{money.decimal!r} as decimal separator"
    return f"an amount >= 0 with at most {money.decimals} decimals and {separator} (e.g. {example})"


def _optional_amount(cells: pd.DataFrame, col: str | None, mapping: TableMapping, drops: Drops) -> pd.Series | None:
    """An optional per-row amount > 0 (ref_price, unit_cost): blank cells are unknown, others must parse."""
    if col is None:
        return None
    parsed: Parsed = parse_minor_units(cells[col], mapping.money)
    bad = (parsed.bad | (parsed.values == 0).fillna(False).to_numpy()) & (cells[col] != "").to_numpy()
    drops.add(
        bad, f"{col} is not an amount > 0", column=col, fix=f"write {_amount_text(mapping)} and > 0, or leave it blank"
    )
    return parsed.values.where(~parsed.bad)


def _order_id(cells: pd.DataFrame, mapping: TableMapping, drops: Drops) -> pd.Series:
    spec = mapping.orders.order_id
    if spec.per_row:
        return pd.Series((np.arange(len(cells)) + 1).astype(str), index=cells.index, dtype=object)
    cols = list(spec.sources())
    for col in cols:
        _blank(drops, cells, col, "its transaction id")
    return cells[cols].astype(str).agg("|".join, axis=1) if len(cols) > 1 else cells[cols[0]].astype(object)


def _times(cells: pd.DataFrame, mapping: TableMapping, drops: Drops) -> pd.Series:
    ts = mapping.orders.ts
    parsed = parse_times(cells[ts.column], ts.formats)
    forms = " or ".join(ts.formats)
    drops.add(
        parsed.unreadable,
        f"{ts.column} is not a date in the form {forms}",
        column=ts.column,
        fix=f"write it as {forms}, or add the export's form to orders.ts.formats",
    )
    drops.add(
        parsed.ambiguous,
        f"{ts.column} reads as different dates in the forms {forms}",
        column=ts.column,
        fix="keep only the export's own form in orders.ts.formats (day-first and month-first cannot both be listed)",
    )
    drops.add(
        parsed.out_of_years,
        f"{ts.column} is outside the years {YEARS[0]}-{YEARS[1]}",
        column=ts.column,
        fix="give the real date; a placeholder date is not one",
    )
    return parsed.values


def read_lines(cells: pd.DataFrame, mapping: TableMapping, drops: Drops) -> Lines:
    """Every order-line field, leaving out (in `drops`) each row that cannot be read or is dropped on purpose."""
    o = mapping.orders
    empty = (cells == "").all(axis=1).to_numpy()
    drops.add(empty, "every cell the mapping reads is blank", column=None, fix="", bad=False)
    for rule in mapping.drop_rows:
        folded = {v.strip().casefold() for v in rule.values}
        hit = cells[rule.column].str.casefold().isin(folded)
        values = " or ".join(repr(v) for v in rule.values)
        drops.add(hit, f"{rule.column} is {values} (drop_rows)", column=rule.column, fix="", bad=False)
    _blank(drops, cells, o.sku_id.column, "a product")
    if o.status is None:
        status = _constant(cells, DEFAULT_STATUS)
    else:
        status = row_field(cells, o.status, "orders.status", drops, STATUSES).replace("", DEFAULT_STATUS)
    if o.machine_id.column is not None:
        _blank(drops, cells, o.machine_id.column, "a machine id")
        machine = cells[o.machine_id.column].astype(object)
    else:
        machine = _constant(cells, o.machine_id.value)
    order_id = _order_id(cells, mapping, drops)
    ts = _times(cells, mapping, drops)
    qty = _whole(cells, o.qty, mapping, drops, minimum=1)
    price = parse_minor_units(cells[o.unit_price], mapping.money)
    drops.add(
        price.bad,
        f"{o.unit_price} is not {_amount_text(mapping)}",
        column=o.unit_price,
        fix=f"write {_amount_text(mapping)}",
    )
    extra = {name: row_field(cells, mapped, f"orders.extra.{name}", drops) for name, mapped in o.extra.items()}
    ref_units = _optional_amount(cells, mapping.products.ref_price, mapping, drops)
    cost_units = _optional_amount(cells, mapping.products.unit_cost, mapping, drops)
    capacity = None
    if (cap := mapping.machines.capacity) is not None and cap.column is not None:
        blank = (cells[cap.column] == "").to_numpy()
        parsed = parse_whole(cells[cap.column], mapping.money, 1)
        drops.add(
            parsed.bad & ~blank,
            f"{cap.column} is not a whole number >= 1",
            column=cap.column,
            fix="write the units a machine holds, or leave it blank",
        )
        capacity = parsed.values
    lines = Lines(
        order_id, machine, cells[o.sku_id.column], ts, qty, price.values, status, extra, ref_units, cost_units, capacity
    )
    _drop_unpriced(lines, mapping, drops)
    return lines


def _drop_unpriced(lines: Lines, mapping: TableMapping, drops: Drops) -> None:
    """Leave out the products that would get no ref_price > 0 from the kept rows."""
    kept = drops.kept
    source = lines.units if lines.ref_units is None else lines.ref_units
    priced = lines.sku[kept & (source > 0).fillna(False).to_numpy()].unique()
    col = mapping.orders.unit_price if lines.ref_units is None else mapping.products.ref_price
    reason = NO_REF_PRICE if lines.ref_units is None else f"product with no {col} > 0 on any row (no ref_price)"
    drops.add(
        kept & ~lines.sku.isin(priced).to_numpy(),
        reason,
        column=col,
        fix="give products.ref_price a column of list prices, or leave such products out with bad_rows: drop",
    )
