"""The runs the verify tests check, made once per test session: seven doors on a small toy world bundle.

Seven doors play a 6-day toy world bundle (4 machines, 30 products) with seed 1: `autovend run` (the baseline),
a plugin (examples/agents/hold.py:HoldAgent), an LLM agent against a scripted OpenAI-compatible server, an MCP
client over stdio against `autovend serve --out` (the baseline's calls, sent in two sessions, so the run is
resumed from its day-2 checkpoint), the same calls over MCP's streamable HTTP and through the web console's
play episode, and a sweep's task (about 20 s in all).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from autovend.world.bundle import make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.evaluation.verify.doors import DAYS, ROOT, calls, cli, http_session, mcp_session


@pytest.fixture(scope="session")
def bundle(tmp_path_factory) -> Path:
    world = toy_world(4, 30, seed=0, economics=Economics(horizon_days=8))
    files = world_files(world)
    files["README.md"] = b"# toy world for the verify tests\n"
    out = tmp_path_factory.mktemp("worlds") / "toy4"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


@pytest.fixture(scope="session")
def doors(bundle, tmp_path_factory) -> dict[str, Path]:
    from autovend.console.episode import PlayEpisode
    from autovend.mcp.server import build_server
    from autovend.sweep import parse_spec
    from autovend.sweep.tasks import Channel, WorldFacts, execute, plan
    from autovend.world.bundle import load_world
    from tests.agents.llm.fake_openai import FakeOpenAI
    from tests.mcp_http import served_over_http

    base = tmp_path_factory.mktemp("doors")
    w, days = str(bundle), str(DAYS)
    out = {door: base / door for door in ("cli", "plugin", "llm", "mcp")}
    assert cli("run", "--world", w, "--seed", "1", "--days", days, "--out", str(out["cli"])).exit_code == 0
    hold = str(ROOT / "examples" / "agents" / "hold.py") + ":HoldAgent"
    args = ["run", "--world", w, "--agent", hold, "--seed", "1", "--days", days, "--out", str(out["plugin"])]
    assert cli(*args).exit_code == 0
    with FakeOpenAI() as server:
        args = ["run", "--world", w, "--agent", "openai:fake", "--base-url", server.base_url, "--seed", "1"]
        result = cli(*args, "--days", days, "--out", str(out["llm"]))
    assert result.exit_code == 0, result.output
    actions = [(c["tool"], c["arguments"]) for c in calls(out["cli"])]
    anyio.run(mcp_session, bundle, out["mcp"], actions, 2)  # two days, then the server stops
    second = [i for i, (name, _) in enumerate(actions) if name == "end_day"][1] + 1
    anyio.run(mcp_session, bundle, out["mcp"], actions[second:], None)  # a new server resumes from day 2
    world = load_world(bundle)
    app_ = build_server(world, seed=1, out=base / "http-runs", transport="http", days=DAYS, world_path=bundle)
    with served_over_http(app_) as url:
        anyio.run(http_session, url, actions)
    out["http"] = base / "http-runs" / "http"
    episode = PlayEpisode(world, 1, base / "console", days=DAYS, world_path=bundle).start()
    try:
        for name, arguments in actions:
            assert episode.call(name, arguments).ok or name != "end_day"
    finally:
        episode.close()
    out["console"] = base / "console"
    spec = parse_spec({"worlds": [w], "agents": ["baseline"], "seeds": [1], "days": DAYS})
    (task,) = plan(spec, base / "sweep", {"toy4": WorldFacts(w, world.world_hash, world.horizon_days)})
    assert execute(task, Channel(topic="t", stop="s")).status == "ran"
    out["sweep"] = Path(task.run_dir)
    return out
