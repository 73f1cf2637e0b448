"""`autovend verify`: runs of every door replay to what their folders record; one changed argument is caught.

Seven doors play a 6-day toy world bundle (4 machines, 30 products) with seed 1: `autovend run` (the baseline),
a plugin (examples/agents/hold.py:HoldAgent), an LLM agent against a scripted OpenAI-compatible server, an MCP
client over stdio against `autovend serve --out` (the baseline's calls, sent in two sessions, so the run is
resumed from its day-2 checkpoint), the same calls over MCP's streamable HTTP and through the web console's
play episode, and a sweep's task. Each folder must verify; then one argument of one recorded call is changed,
and verify must fail naming that day and that call.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from typer.testing import CliRunner

from autovend.cli import app
from autovend.console.episode import PlayEpisode
from autovend.evaluation.verify import (
    WorldNotFoundError,
    first_difference,
    recorded_verification,
    verify_run,
)
from autovend.mcp.server import build_server
from autovend.sweep import parse_spec
from autovend.sweep.tasks import Channel, WorldFacts, execute, plan
from autovend.tools.trajectory import read_trajectory
from autovend.world.bundle import load_world, make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.agents.llm.fake_openai import FakeOpenAI
from tests.mcp_http import served_over_http

ROOT = Path(__file__).resolve().parents[2]
DAYS = 6


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    world = toy_world(4, 30, seed=0, economics=Economics(horizon_days=8))
    files = world_files(world)
    files["README.md"] = b"# toy world for the verify tests\n"
    out = tmp_path_factory.mktemp("worlds") / "toy4"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


def _calls(run_dir: Path) -> list[dict[str, Any]]:
    return [r for r in read_trajectory(run_dir / "trajectory.jsonl") if r.get("kind") == "call"]


async def _http_session(url: str, actions: list[tuple[str, Any]]) -> None:
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(f"{url}?run=http") as (r, w, *_), ClientSession(r, w) as s:
        await s.initialize()
        for name, arguments in actions:
            res = await s.call_tool(name, arguments)
            assert not res.is_error or name != "end_day", res.content


async def _mcp_session(bundle: Path, out: Path, actions: list[tuple[str, Any]], ends: int | None) -> None:
    """Send `actions` to `autovend serve --out out` over stdio until `ends` end_day calls have gone (None: all)."""
    args = [
        "-m",
        "autovend.cli",
        "serve",
        "--world",
        str(bundle),
        "--seed",
        "1",
        "--days",
        str(DAYS),
        "--out",
        str(out),
    ]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        done = 0
        for name, arguments in actions:
            res = await s.call_tool(name, arguments)
            assert not res.is_error or name != "end_day", res.content
            done += name == "end_day"
            if done == ends:
                return


@pytest.fixture(scope="module")
def doors(bundle, tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("doors")
    w, days = str(bundle), str(DAYS)
    out = {door: base / door for door in ("cli", "plugin", "llm", "mcp")}
    assert _cli("run", "--world", w, "--seed", "1", "--days", days, "--out", str(out["cli"])).exit_code == 0
    hold = str(ROOT / "examples" / "agents" / "hold.py") + ":HoldAgent"
    args = ["run", "--world", w, "--agent", hold, "--seed", "1", "--days", days, "--out", str(out["plugin"])]
    assert _cli(*args).exit_code == 0
    with FakeOpenAI() as server:
        args = ["run", "--world", w, "--agent", "openai:fake", "--base-url", server.base_url, "--seed", "1"]
        result = _cli(*args, "--days", days, "--out", str(out["llm"]))
    assert result.exit_code == 0, result.output
    actions = [(c["tool"], c["arguments"]) for c in _calls(out["cli"])]
    anyio.run(_mcp_session, bundle, out["mcp"], actions, 2)  # two days, then the server stops
    second = [i for i, (name, _) in enumerate(actions) if name == "end_day"][1] + 1
    anyio.run(_mcp_session, bundle, out["mcp"], actions[second:], None)  # a new server resumes from day 2
    world = load_world(bundle)
    app_ = build_server(world, seed=1, out=base / "http-runs", transport="http", days=DAYS, world_path=bundle)
    with served_over_http(app_) as url:
        anyio.run(_http_session, url, actions)
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


@pytest.mark.slow  # the doors fixture plays seven runs (about 20 s)
def test_untouched_runs_of_every_door_verify(doors):
    meta = {door: json.loads((d / "run.json").read_text()) for door, d in doors.items()}
    assert [meta[d]["agent"] for d in doors] == ["baseline", "hold", "openai:fake", "mcp", "mcp", "human", "baseline"]
    assert meta["http"]["agent_config"]["transport"] == "http"
    assert meta["mcp"]["resumed_from_day"] == 2 and meta["llm"]["token_usage"]["requests"] >= DAYS
    for door, run_dir in doors.items():
        result = verify_run(run_dir)
        assert result.ok, (door, result.difference and result.difference.message())
        assert result.calls == len(_calls(run_dir)) and result.days == DAYS, door
    # the LLM run replays without its model: no server is running now
    result = _cli("verify", *(str(d) for d in doors.values()))
    assert result.exit_code == 0, result.output
    assert (
        result.output.count("verified") == 7 and "trajectory results, daily.csv and metrics.json equal" in result.output
    )


@pytest.mark.slow  # the doors fixture plays seven runs (about 20 s)
def test_a_sweep_records_its_runs_verified(doors, bundle):
    run_dir = doors["sweep"]
    assert recorded_verification(run_dir) is True
    record = json.loads((run_dir / "verify.json").read_text())
    assert record["verified"] is True and record["calls"] == len(_calls(run_dir)) and record["difference"] is None


def _tampered(src: Path, dst: Path, tool: str) -> dict[str, Any]:
    """A copy of the run with the first item's qty of its first `tool` call raised by one; that call's record."""
    shutil.copytree(src, dst)
    path = dst / "trajectory.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("tool") == tool:
            rec["arguments"]["items"][0]["qty"] += 1
            lines[i] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return rec
    raise AssertionError(f"no {tool} call in {src}")


@pytest.mark.slow  # the doors fixture
@pytest.mark.parametrize(("door", "tool"), [("cli", "restock"), ("mcp", "place_order"), ("llm", "restock")])
def test_one_changed_argument_fails_and_names_the_day_and_the_call(doors, tmp_path, door, tool):
    rec = _tampered(doors[door], tmp_path / door, tool)
    result = verify_run(tmp_path / door)
    diff = result.difference
    assert not result.ok and diff is not None
    assert (diff.where, diff.day, diff.call, diff.tool) == ("trajectory.jsonl", rec["day"], rec["seq"], tool)
    assert diff.field.startswith("result.")  # the replayed call answers otherwise than the recorded one
    cli = _cli("verify", str(tmp_path / door))
    assert cli.exit_code == 1
    assert f"trajectory.jsonl, day {rec['day']}, call {rec['seq']} ({tool})" in cli.output


@pytest.mark.slow  # the doors fixture plays seven runs (about 20 s)
def test_edited_figures_are_caught_in_the_file_that_holds_them(doors, tmp_path):
    run = tmp_path / "daily"
    shutil.copytree(doors["cli"], run)
    lines = (run / "daily.csv").read_text().splitlines()
    head, row = lines[0].split(","), lines[4].split(",")  # day 4
    col = head.index("revenue")
    row[col] = f"{float(row[col]) + 0.01:.2f}"  # one fen more
    lines[4] = ",".join(row)
    (run / "daily.csv").write_text("\n".join(lines) + "\n")
    diff = verify_run(run).difference
    assert diff is not None and (diff.where, diff.day, diff.field) == ("daily.csv", 4, "revenue")
    assert round(diff.recorded - diff.replayed, 2) == 0.01

    run = tmp_path / "metrics"
    shutil.copytree(doors["cli"], run)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["waste_rate"] = 0.5
    (run / "metrics.json").write_text(json.dumps(metrics))
    diff = verify_run(run).difference
    assert diff is not None and (diff.where, diff.field, diff.recorded) == ("metrics.json", "waste_rate", 0.5)


@pytest.mark.slow  # the doors fixture plays seven runs (about 20 s)
def test_a_run_whose_world_is_not_installed_is_refused_with_the_hash_it_needs(doors, bundle, tmp_path, monkeypatch):
    run = tmp_path / "elsewhere"
    shutil.copytree(doors["cli"], run)
    meta = json.loads((run / "run.json").read_text())
    meta["world_path"] = str(tmp_path / "gone")
    (run / "run.json").write_text(json.dumps(meta))
    monkeypatch.chdir(tmp_path)  # no ./worlds here; the shipped worlds have other hashes
    with pytest.raises(WorldNotFoundError, match=f"world hash {meta['world_hash']}"):
        verify_run(run)
    result = _cli("verify", str(run))  # `autovend` (cli.main) exits 2 with this AutoVendError's message
    assert isinstance(result.exception, WorldNotFoundError) and meta["world_hash"] in str(result.exception)
    assert _cli("verify", str(run), "--world", str(bundle)).exit_code == 0  # given with --world, it verifies


def test_first_difference_names_the_path_of_the_first_differing_leaf():
    a = {"ok": True, "result": {"accepted": [{"qty": 5, "cost": 10.0}], "n": 1}}
    b = {"ok": True, "result": {"accepted": [{"qty": 5, "cost": 10.0 + 1e-12}], "n": 2}}
    assert first_difference(a, b) == ("result.n", 1, 2)  # 1e-12 on 10.0 is within 1e-9 relative: equal
    assert first_difference(a, {**a, "ok": False}) == ("ok", True, False)
    assert first_difference([1, 2], [1, 2, 3]) == (" (length)", 2, 3)
    assert first_difference({"x": 0.01}, {"x": 0.02}) == ("x", 0.01, 0.02)  # one fen apart


class _Planted:
    """A hostile pickle: loading it would write `target` (a shell command would be as easy)."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (Path.write_text, (str(self.target), "ran"))


def test_the_world_is_never_taken_from_the_run_folder(tmp_path, monkeypatch):
    """A run on a world built in memory keeps a copy (world/): verify never uses it, nor a world.pkl, unless vouched."""
    import pickle

    from autovend.agents.hold import HoldAgent
    from autovend.runner import run_episode

    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=4))
    run = tmp_path / "run"
    run_episode(world, HoldAgent(), seed=1, days=2, out_dir=run, checkpoint="off", evaluate=False)
    monkeypatch.chdir(tmp_path)  # no ./worlds here, and the shipped worlds have other hashes
    with pytest.raises(WorldNotFoundError, match="is not installed"):
        verify_run(run)
    with pytest.raises(WorldNotFoundError, match="inside the run folder"):
        verify_run(run, world=run / "world")
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "world_path": str(run / "world")}))
    with pytest.raises(WorldNotFoundError, match="is not installed"):  # a world_path back into the folder is skipped
        verify_run(run)
    marker = tmp_path / "marker.txt"
    (run / "world.pkl").write_bytes(pickle.dumps(_Planted(marker)))
    with pytest.raises(WorldNotFoundError):
        verify_run(run)
    assert not marker.exists()
    shutil.copytree(run / "world", tmp_path / "kept")  # the caller keeps the world and vouches for it
    assert verify_run(run, world=tmp_path / "kept").ok
    assert not marker.exists()
