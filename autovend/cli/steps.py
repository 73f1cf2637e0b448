"""The progress bar of the long commands (synth, calibrate, validate, export-world): their real steps, with an ETA.

    with step_progress(console, "calibrate"):
        result = run(...)          # a function whose steps `autovend.progress` reports

The bar is the share of the work done (the steps' shares of `autovend.progress`), the step under way,
the time so far and rich's estimate of the time left. It is drawn on the console only; the command's
outputs are the same bytes with or without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from autovend.progress import listening

if TYPE_CHECKING:
    from rich.console import Console

SCALE = 1000  # the bar's total: fractions of the work in thousandths


@contextmanager
def step_progress(console: Console, title: str) -> Iterator[None]:
    """Show the steps of the work done in the block as a progress bar with the time left (module docstring)."""
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn(f"[bold]{escape(title)}"),
        BarColumn(bar_width=20),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("", total=SCALE)

        def on_step(what: str, done: float) -> None:
            bar.update(task, completed=round(done * SCALE), description=escape(what))

        with listening(on_step):
            yield
        bar.update(task, completed=SCALE, description="done")
