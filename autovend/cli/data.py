"""Commands of the pipeline: synth (the embedded synthetic operator) and calibrate."""

from __future__ import annotations

from pathlib import Path

import typer

from autovend.cli.app import app
from autovend.marks import counted

PARAMS_HELP = "Params YAML of the source (sections per stage); defaults when omitted."
SETTINGS_HELP = "Benchmark settings YAML (section `demand`); defaults when omitted."
PARTITIONED_HELP = (
    "Write orders (and inventory) as hive-partitioned Parquet folders by these keys: machine_id, month or "
    "machine_id,month (docs/scale.md)."
)
SCHEDULER_HELP = (
    "Compute the statistics on Dask: 'local' (a cluster of --workers processes on this machine) or a scheduler's "
    "address (tcp://HOST:PORT, workers started with `dask worker ADDRESS`). The estimates are the same bytes as "
    "without it (docs/scale.md)."
)
WORKERS_HELP = "With --scheduler local: worker processes (default 2); with an address: workers to wait for."
WORKER_MEMORY_HELP = (
    "With --scheduler local: each worker's memory limit (2GiB, 1500MB; default: the machine's memory / workers). "
    "Split cells beyond 40% of it, less 160 MiB, are kept on the worker's disk, so memory does not grow with "
    "the machines."
)
FORCE_HELP = (
    "Replace an output folder that holds other files (without it, only an empty folder or this command's "
    "earlier output is replaced)."
)


@app.command()
def synth(
    out: Path = typer.Option(Path("data/raw/synthetic-cn"), "-o", "--out", help="Source folder to write."),
    truth: Path = typer.Option(Path("data/truth/synthetic-cn"), "--truth", help="Truth folder to write beside it."),
    params: Path | None = typer.Option(None, "--params", help=PARAMS_HELP),
    settings: Path | None = typer.Option(None, "--settings", help=SETTINGS_HELP),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    partitioned: str | None = typer.Option(None, "--partitioned", help=PARTITIONED_HELP),
    dex: Path | None = typer.Option(None, "--dex", help="Also write its records as EVA-DTS audit series here."),
    dex_every: int = typer.Option(7, "--dex-every", min=1, help="Days between two audits of a machine (--dex)."),
) -> None:
    """Generate the embedded synthetic operator (a Shanghai vending company) from its known truth.

    --dex DIR also writes its records as EVA-DTS audits, one series per machine (DIR/MACHINE/*.dex, read every
    --dex-every days) with DIR/products.csv: what `autovend adapt eva-dts` reads.
    """
    from rich.console import Console
    from rich.markup import escape

    from autovend.cli.steps import step_progress
    from autovend.pipeline.synthesize import run

    if dex is not None and partitioned is not None:  # the audits are written from the flat tables
        raise typer.BadParameter("--dex writes audits from a flat source: run it without --partitioned")
    console = Console()
    with step_progress(console, "synth"):
        fig = run(out, truth, params, settings, force=force, partition_by=_partition_by(partitioned))
    console.print(
        f"wrote {out} and {truth}: {counted(fig['machines'], 'machine')}, {counted(fig['products'], 'product')}, "
        f"{fig['order_lines']:,.0f} order lines, {fig['units']:,.0f} units "
        f"({fig['kept_unit_share']:.1%} kept), {fig['inventory_rows']:,.0f} inventory rows in {fig['seconds']:.1f} s"
    )
    if dex is not None:
        from autovend.data.adapters.files import write_dex_audits

        n = write_dex_audits(out, dex, dex_every, force=force)
        console.print(escape(f"wrote {counted(n, 'EVA-DTS audit')} to {dex}"), soft_wrap=True)


def _partition_by(text: str | None) -> tuple[str, ...] | None:
    from autovend.data.partwrite import partition_keys

    return None if text is None else partition_keys(text)


@app.command("calibrate")
def calibrate_cmd(
    source_dir: str = typer.Argument(
        ...,
        help="Source folder, or a partitioned source's folder or URL (checked first; refused if it breaks the "
        "contract).",
    ),
    out: Path = typer.Option(..., "-o", "--out", help="Output folder: calibration.json and Parquet tables."),
    params: Path | None = typer.Option(None, "--params", help=PARAMS_HELP),
    settings: Path | None = typer.Option(None, "--settings", help=SETTINGS_HELP),
    report: Path | None = typer.Option(None, "--report", help="Also write calibration.md and figures here."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    estimator: str = typer.Option(
        "structural",
        "--estimator",
        help="structural (default: u and the machine scales from a structural Poisson fit of imputed demand, "
        "r pooled) or paper (the paper's definitions: kappa from observed mean daily units, e the log-log "
        "slope, r the median r_m, u = x e / (1 - e)).",
    ),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", min=1, help=WORKERS_HELP),
    worker_memory: str | None = typer.Option(None, "--worker-memory", help=WORKER_MEMORY_HELP),
) -> None:
    """Estimate the demand parameters (popularity, site preference, scales, no-purchase weights, shocks)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from autovend.calibration.estimator import ESTIMATORS, check_estimator
    from autovend.cli.steps import step_progress
    from autovend.errors import ConfigError
    from autovend.marks import number_cell
    from autovend.pipeline.calibrate import run

    if estimator not in ESTIMATORS:
        raise ConfigError(f"--estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    console = Console()

    def announce(where: str) -> None:
        console.print(f"calibrating on {where}", markup=False, soft_wrap=True)

    with step_progress(console, "calibrate"):
        res, seconds = run(
            source_dir, out, params, settings, report, force=force, estimator=check_estimator(estimator),
            scheduler=scheduler, workers=workers, worker_memory=worker_memory,
            announce=announce if scheduler is not None else None,
        )  # fmt: skip
    s = res.estimates
    table = Table(title=f"calibration of {s.source_name} ({seconds:.1f} s, {estimator} estimator)")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    shown: tuple[tuple[str, float | int | None], ...] = (
        ("u", s.u),
        ("x", s.x),
        ("e", s.e),
        ("e_loglog", s.e_loglog),
        ("r", s.r),
        ("r_median", s.r_median),
        ("rho", s.rho),
        ("sigma", s.sigma),
        ("kept_unit_share", s.kept_unit_share),
        ("n_products_kept", s.n_products_kept),
        ("n_machines", s.n_machines),
    )
    for key, v in shown:
        table.add_row(key, number_cell(v, "{:.4g}") if isinstance(v, float) else str(v))
    console.print(table)
    for note in s.notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(escape(f"wrote {out}" + (f" and {report}" if report else "")), soft_wrap=True)


@app.command("validate")
def validate_cmd(
    source_dir: Path = typer.Argument(..., help="Source folder, or with --figures-only a validation folder."),
    out: Path | None = typer.Option(None, "-o", "--out", help="Report folder: metrics.json, plots/, figures."),
    params: Path | None = typer.Option(None, "--params", help=PARAMS_HELP),
    settings: Path | None = typer.Option(None, "--settings", help=SETTINGS_HELP),
    calibration_out: Path | None = typer.Option(None, "--calibration-out", help="Keep the training calibration."),
    figures_only: bool = typer.Option(False, "--figures-only", help="Redraw a report's figures from its plot data."),
    ignore_inventory: bool = typer.Option(
        False, "--ignore-inventory", help="Validate as if the source had no inventory records (pre-window shelves)."
    ),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    scheduler: str | None = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", min=1, help=WORKERS_HELP),
    worker_memory: str | None = typer.Option(None, "--worker-memory", help=WORKER_MEMORY_HELP),
) -> None:
    """Held-out validation: re-estimate before the test window, replay its shelves, score against references."""
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    if figures_only:
        from autovend.validation.figures import draw_all

        names = draw_all(source_dir)
        console.print(escape(f"redrew {', '.join(names)} in {source_dir} from its plot data"), soft_wrap=True)
        return
    if out is None:
        raise typer.BadParameter("give the report folder with -o/--out")
    from autovend.cli.steps import step_progress
    from autovend.pipeline.validate import run

    def announce(where: str) -> None:
        console.print(f"calibrating on {where}", markup=False, soft_wrap=True)

    with step_progress(console, "validate"):
        res, seconds = run(
            source_dir, out, params, settings, calibration_out, force=force, ignore_inventory=ignore_inventory,
            scheduler=scheduler, workers=workers, worker_memory=worker_memory,
            announce=announce if scheduler is not None else None,
        )  # fmt: skip
    m, v = res.metrics, res.verdict
    console.print(
        f"verdict: {v['verdict']} (shelves: {v['shelves']}); volume error {m['volume_error']:+.2%}; "
        f"WAPE {m['wape']:.3f} (persistence {m['persistence']['wape']:.3f}, naive {m['naive']['wape']:.3f}); "
        f"product-level WAPE {m['wape_product']:.3f} (reversed popularity "
        f"{m['controls']['reversed_popularity']['wape_product']:.3f}); TVD {m['tvd']:.3f}; "
        f"Spearman {m['spearman']:.3f}; {counted(m['n_machines'], 'machine')}, {seconds:.1f} s"
    )
    console.print(escape(f"wrote {out}"), soft_wrap=True)


@app.command()
def summary(
    calibration: Path = typer.Option(Path("data/calibration/synthetic-cn"), help="Calibration folder."),
    validation: Path = typer.Option(Path("reports/synthetic-cn/validation"), help="Validation report folder."),
    world: Path = typer.Option(
        Path("cn20"), help="World bundle: a folder, or the name of a shipped or installed world."
    ),
) -> None:
    """Summarise the default pipeline's outputs: calibration, validation metrics, world bundle.

    Exit 1, naming each missing file and what writes it, when an output is not there (outside a
    checkout after `make repro`, give the folders with the options).
    """
    import json

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from autovend.calibration.estimates import read_estimates
    from autovend.errors import BundleError
    from autovend.marks import MISSING, number_cell
    from autovend.world.names import resolve_world

    console = Console()
    missing: list[str] = []
    cal = calibration / "calibration.json"
    if cal.exists():
        s = read_estimates(cal)
        t = Table(title=f"calibration of {s.source_name}")
        t.add_column("quantity")
        t.add_column("value", justify="right")
        shown: tuple[tuple[str, float | int | None], ...] = (
            ("u", s.u),
            ("x", s.x),
            ("e", s.e),
            ("r", s.r),
            ("rho", s.rho),
            ("kept_unit_share", s.kept_unit_share),
            ("n_products_kept", s.n_products_kept),
            ("n_machines", s.n_machines),
            ("units_all", s.units_all),
        )
        for key, v in shown:
            t.add_row(key, number_cell(v, "{:.4g}") if isinstance(v, float) else MISSING if v is None else str(v))
        console.print(t)
    else:
        missing.append(f"{cal} (written by `autovend calibrate SOURCE -o {calibration}`)")
    metrics = validation / "metrics.json"
    if metrics.exists():
        m = json.loads(metrics.read_text(encoding="utf-8"))
        verdict_path = validation / "verdict.json"
        verdict = json.loads(verdict_path.read_text(encoding="utf-8")) if verdict_path.exists() else {}
        t = Table(
            title=f"held-out validation: {verdict.get('verdict', 'no verdict.json')} ({verdict.get('shelves', '')})"
        )
        t.add_column("metric")
        t.add_column("model", justify="right")
        t.add_column("95% interval", justify="right")
        t.add_column("persistence", justify="right")
        t.add_column("naive", justify="right")

        def cell(v: object) -> str:
            return number_cell(v, "{:.3f}") if isinstance(v, float) else MISSING

        for key in ("volume_error", "wape", "wape_product", "tvd", "spearman"):
            ci = m.get("intervals", {}).get(key, {})
            t.add_row(
                key,
                cell(m.get(key)),
                f"[{cell(ci.get('low'))}, {cell(ci.get('high'))}]",
                cell(m.get("persistence", {}).get(key)),
                cell(m.get("naive", {}).get(key)),
            )
        console.print(t)
    else:
        missing.append(f"{metrics} (written by `autovend validate SOURCE -o {validation}`)")
    try:
        folder = resolve_world(world)
        man = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        console.print(
            escape(f"world bundle {folder}: {man.get('name')} (hash {str(man.get('world_hash', ''))[:12]})"),
            soft_wrap=True,
        )
    except (BundleError, OSError, ValueError):
        missing.append(f"the world bundle {world} (written by `autovend export-world CAL SOURCE -o {world}`)")
    if missing:
        err = Console(stderr=True, highlight=False)
        for item in missing:
            err.print(f"[bold red]missing:[/] {escape(item)}", soft_wrap=True)
        err.print(
            "autovend summary reads the outputs of the default pipeline, which `make repro` (or `dvc repro`) writes "
            "in a checkout of the repository; elsewhere, give the folders with --calibration, --validation and "
            "--world",
            soft_wrap=True,
        )
        raise typer.Exit(1)
