"""`autovend sweep SPEC.yaml --out DIR`: worlds x agents x seeds on Dask, with progress, results and a leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from autovend.cli.app import app
from autovend.marks import MISSING

if TYPE_CHECKING:
    from rich.console import Console

    from autovend.sweep.engine import SweepPlan


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return MISSING
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


AGAIN = "run the same command again: finished runs are kept and interrupted ones resume from their checkpoints"
_STATES = {"new": "to start", "unfinished": "to resume from its checkpoint", "finished": "finished: kept"}


def _list_runs(console: Console, plan: SweepPlan, out: Path) -> None:
    """One line per run of a `SweepPlan`: its folder under --out and what the sweep would do with it."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    table.add_column(f"run folder (in {escape(str(out))})", overflow="fold")
    table.add_column("state", overflow="fold")
    for task in plan.tasks:
        table.add_row(escape(f"runs/{task.name}"), _STATES[plan.states[task.name]])
    console.print(table)


@app.command("sweep")
def sweep_cmd(
    spec: Path = typer.Argument(
        ...,
        help="The sweep spec (YAML: worlds, agents, seeds, days; see docs/sweeps.md), or the name of a shipped one: "
        "baselines-cn20.",
    ),
    out: Path = typer.Option(..., "--out", help="The sweep's folder: runs/, results.csv, leaderboard.md and .html."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="Address of a running Dask scheduler (tcp://HOST:PORT); default: a local cluster."
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        help="Local cluster: worker processes of one thread (default: the CPUs). With --scheduler: wait for as many.",
    ),
    max_cost_usd: float | None = typer.Option(
        None, "--max-cost-usd", min=0.0, help="Start no new run once the API cost of the sweep's runs reaches this."
    ),
    retries: int = typer.Option(2, "--retries", min=0, help="Times a failed run is retried (from its checkpoint)."),
    force: bool = typer.Option(
        False, "--force", help="Write into a folder that is not an earlier sweep's (its results files are replaced)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the runs and which of them --out already holds; run and write nothing."
    ),
    scenario: list[str] = typer.Option(
        None,
        "--scenario",
        help="Also run every world changed by this scenario (a shipped name or a file), as the spec's scenarios: do; "
        "give it again for more.",
    ),
) -> None:
    """Run every (world, agent, seed) of a spec that is not finished in --out; write results.csv and the leaderboard.

    With `scenarios` or `draws` in the spec, every world's variants are run too (their bundles in OUT/variants/) and
    robustness.md, .json and .html say how the ranking holds across them (docs/scenarios.md).

    A run is `autovend run` with the same arguments, in OUT/runs/<world>/<agent>-s<seed>-d<days>.
    Run the command again to finish an interrupted sweep: finished runs are kept, interrupted ones
    resume from their checkpoints. --out must be new, empty or an earlier sweep's folder (its marker
    .autovend-output.json); --force writes into another (results.csv and the leaderboards are replaced).
    Exit 1 when runs failed, timed out (the spec's timeout_s) or the cost limit left runs undone. Ctrl-C stops
    the runs under way within seconds (they resume next time), writes what finished and exits 130. --dry-run
    checks the spec, its worlds
    and agents and the folder the same way, lists the runs with their state, and starts no cluster.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from autovend.shipped import SWEEP_SPECS, resolve_shipped
    from autovend.sweep.engine import check_and_plan, run_sweep
    from autovend.sweep.progress import SweepStatus
    from autovend.sweep.spec import load_spec

    console = Console(highlight=False)
    spec = resolve_shipped(spec, SWEEP_SPECS)
    sweep_spec = load_spec(spec)
    if scenario:
        from autovend.sweep.spec import parse_spec

        data = sweep_spec.model_dump(mode="json", exclude_none=True)
        sweep_spec = parse_spec({**data, "scenarios": [*sweep_spec.scenarios, *scenario]}, f"{spec} with --scenario")
    columns = (
        TextColumn("[bold]runs"),
        BarColumn(),
        TextColumn("{task.completed:.0f}/{task.total:.0f} done"),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
    )
    progress = Progress(*columns, console=console, transient=False)
    bar: list[TaskID] = []

    def on_plan(p: SweepPlan) -> None:
        s = sweep_spec
        variants = f" x {_count(s.n_variants, 'variant')}" if s.n_variants > 1 else ""
        console.print(
            f"{_count(len(p.tasks), 'run')} ({_count(len(s.worlds), 'world')}{variants} x "
            f"{_count(len(s.agents), 'agent')} x {_count(len(s.seeds), 'seed')}): "
            f"{p.count('finished')} finished, {p.count('unfinished')} to resume, {p.count('new')} to start",
            soft_wrap=True,
        )
        if p.prior_cost_usd:
            console.print(f"API cost of the finished runs: {p.prior_cost_usd:.4f} USD")

    if dry_run:
        plan = check_and_plan(sweep_spec, out, force=force, inputs=(spec,))
        on_plan(plan)
        _list_runs(console, plan, out)
        console.print("dry run: nothing was run or written")
        return

    def on_start(cluster: str) -> None:
        console.print(escape(cluster), soft_wrap=True)
        progress.start()
        bar.append(progress.add_task("runs", total=1, detail=""))

    def on_update(st: SweepStatus) -> None:
        detail = f"running {st.running}, failed {st.failed}"
        detail += f", waiting {st.waiting}" if st.waiting else ""
        detail += f", restarted {st.restarts}" if st.restarts else ""
        detail += f", skipped {st.skipped}" if st.skipped else ""
        detail += f", timed out {st.timed_out}" if st.timed_out else ""
        detail += f", cost {st.cost_usd:.4f} USD" if st.cost_usd else ""
        detail += f", ETA {_clock(st.eta_s)}"
        progress.update(bar[0], total=st.total, completed=st.finished_before + st.done, detail=detail)

    try:
        outcome = run_sweep(
            sweep_spec,
            out,
            scheduler=scheduler,
            workers=workers,
            max_cost_usd=max_cost_usd,
            retries=retries,
            on_plan=on_plan,
            on_start=on_start,
            on_update=on_update,
            force=force,
            inputs=(spec,),
        )
    except KeyboardInterrupt:  # before the runs were submitted (or a second Ctrl-C while the results were written)
        progress.stop()
        console.print(f"[yellow]interrupted[/]; {AGAIN}")
        raise typer.Exit(130) from None
    finally:
        progress.stop()
    if not outcome.plan.todo:
        console.print("nothing to run")
    for name, why in outcome.failures.items():
        console.print(f"[bold red]failed:[/] {escape(name)}: {escape(why)}", soft_wrap=True)
    for name, why in outcome.timed_out.items():
        console.print(f"[yellow]timed out:[/] {escape(name)}: {escape(why)}", soft_wrap=True)
    if outcome.cost_stopped:
        console.print(
            f"[yellow]cost limit reached[/]: {outcome.cost_usd:.4f} USD >= {max_cost_usd:.4f} USD; "
            f"{len(outcome.skipped)} runs not started (raise --max-cost-usd and run again to do them)",
            soft_wrap=True,
        )
    cost = f", API cost {outcome.cost_usd:.4f} USD" if outcome.cost_usd else ""
    console.print(
        f"{len(outcome.ran)} runs finished now, {len(outcome.rows)} of {len(outcome.plan.tasks)} have results{cost}"
    )
    written: tuple[Path, ...] = (outcome.results_path, outcome.leaderboard_path, outcome.leaderboard_html_path)
    if (out / "robustness.md").is_file() and sweep_spec.n_variants > 1:
        written += (out / "robustness.md", out / "robustness.html")
    console.print("wrote " + ", ".join(escape(str(p)) for p in written), soft_wrap=True)
    if outcome.interrupted:
        console.print(f"[yellow]interrupted[/]; {AGAIN}")
        raise typer.Exit(130)
    if not outcome.complete:
        raise typer.Exit(1)
