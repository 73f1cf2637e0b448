"""`autovend replay RUN_DIR`: what the agent saw and did, day by day; a per-day summary; a tool filter; JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from autovend.cli.app import app


@app.command()
def replay(
    run_dir: Path = typer.Argument(..., help="A run folder written by `autovend run` (or `autovend console`)."),
    day: int | None = typer.Option(None, "--day", min=1, help="The day to show."),
    first: int | None = typer.Option(None, "--from", min=1, help="First day of a range (default: the first day)."),
    last: int | None = typer.Option(None, "--to", min=1, help="Last day of a range (default: the last day)."),
    summary: bool = typer.Option(
        False, "--summary", help="One line per day: sales, revenue, costs, net, net assets, tool calls by name."
    ),
    tool: list[str] = typer.Option(None, "--tool", help="Only this tool's calls (repeat for several tools)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: the day summaries, or the calls."),
    max_chars: int = typer.Option(
        2000, "--max-chars", min=0, help="Cut prompts, arguments and results longer than this (0: show all)."
    ),
) -> None:
    """Print a run's days: prompts, model turns and tool calls (LLM runs) or the tool calls, or a day summary.

    Without --day or --from/--to every day is shown. --tool and --json read the tool calls of the
    trajectory (for LLM runs too); the text view of an LLM run without --tool is its transcript.
    """
    from autovend.agents.llm.replay import days_in, replay_lines, trajectory_day
    from autovend.agents.llm.transcript import LLM_LOG_FILE
    from autovend.errors import ConfigError, RunFolderError
    from autovend.evaluation import daysummary as ds
    from autovend.evaluation.rundata import DAILY_FILE, TRAJECTORY_FILE, read_calls
    from autovend.tools.registry import TOOLS_BY_NAME

    tools = list(tool or [])
    ds.check_tools(tools, TOOLS_BY_NAME)
    if day is not None and (first is not None or last is not None):
        raise ConfigError("give either --day N or a range --from A --to B, not both")
    if day is not None:
        first = last = day
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir} is not a folder; give the run folder written by `autovend run`")
    traj = run_dir / TRAJECTORY_FILE
    calls = read_calls(traj)
    if summary:
        daily = run_dir / DAILY_FILE
        ledger = ds.ledger_rows(daily) if daily.exists() else ds.settled_rows(calls)
        days = ds.day_summaries(ledger, calls, first, last, tools)
        lines = [json.dumps(ds.to_json(days), ensure_ascii=False, indent=1)] if as_json else ds.summary_lines(days)
    elif as_json or tools or not (run_dir / LLM_LOG_FILE).exists():
        if not traj.exists():
            raise RunFolderError(f"{run_dir} has neither {LLM_LOG_FILE} nor {TRAJECTORY_FILE}; is it a run folder?")
        if day is not None and not as_json and not tools:
            lines = replay_lines(run_dir, day, max_chars)  # one day, as before
        else:
            lo, hi = ds.day_range(days_in(calls), first, last)
            picked = ds.call_records(calls, lo, hi, tools)
            if as_json:
                lines = [json.dumps(picked, ensure_ascii=False, indent=1)]
            else:
                lines = []
                for d in sorted({int(c["day"]) for c in picked}):
                    lines += trajectory_day(picked, d, max_chars)
                if not lines:
                    lines = [f"no call of {', '.join(tools)} on days {lo}-{hi}"]
    elif day is not None:
        lines = replay_lines(run_dir, day, max_chars)  # one day of the transcript, as before
    else:
        from autovend.agents.llm.replay import transcript_day
        from autovend.agents.llm.transcript import read_transcript

        records = read_transcript(run_dir / LLM_LOG_FILE)
        lo, hi = ds.day_range(days_in(records), first, last)
        lines = []
        for d in range(lo, hi + 1):
            lines += transcript_day(records, d, max_chars)
    for line in lines:
        typer.echo(line)
