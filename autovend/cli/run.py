"""`autovend run` (an agent through an episode, with a progress bar and --resume) and `autovend compare`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from autovend.cli.app import app
from autovend.marks import MISSING, number_cell

# metrics shown after a run and in the comparison table: key -> (header, format, scale)
SHOWN: dict[str, tuple[str, str, float]] = {
    "net_assets": ("Net assets", "{:,.2f}", 1.0),
    "assortment": ("Assortment", "{:.3f}", 1.0),
    "waste_rate": ("Waste %", "{:.2f}", 100.0),
    "pricing_regret": ("Pricing regret", "{:.2f}", 1.0),
    "shelf_utilization": ("Shelf use %", "{:.1f}", 100.0),
    "empty_share": ("Empty %", "{:.2f}", 100.0),
    "capital_efficiency": ("Capital eff.", "{:.4f}", 1.0),
    "tool_calls": ("Tool calls", "{:,.0f}", 1.0),
}


def _cell(value: Any, fmt: str, scale: float) -> str:
    """A value as shown; `autovend.marks.MISSING` ("–", the mark of every table) when missing or not finite."""
    return number_cell(value, fmt, scale)


@app.command("run")
def run_cmd(
    world: Path = typer.Option(
        Path("cn20"),
        "--world",
        help="World bundle: a folder, or the name of a shipped or installed world (./worlds/NAME first).",
    ),
    agent: str = typer.Option(
        "baseline",
        "--agent",
        help="Agent: baseline, oracle (a privileged reference: reads the hidden demand model), openai:MODEL for a "
        "language model, or a plugin FILE.py:Class or package.module:Class.",
    ),
    seed: int = typer.Option(1, "--seed", min=0, help="Run seed (demand draws, lead times)."),
    days: int | None = typer.Option(None, "--days", min=1, help="Days to run; default: the world's horizon."),
    scenario: str | None = typer.Option(
        None, "--scenario", help="Change the world first: a shipped scenario's name (heatwave) or a scenario file."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Run folder; default runs/<world>/<agent name>-s<seed>, e.g. runs/cn20/baseline-s1."
    ),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted run from its last checkpoint."),
    force: bool = typer.Option(False, "--force", help="Replace a finished or unfinished run in the folder."),
    agent_config: Path | None = typer.Option(None, "--agent-config", help="YAML settings of the agent."),
    checkpoint: str = typer.Option(
        "background", "--checkpoint", help="Checkpoints after each day: background (forked), sync or off."
    ),
    report: bool = typer.Option(
        True, "--report/--no-report", help="Write metrics.json, report.md, report.html and figures."
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="openai:MODEL: an OpenAI-compatible API URL."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="openai:MODEL: variable with the key."),
    mcp: bool = typer.Option(False, "--mcp", help="openai:MODEL: reach the tools over MCP (autovend serve, stdio)."),
    mcp_url: str | None = typer.Option(None, "--mcp-url", help="openai:MODEL: an MCP server URL (streamable HTTP)."),
    prices: Path | None = typer.Option(
        None, "--prices", help="openai:MODEL: price table YAML (default: the one shipped)."
    ),
    intervention: list[str] = typer.Option(
        None,
        "--intervention",
        help="openai:MODEL: verify-state (the feasible state above each daily prompt) or policy-notes (a standing "
        "policy shown each day); give it again for both (docs/llm-agents.md).",
    ),
) -> None:
    """Run an agent for an episode: trajectory, records, daily ledger, metrics and report in a run folder."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from autovend.agents.plugins import LLM_PREFIX, LLMOptions, load_agent
    from autovend.errors import ConfigError
    from autovend.rundir import default_run_dir
    from autovend.runner import DayProgress, run_episode
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import resolve_world
    from autovend.world.derive import apply_scenario

    if checkpoint not in ("background", "sync", "off"):
        raise ConfigError(f"--checkpoint must be background, sync or off, got {checkpoint!r}")
    if resume and force:
        raise ConfigError("--resume continues a run and --force starts it again: pass only one of them")
    console = Console(highlight=False, emoji=False)
    interventions = tuple(dict.fromkeys(intervention or []))
    wrong = [i for i in interventions if i not in ("verify-state", "policy-notes")]
    if wrong:
        raise ConfigError(f"--intervention {wrong[0]!r} is none of verify-state, policy-notes")
    world = resolve_world(world)
    w = apply_scenario(load_world(world), scenario)
    world_path: Path | None = world if w.world_hash else None  # a derived world: the run folder keeps its bundle
    llm = None
    if agent.startswith(LLM_PREFIX):
        from autovend.agents.llm.mcp_bridge import serve_command

        target = mcp_url or (serve_command(world, seed, scenario=scenario) if mcp else None)
        llm = LLMOptions(
            base_url=base_url, api_key_env=api_key_env, mcp=target, prices_path=prices, interventions=interventions
        )
    elif interventions:
        raise ConfigError(f"--intervention is for openai:MODEL agents (language models), not {agent!r}")
    if days is not None and days > w.horizon_days:
        raise ConfigError(f"--days {days} is longer than the world's horizon ({w.horizon_days} days); give at most it")
    ag = load_agent(agent, seed, agent_config, llm=llm)
    run_dir = out if out is not None else default_run_dir(w.name, ag.name, seed)
    total = days or w.horizon_days
    last: list[DayProgress] = []
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("day {task.completed:.0f}/{task.total:.0f}"),
        TextColumn("net assets {task.fields[net]}"),
        TextColumn("cash {task.fields[cash]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(escape(f"{ag.name} s{seed}"), total=total, net=MISSING, cash=MISSING)

        def on_day(p: DayProgress) -> None:
            last[:] = [p]
            bar.update(task, completed=p.day, net=f"{p.net_assets:,.2f}", cash=f"{p.cash:,.2f}")

        try:
            summary = run_episode(
                w,
                ag,
                seed,
                days=days,
                out_dir=run_dir,
                resume=resume,
                progress=on_day,
                force=force,
                world_path=world_path,
                checkpoint=checkpoint,  # type: ignore[arg-type]
                evaluate=report,
            )
        except KeyboardInterrupt:
            bar.stop()
            done = last[0].day if last else 0
            again = [f"--world {world}", f"--agent {agent}", f"--seed {seed}", f"--out {run_dir}"]
            again += [f"--scenario {scenario}"] if scenario else []
            again += [f"--agent-config {agent_config}"] if agent_config else []
            again += [f"--base-url {base_url}"] if base_url else []
            again += [f"--api-key-env {api_key_env}"] if agent.startswith(LLM_PREFIX) else []
            again += ["--mcp"] if mcp else []
            again += [f"--mcp-url {mcp_url}"] if mcp_url else []
            again += [f"--prices {prices}"] if prices else []
            again += [f"--intervention {i}" for i in interventions]
            console.print(
                f"[yellow]interrupted[/] after day {done}; continue with: autovend run {escape(' '.join(again))} "
                "--resume"
            )
            raise typer.Exit(130) from None
    if getattr(ag, "privileged", False) is True:
        console.print("[yellow]privileged[/]: it reads the hidden demand model; its run is a reference, not an entry")
    start = f" (resumed from day {summary.resumed_from})" if summary.resumed_from is not None else ""
    console.print(
        f"{escape(summary.agent)} seed {summary.seed}: {summary.days} days{start}, final net assets "
        f"[bold]{summary.final_net_assets:,.2f}[/] {escape(summary.currency)} (cash {summary.final_cash:,.2f}), "
        f"{summary.wall_time_s:.1f} s"
    )
    if summary.metrics:
        shown = [k for k in SHOWN if k != "net_assets"]
        line = ", ".join(f"{SHOWN[k][0]} {_cell(summary.metrics.get(k), *SHOWN[k][1:])}" for k in shown)
        console.print(line, soft_wrap=True)
        console.print(
            escape(f"report: {run_dir / 'report.md'}, interactive: {run_dir / 'report.html'}"), soft_wrap=True
        )
    else:
        console.print(escape(f"run folder: {run_dir}"), soft_wrap=True)


def _check_compare_out(out: Path, run_dirs: list[Path]) -> None:
    """Refuse an --out that is, holds or lies in a run folder, or holds anything but an earlier comparison.

    compare's --force is for incomparable runs, so no flag replaces a folder compare did not write.
    """
    from autovend.errors import OutputExistsError
    from autovend.io import FORCE_FIX, OutputKind, check_output_dir, output_refusal

    check_output_dir(out, OutputKind.COMPARISON, force=True, inputs=run_dirs)  # inputs: refused always
    reason = output_refusal(out, OutputKind.COMPARISON)
    if reason is not None:
        raise OutputExistsError(
            reason.replace(FORCE_FIX, "choose another --out (compare never replaces a folder it did not write)")
        )


@app.command("compare")
def compare_cmd(
    run_dirs: list[Path] = typer.Argument(..., help="Run folders written by `autovend run`."),
    out: Path = typer.Option(Path("runs/compare"), "--out", help="Folder for comparison.md/.csv and figures."),
    force: bool = typer.Option(
        False, "--force", help="Compare runs of different worlds or lengths, or a run given twice, anyway."
    ),
    references: bool = typer.Option(
        True,
        "--references/--no-references",
        help="Run the privileged oracle in memory for a (world, seed, days) without a known reference, for the "
        "normalised score (--no-references: only references from oracle runs compared or the world's manifest).",
    ),
) -> None:
    """Compare runs: net assets and the main metrics, mean ± std per agent, paired differences, figures.

    Agents run on the same seeds are paired seed by seed (comparison.json's `paired`): mean difference, its
    95% t interval beside the unpaired one, and the difference the seeds can detect. Each run also gets its
    normalised score (agent − hold) / (oracle − hold).

    A run's world is its run.json's world_path, else the installed world (./worlds, the shipped ones) of its
    hash. Runs of different worlds (hashes), horizons or days played, or the same agent and seed twice, are
    refused (exit 1) unless --force. --out must be new, empty or an earlier comparison (replaced whole),
    and never a run folder.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from autovend.currency import common_currency
    from autovend.errors import RunFolderError
    from autovend.evaluation import RunData, write_comparison
    from autovend.evaluation.comparability import check_comparable, short_hash
    from autovend.evaluation.comparison import agent_ranks, paired_of
    from autovend.io import OutputKind, output_dir
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import installed_world

    console = Console(highlight=False)
    worlds: dict[str, Any] = {}
    runs = []
    for d in run_dirs:
        try:
            meta = json.loads((d / "run.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunFolderError(f"{d} has no readable run.json; give folders written by `autovend run`") from exc
        path = meta.get("world_path")
        if not (path and (Path(path) / "manifest.json").exists()):  # moved: an installed world of its hash
            path = installed_world(str(meta.get("world_hash") or ""))
        world = None
        if path is not None:
            if str(path) not in worlds:
                worlds[str(path)] = load_world(path)
            world = worlds[str(path)]
        runs.append(RunData.load(d, world=world))
    check = check_comparable(runs)
    if not check.comparable and not force:
        err = Console(stderr=True, highlight=False)
        err.print(f"[bold red]error:[/] {escape(check.explain())}\npass --force to compare them anyway", soft_wrap=True)
        raise typer.Exit(1)
    for reason in check.refusals:
        console.print(f"[yellow]not comparable, compared with --force:[/] {escape(reason)}", soft_wrap=True)
    for note in check.notes:
        console.print(f"note: {escape(note)}", soft_wrap=True)
    _check_compare_out(out, run_dirs)
    with console.status(f"comparing {len(runs)} runs..."), output_dir(out, OutputKind.COMPARISON, force=True) as tmp:

        def computing(seed: int, days: int) -> None:
            console.print(
                f"running the privileged oracle in memory for seed {seed}, {days} days (--no-references skips)"
            )

        table, summary = write_comparison(runs, tmp, force=force, compute_references=references, on_reference=computing)
    # metrics as rows, runs as columns: a handful of runs fits a terminal whatever the number of metrics
    t = Table(title="Runs")
    t.add_column("metric")
    records = table.to_dict("records")
    for row in records:
        t.add_column(escape(f"{row['run']}\n{row['agent']} s{row['seed']}, {row['days']} d"), justify="right")
    if force:  # show which world each run was made on
        t.add_row("World hash", *(short_hash(str(row["world_hash"] or "")) for row in records))
    for k, (label, fmt, scale) in SHOWN.items():
        t.add_row(label, *(_cell(row.get(k), fmt, scale) for row in records))
        if k == "net_assets":
            t.add_row("Normalised score", *(_cell(row.get("normalised_score"), "{:.3f}", 1.0) for row in records))
    console.print(t)
    s = Table(title="By agent (mean over runs)")
    s.add_column("metric")
    for agent, row in summary.iterrows():
        s.add_column(escape(f"{agent}\n{int(row['runs'])} runs"), justify="right")
    rows = list(summary.iterrows())
    std_cells = [_cell(r["net_assets_std"], "{:,.2f}", 1.0) for _, r in rows]
    paired = paired_of(table) if check.comparable else []
    if paired:
        rank = agent_ranks(table, paired)
        s.add_row("Rank (ties: paired 95% interval)", *(rank.get(str(agent), "–") for agent, _ in rows))
    for k, (label, fmt, scale) in SHOWN.items():
        s.add_row(label, *(_cell(r.get(k), fmt, scale) for _, r in rows))
        if k == "net_assets":
            s.add_row("  std", *std_cells)
            s.add_row("  CV %", *(_cell(r["net_assets_cv"], "{:.2f}", 100.0) for _, r in rows))
            s.add_row("Normalised score", *(_cell(r.get("normalised_score"), "{:.3f}", 1.0) for _, r in rows))
    console.print(s)
    net = [p for p in paired if p.metric == "net_assets"]
    if net:
        cur = common_currency(r.world.economics.currency for r in runs)
        p_table = Table(title=f"Paired differences of net assets ({cur}, same seeds; every metric in comparison.md)")
        for head in ("a − b", "seeds", "mean difference", "paired 95% (t)", "unpaired 95% (Welch)", "min. detectable"):
            p_table.add_column(head, justify="left" if head == "a − b" else "right")
        for p in net:
            p_table.add_row(*(escape(c) for c in _paired_cells(p)))
        console.print(p_table)
        console.print("min. detectable: at the seeds used / 5 / 10 seeds (paired t-test, 5% two-sided, 80% power)")
    console.print(
        "normalised score: (agent − hold) / (oracle − hold); the oracle is privileged (reads the hidden demand)"
    )
    console.print(
        escape(f"wrote {out / 'comparison.md'}, comparison.json, comparison.csv, figures and {out / 'report.html'}"),
        soft_wrap=True,
    )


def _paired_cells(p: Any) -> list[str]:
    """A paired difference of net assets as terminal cells (in the runs' currency)."""

    def money(x: float | None, sign: bool = True) -> str:
        return "–" if x is None else f"{x:{'+' if sign else ''},.2f}"

    def interval(lo: float | None, hi: float | None) -> str:
        return "–" if lo is None or hi is None else f"[{money(lo)}, {money(hi)}]"

    mdd = (p.min_detectable_difference, p.min_detectable_difference_5, p.min_detectable_difference_10)
    return [
        f"{p.a} − {p.b}",
        str(p.n_seeds),
        money(p.mean_difference),
        interval(p.ci_low, p.ci_high),
        interval(p.unpaired_low, p.unpaired_high),
        " / ".join(money(x, sign=False) for x in mdd),
    ]
