"""`autovend check SOURCE_DIR`: check a source folder against the raw-records contract."""

from __future__ import annotations

from pathlib import Path

import typer

from autovend.cli.app import app


@app.command()
def check(
    source_dir: Path = typer.Argument(..., help="Source folder: source.yaml, machines, products, orders, ..."),
    max_errors: int = typer.Option(50, "--max-errors", min=1, help="Show at most this many error groups."),
    json_out: Path | None = typer.Option(None, "--json", help="On success, also write the summary as JSON here."),
    params: Path | None = typer.Option(
        None, "--params", help="Params YAML whose `check:` section sets the plausibility limits (else defaults)."
    ),
) -> None:
    """Check a source folder against the raw-records contract; exit 1 and list the errors if it breaks it."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from autovend.data.check import check_source
    from autovend.data.plausibility import load_check_settings

    console = Console(highlight=False)
    if json_out is not None:
        _check_json_out(json_out, source_dir)
    report = check_source(source_dir, load_check_settings(params))
    if not report.ok or report.summary is None:
        console.print(report.format(max_errors), markup=False, soft_wrap=True)
        raise typer.Exit(code=1)
    console.print(Text(f"{source_dir}: follows the raw-records contract."), soft_wrap=True)
    table = Table(show_header=False)
    table.add_column("item", style="bold")
    table.add_column("value", overflow="fold")
    rows = report.summary.rows()
    for label, value in rows:
        if label != "content hash":
            table.add_row(Text(label), Text(value))
    console.print(table)
    console.print(Text(f"content hash: {report.summary.content_hash}"), soft_wrap=True)
    for line in report.warning_lines(max_errors):
        console.print(Text(line), soft_wrap=True)
    if json_out is not None:
        import json

        from autovend.io import atomic_write_text

        atomic_write_text(json_out, json.dumps(report.summary.to_dict(), indent=2, sort_keys=True) + "\n")


def _check_json_out(json_out: Path, source_dir: Path) -> None:
    """Refuse a --json path inside the source folder (raw data is never modified), or that is a folder."""
    from autovend.errors import OutputExistsError

    if json_out.resolve().is_relative_to(source_dir.resolve()):
        raise OutputExistsError(
            f"--json {json_out} lies inside the source folder {source_dir}, which the check never writes to; "
            "write the summary elsewhere (e.g. data/checks/NAME.json)"
        )
    if json_out.is_dir():
        raise OutputExistsError(f"--json {json_out} is a folder; give the path of a JSON file")
