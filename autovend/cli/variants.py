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
