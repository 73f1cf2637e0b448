"""`autovend serve`: serve AutoVend episodes over MCP (stdio or streamable HTTP); with --out, scored run folders."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from autovend.cli.app import app
from autovend.webserve import READ_TIMEOUT_S, check_read_timeout

_TOY = re.compile(r"^(\d{1,9})x(\d{1,9})$")
TOKEN_ENV = "AUTOVEND_MCP_TOKEN"


@app.command()
def serve(
    world: Path | None = typer.Option(
        None, "--world", help="World bundle: a folder, or the name of a shipped or installed world, e.g. cn20."
    ),
    seed: int = typer.Option(1, "--seed", min=0, help="Seed of the episode (demand draws, lead times)."),
    transport: str = typer.Option("stdio", "--transport", help="stdio (default) or http."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="HTTP port."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="HTTP address to listen on; anything but loopback requires a bearer token."
    ),
    token_env: str = typer.Option(
        TOKEN_ENV, "--token-env", help="HTTP: environment variable holding the bearer token clients must send."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Score the play: the run folder (stdio) or the folder of one run folder per HTTP session; "
        "started again, the server continues from the last settled day.",
    ),
    force: bool = typer.Option(False, "--force", help="With --out (stdio): replace a finished or unfinished run."),
    finish: bool = typer.Option(
        False, "--finish", help="Do not serve: score the unfinished run(s) in --out as they stand, then exit."
    ),
    trajectory: Path | None = typer.Option(
        None, "--trajectory", help="Unscored stdio play: append every call to this JSONL file."
    ),
    toy: str | None = typer.Option(
        None, "--toy", help="Serve an in-memory toy world instead of a bundle: MACHINESxPRODUCTS, e.g. 3x12."
    ),
    days: int | None = typer.Option(
        None, "--days", min=1, help="Days to play with --out (default: the horizon); with --toy, the toy's horizon."
    ),
    read_timeout: float = typer.Option(
        READ_TIMEOUT_S,
        "--read-timeout",
        help="HTTP: seconds a request's headers and body may take to arrive; slower ones get 408 and are closed.",
    ),
    scenario: str | None = typer.Option(
        None, "--scenario", help="Change the world first: a shipped scenario's name (heatwave) or a scenario file."
    ),
) -> None:
    """Serve episodes over MCP: the 18 tools, the system prompt and the daily prompt (docs/mcp-clients.md)."""
    from autovend.access import bearer_token
    from autovend.errors import ConfigError

    if transport not in ("stdio", "http"):
        raise ConfigError(f"--transport must be stdio or http, got {transport!r}")
    if (world is None) == (toy is None):
        raise ConfigError("give exactly one of --world PATH (a world bundle) or --toy MxK (a toy world)")
    if scenario is not None and toy is not None:
        raise ConfigError("--scenario changes a world bundle: give --world PATH, not --toy")
    if days is not None and toy is None and out is None:
        raise ConfigError("--days sets the days of a scored play (or a --toy world's horizon): give --out RUN too")
    if trajectory is not None and out is not None:
        raise ConfigError("--out already writes the trajectory (RUN/trajectory.jsonl): drop --trajectory")
    if trajectory is not None and transport == "http":
        raise ConfigError("--trajectory logs one stdio episode; over HTTP use --out, one run folder per session")
    if force and out is None:
        raise ConfigError("--force replaces the run in --out: give --out RUN too")
    if finish and (out is None or force):
        raise ConfigError("--finish scores the runs in --out as they stand: give --out RUN, and no --force")
    token = bearer_token(host, token_env) if transport == "http" else None
    seconds = check_read_timeout(read_timeout)
    from autovend.mcp.server import build_server

    world_path = None
    scored_days = days
    if toy is not None:
        from autovend.world.model import Economics
        from autovend.world.toy import (
            MAX_TOY_DAYS,
            MAX_TOY_MACHINES,
            MAX_TOY_PAIRS,
            MAX_TOY_PRODUCTS,
            toy_size_problem,
            toy_world,
        )

        fix = (
            f"give --toy MACHINESxPRODUCTS with 1 to {MAX_TOY_MACHINES:,} machines and 1 to {MAX_TOY_PRODUCTS:,} "
            f"products, at most {MAX_TOY_PAIRS:,} pairs (e.g. 3x12), and --days up to {MAX_TOY_DAYS:,}; or serve a "
            "world bundle with --world"
        )
        m = _TOY.match(toy)
        if m is None:
            raise ConfigError(f"--toy must look like 3x12 (machines x products), got {toy!r}; {fix}")
        problem = toy_size_problem(int(m.group(1)), int(m.group(2)), days)
        if problem is not None:
            raise ConfigError(f"--toy {toy}{'' if days is None else f' --days {days}'}: {problem}; {fix}")
        extra = {} if days is None else {"economics": Economics(horizon_days=days)}
        source = toy_world(int(m.group(1)), int(m.group(2)), seed=0, **extra)
        scored_days = None
    else:
        from autovend.world.bundle import load_world
        from autovend.world.catalogue import resolve_world
        from autovend.world.derive import apply_scenario

        assert world is not None
        world_path = resolve_world(world)
        source = apply_scenario(load_world(world_path), scenario)
        if not source.world_hash:  # a derived world: a run folder keeps its bundle
            world_path = None
        if days is not None and days > source.horizon_days:
            raise ConfigError(f"--days {days} is beyond the horizon of {world_path} ({source.horizon_days} days)")
    if finish:
        assert out is not None
        _finish(source, seed, out, world_path)
        return
    served = build_server(
        source,
        seed=seed,
        trajectory_path=trajectory,
        out=out,
        days=scored_days,
        world_path=world_path,
        force=force,
        transport=transport,
    )
    try:
        if transport == "stdio":
            import anyio

            if out is not None:
                served.open()  # resume (or refuse) before the client connects
            anyio.run(served.run_stdio)
        else:
            what = f", runs in {out}/<run name or session id>" if out is not None else ""
            typer.echo(f"AutoVend MCP server on http://{host}:{port}/mcp{what} (Ctrl-C stops it)", err=True)
            served.run_http(port, host=host, token=token, read_timeout_s=seconds)
    finally:
        served.close()


def _finish(world: Any, seed: int, out: Path, world_path: Path | None) -> None:
    """`--finish`: score every unfinished run in `out` with the runner's evaluation and print its net assets."""
    from autovend.errors import ConfigError
    from autovend.mcp.play import score_now, unfinished_runs

    runs = unfinished_runs(out)
    if not runs:
        raise ConfigError(
            f"{out} holds no unfinished run with a settled day (a checkpoint); nothing to score. A finished run "
            "already has its metrics.json"
        )
    for run_dir in runs:
        summary = score_now(world, seed, run_dir, world_path)
        typer.echo(
            f"{run_dir}: {summary.days} days scored, final net assets {summary.final_net_assets:,.2f} "
            f"{summary.currency}; "
            f"report: {run_dir / 'report.md'}"
        )
