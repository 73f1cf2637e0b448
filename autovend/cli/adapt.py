"""The `autovend adapt` commands: turn an operator's one-table export, or the public NJ export, into a source."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from autovend.cli.app import app
from autovend.marks import counted

if TYPE_CHECKING:
    from rich.console import Console

    from autovend.data.adapters.result import AdaptResult

adapt_app = typer.Typer(
    help="Turn a public or operator export into a source folder under the raw-records contract.",
    no_args_is_help=True,
)
app.add_typer(adapt_app, name="adapt")

MAX_LINES_SHOWN = 20  # line numbers listed per drop reason before "... and N more"
PARTITIONED_HELP = "Write the orders as hive-partitioned Parquet by these keys: machine_id, month or machine_id,month."


@adapt_app.callback()
def _adapt() -> None:
    """Turn a public or operator export into a source folder under the raw-records contract."""


@adapt_app.command("table")
def table(
    export: Annotated[Path, typer.Argument(help="The export: a CSV with one row per order line; only read.")],
    mapping: Annotated[Path, typer.Option("--map", "-m", help="Mapping YAML (see docs/data-contract.md).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Source folder to write (must be empty or new).")],
    force: Annotated[bool, typer.Option("--force", help="Replace a non-empty output folder.")] = False,
    partitioned: Annotated[str | None, typer.Option("--partitioned", help=PARTITIONED_HELP)] = None,
) -> None:
    """Adapt a one-table export (any column names, date forms, currency) into a source, as a mapping says."""
    from rich.console import Console
    from rich.markup import escape

    from autovend.data.adapters.files import write_table_source

    by = _by(partitioned)
    result = write_table_source(export, mapping, out, force=force, partition_by=by)
    console = Console(emoji=False)
    print_report(result, console)
    console.print(
        f"[green]wrote[/] {escape(str(out))} (source.yaml, machines.csv, products.csv, {_orders(by)})", soft_wrap=True
    )


@adapt_app.command("nj-vending")
def nj_vending(
    csv_path: Annotated[Path, typer.Argument(help="vending_machine_sales.csv (full-year 2022 NJ export); only read.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Source folder to write (new, empty, or an earlier output of adapt).")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Replace an output folder that holds other files than an earlier source.")
    ] = False,
    partitioned: Annotated[str | None, typer.Option("--partitioned", help=PARTITIONED_HELP)] = None,
) -> None:
    """Adapt the public New Jersey vending export (Kaggle, 2022) with its packaged mapping."""
    from rich.console import Console
    from rich.markup import escape

    from autovend.data.adapters.nj_vending import write_nj_vending

    by = _by(partitioned)
    result = write_nj_vending(csv_path, out, force=force, partition_by=by)
    console = Console(emoji=False)
    print_report(result, console)
    console.print(
        f"[green]wrote[/] {escape(str(out))} (source.yaml, machines.csv, products.csv, {_orders(by)})", soft_wrap=True
    )


@adapt_app.command("partition")
def partition(
    source: Annotated[Path, typer.Argument(help="A source folder with orders (and inventory) as files; only read.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Source folder to write (new, empty, or an earlier one).")],
    by: Annotated[str, typer.Option("--by", help="Partition keys: machine_id, month or machine_id,month.")] = "month",
    force: Annotated[bool, typer.Option("--force", help="Replace an output folder that holds other files.")] = False,
) -> None:
    """Copy a source with its orders and inventory as hive-partitioned Parquet folders (docs/scale.md)."""
    from rich.console import Console
    from rich.markup import escape

    from autovend.data.partwrite import partition_keys, partition_source

    files = partition_source(source, out, partition_keys(by), force=force)
    Console(emoji=False).print(f"[green]wrote[/] {escape(str(out))} ({files:,} partition files by {by})")


def _by(text: str | None) -> tuple[str, ...] | None:
    from autovend.data.partwrite import partition_keys

    return None if text is None else partition_keys(text)


def _orders(by: tuple[str, ...] | None) -> str:
    return "orders.csv" if by is None else f"orders/ partitioned by {','.join(by)}"


@adapt_app.command("eva-dts")
def eva_dts(
    audits: Annotated[list[Path], typer.Argument(help="EVA-DTS (DEX/UCS) audit files, or folders of *.dex files.")],
    products: Annotated[Path, typer.Option("--products", help="CSV: sku_id (PA103), category_l1, category_l2, ...")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Source folder to write (new, empty or an earlier one).")],
    name: Annotated[str, typer.Option("--name", help="The source's name (lower-case letters, digits, '-').")],
    timezone: Annotated[str, typer.Option("--timezone", help="IANA time zone of the reads, e.g. Europe/Kyiv.")],
    country: Annotated[str, typer.Option("--country", help="ISO 3166 country code, e.g. UA (holidays).")],
    currency: Annotated[str | None, typer.Option("--currency", help="ISO 4217 code, if the audits lack ID4.")] = None,
    machines: Annotated[
        Path | None, typer.Option("--machines", help="CSV: machine_id (ID101), site_type, location?, capacity?")
    ] = None,
    made_to_order: Annotated[bool, typer.Option("--made-to-order", help="Drinks made per sale.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an output folder that holds other files.")] = False,
) -> None:
    """Adapt series of EVA-DTS audits per machine into a source: sales between reads, reads as visits.

    Sales between two reads are spread over the interval's days (an audit does not know the day of a sale);
    each machine needs two audits or more. docs/data-contract.md, "EVA-DTS audits".
    """
    from rich.console import Console
    from rich.markup import escape

    from autovend.data.adapters.files import write_eva_dts_source

    meta: dict[str, object] = {"name": name, "timezone": timezone, "country": country, "currency": currency or ""}
    if made_to_order:
        meta["made_to_order"] = True
    res = write_eva_dts_source(audits, products, out, meta, machines_csv=machines, force=force)
    console = Console(emoji=False, highlight=False)
    units = int(res.orders["qty"].sum())
    console.print(
        f"adapted {counted(res.visits['machine_id'].nunique(), 'machine')}, {counted(len(res.visits), 'audit')}: "
        f"{units:,} units of {counted(res.orders['sku_id'].nunique(), 'product')} in {res.source['currency']}, "
        f"{res.orders['ts'].min()} .. {res.orders['ts'].max()}",
        soft_wrap=True,
    )
    for note in res.notes:
        console.print(f"[yellow]selection changed product:[/] {escape(note)}", soft_wrap=True)
    console.print(
        f"[green]wrote[/] {escape(str(out))} (source.yaml, machines.csv, products.csv, orders.csv, visits.csv)",
        soft_wrap=True,
    )


def _rows_text(rows: tuple[int, ...]) -> str:
    shown = ", ".join(str(x) for x in rows[:MAX_LINES_SHOWN])
    if len(rows) > MAX_LINES_SHOWN:
        shown += f", ... and {len(rows) - MAX_LINES_SHOWN} more"
    return shown


def print_report(result: AdaptResult, console: Console) -> None:
    """Print what the adapter read, wrote, left out, mapped and found conflicting.

    Every text from the export or the mapping is printed as text, never read as rich markup (a cell may hold
    "[/x]"), hence `escape` (`_e`).
    """
    from rich.markup import escape as _e
    from rich.table import Table

    counts = Table(title=f"adapted {_e(str(result.source['name']))}", show_header=False)
    counts.add_column("what")
    counts.add_column("count", justify="right")
    orders = result.orders
    rows = [
        ("rows read", result.rows_read),
        ("order lines written", result.rows_written),
        ("rows left out", result.rows_dropped),
        ("machines", len(result.machines)),
        ("products", len(result.products)),
        ("transactions", orders["order_id"].nunique()),
        ("units (all lines)", result.n_units),
        ("units (completed)", result.n_completed_units),
    ]
    for what, n in rows:
        counts.add_row(what, f"{n:,}")
    if len(orders):
        counts.add_row("dates", _e(f"{orders['ts'].min()} .. {orders['ts'].max()}"))
    console.print(counts)

    if result.dropped:
        drops = Table(title="rows left out (1-based, header excluded)")
        drops.add_column("reason")
        drops.add_column("kind")
        drops.add_column("rows", justify="right")
        drops.add_column("row numbers")
        for group in result.dropped:
            kind = "bad row" if group.bad else "on purpose"
            drops.add_row(_e(group.reason), kind, f"{group.n_rows:,}", _rows_text(group.rows))
        console.print(drops)

    if result.fields:
        maps = Table(title="value maps applied to the written rows")
        maps.add_column("mapping key")
        maps.add_column("column")
        maps.add_column("cell")
        maps.add_column("becomes")
        for field in result.fields:
            for raw, value in field.applied.items():
                maps.add_row(_e(field.key), _e(field.column), _e(raw) or "(blank)", _e(value))
        console.print(maps)
    for field in result.fields:
        for raw, n in field.unmapped.items():
            becomes = "kept as is" if field.policy == "keep" else f"-> {field.policy}"
            console.print(
                f"[yellow]not in {_e(field.key)}.values[/] {_e(field.column)} {_e(raw) or '(blank)'}: {n:,} rows, "
                f"{_e(becomes)}"
            )
        if field.defaulted:
            names = "; ".join(field.defaulted)
            console.print(f"[yellow]{len(field.defaulted)} with {_e(field.key)} = {_e(field.policy)}:[/] {_e(names)}")
    for conflict in result.conflicts:
        detail = ", ".join(f"{v} {n:,}" for v, n in conflict.counts.items())
        what = f"{conflict.table[:-1]} with several {conflict.column}"
        console.print(f"[yellow]{_e(what)}[/] {_e(conflict.key)}: {_e(detail)} (most frequent kept)")
