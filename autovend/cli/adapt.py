"""The `autovend adapt` commands: turn a public or operator export into a source folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from autovend.cli.app import app

if TYPE_CHECKING:
    from rich.console import Console

    from autovend.data.adapters.nj_vending import AdaptResult

adapt_app = typer.Typer(
    help="Turn a public or operator export into a source folder under the raw-records contract.",
    no_args_is_help=True,
)
app.add_typer(adapt_app, name="adapt")

MAX_LINES_SHOWN = 20  # line numbers listed per drop reason before "... and N more"


@adapt_app.callback()
def _adapt() -> None:
    """Turn a public or operator export into a source folder under the raw-records contract."""


@adapt_app.command("nj-vending")
def nj_vending(
    csv_path: Annotated[Path, typer.Argument(help="vending_machine_sales.csv (full-year 2022 NJ export); only read.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Source folder to write (new, empty, or an earlier output of adapt).")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Replace an output folder that holds other files than an earlier source.")
    ] = False,
) -> None:
    """Adapt the public New Jersey vending export (Kaggle, 2022) into a source folder."""
    from rich.console import Console

    from autovend.data.adapters.nj_vending import write_nj_vending

    result = write_nj_vending(csv_path, out, force=force)
    console = Console()
    print_report(result, console)
    console.print(f"[green]wrote[/] {out} (source.yaml, machines.csv, products.csv, orders.csv)")


def print_report(result: AdaptResult, console: Console) -> None:
    """Print what the adapter read, wrote, dropped and could not map."""
    from rich.table import Table

    counts = Table(title=f"adapted {result.source['name']}", show_header=False)
    counts.add_column("what")
    counts.add_column("count", justify="right")
    orders = result.orders
    rows = [
        ("rows read", result.rows_read),
        ("order lines written", result.rows_written),
        ("rows dropped", result.rows_dropped),
        ("machines", len(result.machines)),
        ("products", len(result.products)),
        ("transactions", orders["order_id"].nunique()),
        ("units (all lines)", result.n_units),
        ("units (completed)", result.n_completed_units),
    ]
    for what, n in rows:
        counts.add_row(what, f"{n:,}")
    if len(orders):
        counts.add_row("dates", f"{orders['ts'].min()} .. {orders['ts'].max()}")
    console.print(counts)

    if result.dropped:
        drops = Table(title="dropped rows (line numbers, header = line 1)")
        drops.add_column("reason")
        drops.add_column("rows", justify="right")
        drops.add_column("lines")
        for group in result.dropped:
            shown = ", ".join(str(x) for x in group.lines[:MAX_LINES_SHOWN])
            if group.n_rows > MAX_LINES_SHOWN:
                shown += f", ... and {group.n_rows - MAX_LINES_SHOWN} more"
            drops.add_row(group.reason, str(group.n_rows), shown)
        console.print(drops)

    maps = Table(title="mappings applied")
    maps.add_column("column")
    maps.add_column("raw value")
    maps.add_column("becomes")
    for raw, label in result.location_map.items():
        maps.add_row("Location", raw or "(blank)", label or "(blank)")
    for raw, (l1, l2) in result.category_map.items():
        maps.add_row("Category", raw or "(blank)", f"{l1}/{l2}")
    for raw, status in result.status_map.items():
        maps.add_row("Status", raw, status)
    console.print(maps)

    for raw, n in result.unmapped_locations.items():
        console.print(f"[yellow]unmapped Location[/] {raw or '(blank)'!s}: {n:,} rows -> site_type unknown")
    for raw, n in result.unmapped_categories.items():
        console.print(f"[yellow]unmapped Category[/] {raw or '(blank)'!s}: {n:,} rows")
    if result.unknown_category_products:
        names = "; ".join(result.unknown_category_products)
        console.print(f"[yellow]{len(result.unknown_category_products)} products with category unknown:[/] {names}")
    for name, values in result.category_conflicts.items():
        detail = ", ".join(f"{v} {n}" for v, n in values.items())
        console.print(f"[yellow]product with several categories[/] {name}: {detail} (most frequent kept)")
    for key, values in result.machine_conflicts.items():
        detail = ", ".join(f"{v} {n}" for v, n in values.items())
        console.print(f"[yellow]machine with several values[/] {key}: {detail} (most frequent kept)")
