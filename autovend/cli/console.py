"""`autovend console`: replay runs side by side (--run), or play an episode by hand (--world --seed --out)."""

from __future__ import annotations

from pathlib import Path

import typer

from autovend.cli.app import app
from autovend.webserve import READ_TIMEOUT_S, check_read_timeout

TOKEN_ENV = "AUTOVEND_CONSOLE_TOKEN"


@app.command("console")
def console_cmd(
    run: list[Path] = typer.Option(None, "--run", help="A run folder to replay; give it again to compare runs."),
    world: Path | None = typer.Option(
        None, "--world", help="Play: world bundle, a folder or the name of a shipped or installed world (e.g. cn20)."
    ),
    seed: int = typer.Option(1, "--seed", min=0, help="Play: the episode's seed (demand draws, lead times)."),
    out: Path | None = typer.Option(None, "--out", help="Play: the run folder (an unfinished one is resumed)."),
    days: int | None = typer.Option(None, "--days", min=1, help="Play: days to play; default the world's horizon."),
    force: bool = typer.Option(False, "--force", help="Play: replace a finished or unfinished run in --out."),
    scenario: str | None = typer.Option(
        None, "--scenario", help="Play: change the world first (a shipped scenario's name, or a scenario file)."
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on; anything but loopback requires a bearer token."
    ),
    port: int = typer.Option(8770, "--port", min=1, max=65535, help="Port to listen on."),
    token_env: str = typer.Option(
        TOKEN_ENV, "--token-env", help="Environment variable holding the bearer token every request must carry."
    ),
    read_timeout: float = typer.Option(
        READ_TIMEOUT_S,
        "--read-timeout",
        help="Seconds a request's headers and body may take to arrive; slower ones get 408 and are closed.",
    ),
) -> None:
    """A local web console: replay runs with a day slider, or play an episode through the 18 tools."""
    from autovend.access import bearer_token
    from autovend.console.server import serve
    from autovend.errors import ConfigError

    runs = list(run or [])
    if runs and (world is not None or out is not None):
        raise ConfigError("give either --run RUN (replay) or --world W --out RUN (play), not both")
    token = bearer_token(host, token_env)  # the same rule as `autovend serve`: off loopback a token is required
    seconds = check_read_timeout(read_timeout)
    login = f" (open http://{host}:{port}/?token=<the token in ${token_env}> once)" if token else ""
    if runs:
        from autovend.console.replay import replay_app
        from autovend.evaluation.rundata import RunData

        loaded = [RunData.load(r) for r in runs]
        typer.echo(
            f"AutoVend console: replay of {len(loaded)} run(s) on http://{host}:{port}/{login} (Ctrl-C stops it)"
        )
        serve(replay_app(loaded, host=host, token=token), host, port, read_timeout_s=seconds)
        return
    if world is None or out is None:
        raise ConfigError("give --run RUN to replay a run, or --world W --seed S --out RUN to play an episode")
    from autovend.console.episode import PlayEpisode
    from autovend.console.play import play_app
    from autovend.console.rules import horizon_warning
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import resolve_world
    from autovend.world.derive import apply_scenario

    path = resolve_world(world)
    played = apply_scenario(load_world(path), scenario)
    kept = path if played.world_hash else None  # a derived world: the run folder keeps its bundle
    episode = PlayEpisode(played, seed, out, days, world_path=kept, force=force).start()
    try:
        state = episode.state()
        how = f"resumed at day {state.day}" if episode.resumed else "day 1"
        typer.echo(
            f"AutoVend console: playing {path} seed {seed} into {out} ({how}) on http://{host}:{port}/{login} "
            "(Ctrl-C stops; run the same command again to continue from the last settled day)"
        )
        warning = horizon_warning(episode.world, episode.days)
        if warning:
            typer.echo(f"warning: {warning}", err=True)
        title = f"AutoVend · play {played.name} seed {seed} → {out}"
        serve(play_app(episode, title=title, host=host, token=token), host, port, read_timeout_s=seconds)
    finally:
        episode.close()
