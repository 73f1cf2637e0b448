"""The `autovend` Typer application object; command modules register on it."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="autovend",
    help="AutoVend: calibrate a vending demand model from order records, freeze a world, run agents on it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """AutoVend: calibrate a vending demand model from order records, freeze a world, run agents on it."""


@app.command()
def version() -> None:
    """Print the AutoVend version."""
    from autovend import __version__

    typer.echo(__version__)
