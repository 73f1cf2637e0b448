"""`autovend verify RUN`: re-simulate a run from its folder and check it gives what the folder records."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from autovend.cli.app import app


@app.command("verify")
def verify_cmd(
    run_dirs: list[Path] = typer.Argument(
        ..., help="Run folders (finished runs of any door: run, serve, console, sweep)."
    ),
    world: Path | None = typer.Option(
        None, "--world", help="The run's world bundle, when it is not installed (./worlds, the shipped worlds)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per run instead of text."),
) -> None:
    """Re-derive each run from its world, seed and calls; exit 0 when every file of its folder is what it gives.

    The world is found by the hash run.json records (never in the run folder). The replay compares every
    trajectory line, run.json's figures, counts, privilege, tokens and cost, records.sqlite and hidden.sqlite row by
    row, daily.csv, and metrics.json, report.md and report.html regenerated; a shipped agent (baseline, oracle,
    hold) is run again and must make the recorded calls. An LLM run's model is not called. Exit 1 names the first
    difference (file, line, day, call, table, row and field); a folder that holds no finished run, or whose world
    is not installed, is refused (exit 2) with what it needs.
    """
    from rich.console import Console
    from rich.markup import escape

    from autovend.evaluation.verify import verify_run

    console = Console(highlight=False, emoji=False)
    failed = False
    for run_dir in run_dirs:
        result = verify_run(run_dir, world)
        failed |= not result.ok
        if as_json:
            print(json.dumps({"run": str(run_dir), **result.to_json()}, ensure_ascii=False))
            continue
        what = (
            f"{run_dir}: {result.calls:,} calls, {result.days} days, seed {result.seed}, world {result.world_hash[:12]}"
        )
        if result.ok:
            console.print(f"[green]verified[/] {escape(what)}: {len(result.checked)} checks, every file equal")
        else:
            assert result.difference is not None
            console.print(
                f"[bold red]differs[/] {escape(what)}\n  first difference: {escape(result.difference.message())}"
            )
        for note in result.notes:
            console.print(f"  note: {escape(note)}", soft_wrap=True)
    if failed:
        raise typer.Exit(1)
