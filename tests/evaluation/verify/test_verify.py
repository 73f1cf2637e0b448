"""`autovend verify`: runs of every door replay to what their folders record; one changed argument is caught.

The seven doors' runs (conftest.py: `autovend run`, a plugin, an LLM agent, MCP over stdio and HTTP, the web
console, a sweep) must each verify; then one argument of one recorded call is changed, and verify must fail naming
that day and that call.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from autovend.evaluation.verify import (
    WorldNotFoundError,
    first_difference,
    recorded_verification,
    verify_run,
)
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.evaluation.verify.doors import DAYS
from tests.evaluation.verify.doors import calls as _calls
from tests.evaluation.verify.doors import cli as _cli


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
    assert result.output.count("verified") == 7 and result.output.count("checks, every file equal") == 7


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
    if door == "cli":  # the baseline is run again: it would not make the changed call
        assert diff.field == "the call" and "BaselineAgent agent calls restock" in str(diff.why)
    else:  # no agent to run again (MCP, LLM): the replayed call answers otherwise than the recorded one
        assert diff.field.startswith("result.")
    cli = _cli("verify", str(tmp_path / door))
    assert cli.exit_code == 1
    assert f"trajectory.jsonl, line {rec['seq'] + 1}, day {rec['day']}, call {rec['seq']} ({tool})" in cli.output


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

    # shock sigma 0.5: a value the world's copy keeps to the digit (the default 0.5577882134165814 is kept as
    # 0.557788, so the copy would not be the world the run was made on, and its shocks would differ)
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=4), shock_sigma=0.5)
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
    result = verify_run(run, world=tmp_path / "kept")
    assert result.ok, result.difference
    assert not marker.exists()
