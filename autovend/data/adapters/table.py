"""The generic adapter: a one-table export (one row per order line) to a source, as a TableMapping says.

Life cycle of `adapt_table` (pure, no I/O): check that the columns the mapping names exist -> trim every
cell -> leave out the rows whose number of cells is not the header's (bad rows, see `reader`) -> read the
order-line fields row by row, leaving out each row that cannot be read or is dropped on purpose, for one
reason (`autovend.data.adapters.rows`) -> with `bad_rows: refuse`, stop at any unreadable row with an
AdaptError naming the file, rows, column and fix -> stop if no row is left to write -> describe each machine
and product from its written rows (`autovend.data.adapters.entities`); a value no map covers stops it too
-> the tables. The files are read (`autovend.data.adapters.reader`) and written by
`autovend.data.adapters.files`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.data.adapters.entities import Written, machines_table, product_ids, products_table
from autovend.data.adapters.entities import field_report as _field_report
from autovend.data.adapters.mapping import DOC, REFUSE, TableMapping
from autovend.data.adapters.parse import format_minor_units
from autovend.data.adapters.reader import RAGGED_ATTR
from autovend.data.adapters.result import AdaptResult, DropGroup, FieldReport
from autovend.data.adapters.rows import Drops, Lines, read_lines
from autovend.data.check import EXAMPLES_SHOWN, ROWS_SHOWN, Violation
from autovend.data.contract import ORDERS
from autovend.errors import AdaptError

MAX_PROBLEMS_SHOWN = 20


def _cells(raw: pd.DataFrame, mapping: TableMapping, file: str) -> pd.DataFrame:
    """The columns the mapping reads, as trimmed text ('' for a blank cell), rows re-indexed from 0."""
    named = mapping.columns()
    missing = sorted(c for c in named if c not in raw.columns)
    if missing:
        where = "; ".join(f"{c!r} at {named[c]}" for c in missing)
        raise AdaptError(
            f"{file} lacks the columns {missing} that the mapping names ({where}); found {list(raw.columns)}. "
            "Fix: write the export's column names in the mapping (they are case-sensitive), or export those columns."
        )
    return pd.DataFrame(
        {c: raw[c].astype("string").fillna("").str.strip().astype(object) for c in named}, index=range(len(raw))
    )


def _ragged(raw: pd.DataFrame, drops: Drops) -> None:
    """Leave out (as bad rows) the rows whose number of cells differs from the header's (`RAGGED_ATTR`)."""
    ragged: dict[int, int] = raw.attrs.get(RAGGED_ATTR, {})
    width = len(raw.columns)
    for n in sorted(set(ragged.values())):
        mask = np.zeros(len(raw), dtype=bool)
        mask[[i for i, count in ragged.items() if count == n]] = True
        if n > width:
            fix = "quote each cell that holds the delimiter, or remove the extra cells"
        else:
            fix = "give the row a cell for every column of the header (an empty cell still needs its delimiter)"
        drops.add(mask, f"the row has {n} cells, the header {width}", column=None, fix=fix)


def _nothing_written(file: str, groups: tuple[DropGroup, ...]) -> AdaptError:
    """The error of an export that gives no order line: no data row at all, or every row left out on purpose."""
    if not groups:
        return AdaptError(
            f"{file} has a header but no data rows: there is no order line to write. Fix: export the order lines "
            "with the header (a source needs at least one)"
        )
    reasons = "; ".join(f"{g.reason} ({g.n_rows:,} rows)" for g in groups[:MAX_PROBLEMS_SHOWN])
    return AdaptError(
        f"{file}: every row is left out ({reasons}), so there is no order line to write. Fix: check drop_rows and "
        f"the values mapped to drop in the mapping, or bad_rows: drop, against the export (see {DOC})"
    )


def _refusal(file: str, groups: list[DropGroup], cells: pd.DataFrame) -> AdaptError:
    """One error listing the bad rows by reason: file, rows, column, example cells and the fix."""
    problems = []
    for g in groups:
        idx = np.asarray(g.rows, dtype=np.int64) - 1
        examples: tuple[str, ...] = ()
        if g.column is not None:
            values = [v for v in pd.unique(cells[g.column].to_numpy()[idx]) if v != ""][:EXAMPLES_SHOWN]
            examples = tuple(repr(str(v)) for v in values)
        problems.append(Violation(file, g.reason, g.fix, g.column, g.rows[:ROWS_SHOWN], g.n_rows, examples))
    return _error(
        f"{file}: {sum(g.n_rows for g in groups):,} rows cannot be read as the mapping says (bad_rows: refuse)",
        problems,
        "fix these rows or the mapping, or set bad_rows: drop to leave such rows out (they are counted)",
    )


def _error(head: str, problems: list[Violation], fix: str) -> AdaptError:
    shown = [f"  {p.format()}" for p in problems[:MAX_PROBLEMS_SHOWN]]
    if len(problems) > MAX_PROBLEMS_SHOWN:
        shown.append(f"  ... and {len(problems) - MAX_PROBLEMS_SHOWN} more")
    return AdaptError(f"{head}:\n" + "\n".join(shown) + f"\nThen: {fix} (see {DOC}).")


def _orders(lines: Lines, mapping: TableMapping, sku_of: dict[str, str]) -> pd.DataFrame:
    ts_form = "%Y-%m-%dT%H:%M:%S" if mapping.orders.ts.with_time else "%Y-%m-%d"
    columns = [*ORDERS.column_names, *mapping.orders.extra]
    frame = pd.DataFrame(
        {
            "order_id": lines.order_id.astype(str),
            "machine_id": lines.machine.astype(str),
            "sku_id": lines.sku.map(sku_of),
            "ts": lines.ts.dt.strftime(ts_form),
            "qty": lines.qty.astype("int64"),
            "unit_price": format_minor_units(lines.units, mapping.money.decimals),
            "status": lines.status,
            **lines.extra,
        },
        columns=columns,
    )
    return frame


def _row_reports(cells: pd.DataFrame, mapping: TableMapping) -> list[FieldReport]:
    """Reports of the order-line value maps (status, extra columns) over the written rows."""
    fields = [("orders.status", mapping.orders.status)]
    fields += [(f"orders.extra.{name}", mapped) for name, mapped in mapping.orders.extra.items()]
    return [_field_report(cells[m.column], m, key) for key, m in fields if m is not None and m.values and m.column]


def adapt_table(raw: pd.DataFrame, mapping: TableMapping, file: str = "the export") -> AdaptResult:
    """Map a one-table export (every column read as text, file order) onto the raw-records contract.

    `file` names the export in errors. Nothing is read or written here; see `write_table_source`.
    """
    cells = _cells(raw, mapping, file)
    drops = Drops(len(cells))
    _ragged(raw, drops)
    lines = read_lines(cells, mapping, drops)
    groups = drops.result()
    bad = [g for g in groups if g.bad]
    if bad and mapping.bad_rows == REFUSE:
        raise _refusal(file, bad, cells)
    kept = drops.kept
    if not kept.any():
        raise _nothing_written(file, groups)
    written = Written(
        file, cells[kept].reset_index(drop=True), lines.take(kept), np.flatnonzero(kept).astype(np.int64) + 1
    )
    machines = machines_table(written, mapping)
    products = products_table(written, mapping)
    problems = machines.problems + products.problems
    if problems:
        raise _error(
            f"{file}: {len(problems)} machine or product values cannot be written as the mapping says",
            problems,
            "extend the value maps or set their `otherwise`",
        )
    sku_of = product_ids(pd.Index(sorted(written.lines.sku.unique())), mapping)
    return AdaptResult(
        source=mapping.source.model_dump(exclude_none=True, exclude_defaults=True),
        machines=machines.table,
        products=products.table,
        orders=_orders(written.lines, mapping, sku_of),
        rows_read=len(cells),
        dropped=groups,
        fields=tuple(_row_reports(written.cells, mapping) + machines.reports + products.reports),
        conflicts=tuple(machines.conflicts + products.conflicts),
    )
