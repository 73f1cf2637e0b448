"""`autovend init-source NAME`: a new source's params file and DVC pipeline, from the shipped pipelines' template."""

from __future__ import annotations

from pathlib import Path

import typer

from autovend.cli.app import app


@app.command("init-source")
def init_source_cmd(
    name: str = typer.Argument(..., help="The source's name (lower-case letters, digits, '-'), e.g. kyiv-coffee."),
    world: str | None = typer.Option(None, "--world", help="The name of the world it ships; default the source's."),
    climate: str = typer.Option(
        "source",
        "--climate",
        help="export.climate: 'source' (the source's weather table), a normals CSV, or a named climate of its country.",
    ),
    force: bool = typer.Option(False, "--force", help="Replace params/NAME.yaml and pipelines/NAME/dvc.yaml."),
) -> None:
    """Write params/NAME.yaml (every setting, commented) and pipelines/NAME/dvc.yaml for a new source.

    Run it in the repository's root. Then put the source at data/raw/NAME (`autovend adapt ... -o data/raw/NAME`),
    `dvc repro pipelines/NAME/dvc.yaml`, and `autovend world install worlds/WORLD` (docs/operators.md).
    """
    from rich.console import Console
    from rich.markup import escape

    from autovend.pipeline.newsource import init_source

    params, pipeline = (
        p.relative_to(Path.cwd()) for p in init_source(name, world, root=Path.cwd(), climate=climate, force=force)
    )
    console = Console(highlight=False)
    console.print(escape(f"wrote {params}"), soft_wrap=True)
    console.print(escape(f"wrote {pipeline}"), soft_wrap=True)
    console.print(
        escape(
            f"next: put the source folder at data/raw/{name}, check it (autovend check data/raw/{name} --params "
            f"{params}), then dvc repro {pipeline} and autovend world install worlds/{world or name}"
        ),
        soft_wrap=True,
    )
