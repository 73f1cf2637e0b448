"""`autovend replay RUN_DIR --day N`: print what the agent saw and did on one day of a run."""

from __future__ import annotations

from pathlib import Path

import typer

from autovend.cli.app import app


@app.command()
def replay(
    run_dir: Path = typer.Argument(..., help="A run folder written by `autovend run`."),
    day: int = typer.Option(..., "--day", min=1, help="The day to show."),
    max_chars: int = typer.Option(
        2000, "--max-chars", min=0, help="Cut prompts, arguments and results longer than this (0: show all)."
    ),
) -> None:
    """Print one day of a run: prompt, model turns, tool calls and results (LLM runs), or the tool calls."""
    from autovend.agents.llm.replay import replay_lines

    for line in replay_lines(run_dir, day, max_chars):
        typer.echo(line)
