"""World variants: `autovend world scenarios`, `autovend world derive` and `autovend world draw`.

`scenarios` lists the shipped scenarios, `derive` writes a world changed by a scenario as a new bundle, `draw` writes
worlds drawn from a world's identified set (`autovend.world.ranges`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from autovend.cli.world import world_app


@world_app.command("scenarios")
def scenarios_cmd() -> None:
    """List the shipped scenarios: name and what each changes (docs/scenarios.md says what each tests)."""
    from rich.console import Console
    from rich.table import Table

    from autovend.world.scenario import load_scenario, shipped_scenarios

    table = Table(title="shipped scenarios (--scenario NAME)")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("what changes")
    for name in shipped_scenarios():
        table.add_row(name, load_scenario(name).summary)
    Console(highlight=False).print(table)


@world_app.command("derive")
def derive_cmd(
    world: Path = typer.Argument(..., help="The world to change: a bundle folder or a shipped world's name (cn20)."),
    scenario: str = typer.Option(
        ..., "--scenario", help="A scenario file (YAML, docs/scenarios.md) or a shipped scenario's name (heatwave)."
    ),
    out: Path = typer.Option(..., "-o", "--out", help="The folder of the new bundle (the original is never changed)."),
    force: bool = typer.Option(False, "--force", help="Replace an output folder that is not an earlier bundle."),
) -> None:
    """Write WORLD changed by a scenario as a new, hashed bundle (a scenario that changes nothing keeps the hash)."""
    from rich.console import Console
    from rich.markup import escape

    from autovend.world.bundle import load_world
    from autovend.world.catalogue import resolve_world
    from autovend.world.derive import write_derived
    from autovend.world.scenario import load_scenario

    folder = resolve_world(world)
    base = load_world(folder)
    sc = load_scenario(scenario)
    derived, manifest = write_derived(folder, base, sc, out, force=force)
    console = Console(highlight=False)
    same = " (the scenario changes nothing: the same world)" if manifest["world_hash"] == base.world_hash else ""
    console.print(escape(f"wrote {out}: {derived.name}, world hash {manifest['world_hash'][:12]}{same}"))
    console.print(escape(f"from {base.name} ({base.world_hash[:12]}) by scenario {sc.name} ({sc.hash[:12]})"))


@world_app.command("draw")
def draw_cmd(
    world: Path = typer.Argument(..., help="The world: a bundle folder or a shipped world's name (cn20)."),
    n: int = typer.Option(20, "--n", min=1, help="How many worlds to draw."),
    seed: int = typer.Option(..., "--seed", min=0, help="The seed of the draws (the same seed, the same worlds)."),
    out: Path = typer.Option(..., "-o", "--out", help="The folder of the drawn bundles and their list, draws.json."),
    force: bool = typer.Option(False, "--force", help="Replace an output folder that is not an earlier draw."),
) -> None:
    """Draw N worlds from WORLD's identified set (the ranges its manifest records): seeded, hashed, listed."""
    from rich.console import Console
    from rich.markup import escape

    from autovend.world.bundle import load_world, read_manifest
    from autovend.world.catalogue import resolve_world
    from autovend.world.draws import DRAWS_FILE, write_draws
    from autovend.world.ranges import read_ranges

    folder = resolve_world(world)
    base = load_world(folder)
    manifest = read_manifest(folder)
    ranges = read_ranges(manifest, str(folder))
    listing = write_draws(folder, base, manifest, ranges, n, seed, out, force=force)
    console = Console(highlight=False)
    console.print(escape(f"wrote {n} worlds drawn from {base.name} ({base.world_hash[:12]}) with seed {seed} to {out}"))
    for d in listing["draws"][:5]:
        console.print(escape(f"  {d['name']}: {d['world_hash'][:12]}"))
    if n > 5:
        console.print(f"  ... and {n - 5} more; all listed in {escape(str(out / DRAWS_FILE))}")
