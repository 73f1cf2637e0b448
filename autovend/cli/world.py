"""`autovend export-world` (calibration -> frozen bundle) and `autovend world info` (summary of a bundle)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from autovend.cli.app import app

world_app = typer.Typer(help="Inspect frozen world bundles.", no_args_is_help=True)
app.add_typer(world_app, name="world")


@app.command("export-world")
def export_world_cmd(
    calibration_dir: Path = typer.Argument(..., help="Calibration folder written by `autovend calibrate`."),
    source_dir: Path = typer.Argument(..., help="The source folder the calibration was made from."),
    out: Path = typer.Option(..., "-o", "--out", help="Bundle folder to write, e.g. worlds/cn20 (its name)."),
    params: Path | None = typer.Option(
        None, "--params", help="Params YAML of the source (section `export`); defaults when omitted."
    ),
    settings: Path | None = typer.Option(
        None,
        "--settings",
        help="Benchmark settings YAML (sections `demand`, `economics`); defaults when omitted.",
    ),
    network: Path | None = typer.Option(
        None,
        "--network",
        help="Network file (CSV: device_id, location[, capacity]) mapping devices onto calibrated machines, or the "
        "name of a shipped one: paper-cn20 (the paper's 20 devices); default: the source's own machines.",
    ),
    machines: int | None = typer.Option(
        None, "--machines", min=1, help="Only N of the source's own machines (seeded, stratified by site type)."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace an output folder that holds other files than a bundle export-world wrote (a shipped world too).",
    ),
) -> None:
    """Freeze a calibration into a world bundle: devices, catalog, demand, economics, weather, calendar, manifest."""
    from rich.console import Console

    from autovend.cli.steps import step_progress
    from autovend.export.build import export_world

    console = Console(highlight=False)
    with step_progress(console, "export-world"):
        res = export_world(
            calibration_dir, source_dir, out, params, settings, network=network, n_machines=machines, force=force
        )
    w = res.world
    total = sum(res.sizes.values())
    console.print(
        f"wrote {out}: {w.n_machines} devices, {w.n_products} products, {w.horizon_days} days from "
        f"{w.start_date.isoformat()}, {total / 1024:.0f} KiB in {len(res.sizes)} files ({res.seconds:.1f} s)",
        soft_wrap=True,
    )
    console.print(f"world hash {res.manifest['world_hash']}", soft_wrap=True)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return " to ".join(_fmt(v) for v in value) if len(value) == 2 else ", ".join(map(_fmt, value))
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return str(value)


@world_app.command("info")
def info(
    world_dir: Path = typer.Argument(
        ..., help="A world bundle: a folder, or the name of a shipped or installed world (cn20)."
    ),
) -> None:
    """Verify a world bundle and print a summary: hashes, devices, catalog, horizon, weather, settings."""
    from rich.console import Console
    from rich.table import Table

    from autovend.export.validation import validation_text
    from autovend.world.bundle import load_world, read_manifest
    from autovend.world.catalogue import resolve_world
    from autovend.world.describe import summarize

    world_dir = resolve_world(world_dir)
    world = load_world(world_dir)
    manifest = read_manifest(world_dir)
    s = summarize(world, manifest)
    console = Console(highlight=False)
    b, h = s["bundle"], s["horizon"]
    console.print(f"[bold]{b['name']}[/]: verified ({len(read_manifest(world_dir)['files'])} files + manifest)")
    head = Table(show_header=False)
    head.add_column("item", style="bold")
    head.add_column("value")
    for label, value in (
        ("world hash", b["world_hash"][:16]),
        ("source", f"{b['source_name']} ({b['source_hash'][:12]})"),
        ("calibration hash", b["calibration_hash"][:12]),
        ("made by", f"{b['created_by']}, schema {b['schema_version']}, seed {b['export_seed']}"),
        ("horizon", f"{h['days']} days, {h['start']} to {h['end']}, {h['timezone']} ({h['country']})"),
        ("calendar", f"to {h['calendar_end']}"),
        ("capacity", _fmt(s["capacity"]) + " units"),
        ("validation", validation_text(manifest)),
    ):
        head.add_row(label, value)
    console.print(head)

    sites = Table(title="devices by site type")
    for col in ("site type", "devices", "source machines"):
        sites.add_column(col)
    for site, sources in s["sources_by_site"].items():
        sites.add_row(site, str(len(sources)), ", ".join(sources))
    console.print(sites)

    cat = s["catalog"]
    ctab = Table(title=f"catalog: {cat['products']} products in {cat['subcategories']} subcategories")
    for col in ("category", "products", "gross margin"):
        ctab.add_column(col)
    for k, n in cat["by_category"].items():
        lo, hi = cat["margin_by_category"][k]
        ctab.add_row(k, str(n), f"{lo:.1%} to {hi:.1%}")
    console.print(ctab)
    console.print("shelf lives: " + ", ".join(f"{n} x {d} days" for d, n in cat["shelf_lives"].items()))

    wx = s["weather"]
    console.print(
        f"weather (horizon): daily maximum {_fmt(wx['t_max_c'])} C, {wx['precip_total_mm']:.0f} mm, "
        f"{wx['wet_days']} days >= 1 mm; forecasts {wx['forecast_days']} days ahead"
    )
    hol = Table(title=f"holidays and makeup workdays in the horizon ({len(s['holidays'])})")
    for col in ("date", "name", "workday"):
        hol.add_column(col)
    for date, name, workday in s["holidays"]:
        hol.add_row(date, name, "yes" if workday else "no")
    console.print(hol)

    settings = Table(title="settings", show_header=False)
    settings.add_column("item", style="bold")
    settings.add_column("value")
    for key, value in s["demand"].items():
        settings.add_row(key, _fmt(value))
    for key, value in s["economics"].items():
        settings.add_row(key, _fmt(value))
    console.print(settings)


@world_app.command("price-response")
def price_response_cmd(
    world_dir: Path = typer.Argument(
        ..., help="A world bundle: a folder, or the name of a shipped or installed world (cn20)."
    ),
    out: Path = typer.Option(..., "-o", "--out", help="Folder for price_response.png and price_response.csv."),
    force: bool = typer.Option(False, "--force", help="Replace price_response.png/.csv already in the folder."),
) -> None:
    """Expected daily units and gross profit of a machine against a common price multiplier, per site type."""
    from rich.console import Console
    from rich.markup import escape

    from autovend.errors import OutputExistsError
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import resolve_world
    from autovend.world.price_figure import price_response_figure
    from autovend.world.price_response import price_response

    there = [p.name for p in (out / "price_response.png", out / "price_response.csv") if p.exists()]
    if there and not force:
        raise OutputExistsError(f"{out} already holds {', '.join(there)}: pass --force to replace them")
    resp = price_response(load_world(resolve_world(world_dir)))
    out.mkdir(parents=True, exist_ok=True)
    resp.table().to_csv(out / "price_response.csv", index=False, float_format="%.6g")
    price_response_figure(resp, out / "price_response.png")
    Console(highlight=False).print(
        escape(f"wrote {out / 'price_response.png'} and {out / 'price_response.csv'}"), soft_wrap=True
    )


@world_app.command("ship")
def ship(
    bundle_dir: Path = typer.Argument(..., help="An exported bundle, e.g. data/worlds/cn20."),
    out: Path = typer.Option(..., "-o", "--out", help="Where the shipped world goes, e.g. worlds/cn20."),
    validation: Path | None = typer.Option(
        None, "--validation", help="The source's validation folder (autovend validate -o DIR) or its metrics.json."
    ),
    runs: list[Path] = typer.Option([], "--run", help="A finished baseline run on the bundle (repeat per seed)."),
    oracle_runs: list[Path] = typer.Option(
        [], "--oracle-run", help="A finished run of the privileged oracle (--agent oracle) on the bundle, per seed."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace an output folder holding anything but a shipped copy of this world (another world, an export).",
    ),
) -> None:
    """Ship a world: copy the bundle with its validation and baseline results in the README (same world hash).

    Oracle runs add the headroom (hold, baseline, oracle per seed) to the README and the oracle's daily net
    assets to the manifest, from which every run on the world gets its normalised score.
    """
    from rich.console import Console

    from autovend.export.ship import ship_world

    manifest = ship_world(bundle_dir, out, validation=validation, runs=runs, force=force, oracle_runs=oracle_runs)
    Console(highlight=False).print(
        f"shipped {out} (world hash {manifest['world_hash'][:12]}, {len(runs)} baseline runs, "
        f"{len(oracle_runs)} oracle runs)",
        soft_wrap=True,
    )


@world_app.command("install")
def install(
    bundle_dir: Path = typer.Argument(..., help="A world bundle folder (exported or shipped), e.g. worlds/coffee1."),
    name: str | None = typer.Option(None, "--name", help="The name to run it by; default the folder's name."),
    force: bool = typer.Option(False, "--force", help="Take a name an installed or shipped world already has."),
) -> None:
    """Install a world bundle under a name: every door then finds it by that name, from any folder.

    The bundle is verified and copied into the user's worlds folder ($AUTOVEND_WORLDS_PATH's first folder, else
    the user's data folder: ~/.local/share/autovend/worlds on Linux); `autovend run --world NAME`, `autovend
    serve`, `autovend console`, sweeps, `VendingEnv(NAME)` and the gym envs find it there. A name already taken
    by an installed or shipped world is refused unless --force.
    """
    from rich.console import Console
    from rich.markup import escape

    from autovend.world.catalogue import install_world

    target = install_world(bundle_dir, name, force=force)
    console = Console(highlight=False)
    console.print(f"installed world {escape(target.name)} (verified)", soft_wrap=True)
    console.print(escape(f"in {target}"), soft_wrap=True)  # a path to copy: never wrapped
    console.print(f"run it from any folder: autovend run --world {escape(target.name)}", soft_wrap=True)


@world_app.command("list")
def list_worlds(
    folders: list[Path] = typer.Argument(
        None, help="Folders to look in; default: ./worlds, the installed worlds and the shipped ones."
    ),
) -> None:
    """List the worlds found: name, size, days, currency, verdict, world hash and state; then where they are.

    A name found in several folders is run from the first (./worlds, installed, shipped); the others are listed too.

    Readable at 80 columns: a bundle that does not verify says "broken" in the table and why below it.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table, box

    from autovend.marks import MISSING
    from autovend.world.catalogue import find_worlds

    found = find_worlds(folders or None)
    table = Table(title=f"{len(found)} worlds", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("name", overflow="fold")  # name and verdict wrap when the terminal is narrow
    table.add_column("devices × products", justify="right")
    table.add_column("days", justify="right", no_wrap=True)
    table.add_column("cur.", no_wrap=True)
    table.add_column("verdict", min_width=15)  # "distinguishable", the longest word of a verdict
    table.add_column("world hash", no_wrap=True)
    table.add_column("state", no_wrap=True)
    problems: list[str] = []
    for w in found:
        verified = w.state == "verified"
        if not verified:
            problems.append(f"{w.name}: {w.state if w.state.startswith('broken') else 'broken: ' + w.state}")
        table.add_row(
            escape(w.name),
            f"{w.devices:,} × {w.products:,}",
            str(w.days),
            escape(w.currency) or MISSING,
            escape(w.verdict.replace("_", " ")),
            escape(w.world_hash[:12]) or MISSING,
            "verified" if verified else "[bold red]broken[/]",
        )
    console = Console(highlight=False)
    console.print(table)
    by_folder: dict[Path, list[str]] = {}
    for w in found:
        by_folder.setdefault(w.path.parent, []).append(w.name)
    for folder, names in by_folder.items():
        console.print(escape(f"in {folder}: {', '.join(names)}"), soft_wrap=True)  # a path to copy: never cut
    for problem in problems:
        console.print(f"[red]{escape(problem)}[/]")
