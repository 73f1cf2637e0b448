"""`autovend serve`: serve one episode's 18 tools over MCP (stdio, or streamable HTTP on 127.0.0.1)."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from autovend.cli.app import app

_TOY = re.compile(r"^(\d+)x(\d+)$")


@app.command()
def serve(
    world: Path | None = typer.Option(
        None, "--world", help="World bundle: a folder, or the name of a shipped world, e.g. cn20."
    ),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed of the episode (demand draws, lead times)."),
    transport: str = typer.Option("stdio", "--transport", help="stdio (default) or http."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="HTTP port on 127.0.0.1."),
    trajectory: Path | None = typer.Option(None, "--trajectory", help="Append every call to this JSONL file."),
    toy: str | None = typer.Option(
        None, "--toy", help="Serve an in-memory toy world instead of a bundle: MACHINESxPRODUCTS, e.g. 3x12."
    ),
    days: int | None = typer.Option(None, "--days", min=1, help="Episode length of a --toy world (default 180)."),
) -> None:
    """Serve one episode over MCP: the 18 tools, the system prompt and the daily prompt."""
    from autovend.errors import ConfigError

    if transport not in ("stdio", "http"):
        raise ConfigError(f"--transport must be stdio or http, got {transport!r}")
    if (world is None) == (toy is None):
        raise ConfigError("give exactly one of --world PATH (a world bundle) or --toy MxK (a toy world)")
    if days is not None and toy is None:
        raise ConfigError("--days only applies to --toy worlds; a bundle's horizon is frozen")
    from autovend.tools.mcp_server import build_server

    if toy is not None:
        m = _TOY.match(toy)
        if m is None:
            raise ConfigError(f"--toy must look like 3x12 (machines x products), got {toy!r}")
        from autovend.world.model import Economics, World
        from autovend.world.toy import toy_world

        extra = {} if days is None else {"economics": Economics(horizon_days=days)}
        source: World | Path = toy_world(int(m.group(1)), int(m.group(2)), seed=0, **extra)
    else:
        from autovend.world.catalogue import resolve_world

        assert world is not None
        source = resolve_world(world)
    served = build_server(source, seed=seed, trajectory_path=trajectory)
    try:
        if transport == "stdio":
            import anyio

            anyio.run(served.run_stdio)
        else:
            typer.echo(f"AutoVend MCP server on http://127.0.0.1:{port}/mcp (Ctrl-C stops it)", err=True)
            served.run_http(port)
    finally:
        served.close()
