"""Run folders: save a real session, load it back identically; refuse incomplete folders and wrong worlds."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from autovend.errors import RunFolderError
from autovend.evaluation.rundata import DAILY_COLUMNS, RunData, daily_frame, save_run_data
from autovend.session import ToolSession


def _play(session: ToolSession) -> None:
    """Order on day 1, stock both machines on day 4 (arrival), run to day 6."""
    session.call("place_order", {"items": [{"sku_id": "A", "qty": 10}, {"sku_id": "B", "qty": 8}]})
    for _ in range(3):
        session.call("end_day", {})
    session.call(
        "restock",
        {"items": [{"device_id": "M1", "sku_id": "A", "qty": 5}, {"device_id": "M2", "sku_id": "B", "qty": 4}]},
    )
    session.call("restock", {"items": [{"device_id": "M1", "sku_id": "C", "qty": 1}]})  # rejected: no stock
    session.call("end_day", {})
    session.call("end_day", {})


@pytest.fixture(scope="module")
def saved(world, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run") / "hand-s1"
    with ToolSession(world, seed=1, trajectory_path=run_dir / "trajectory.jsonl") as session:
        _play(session)
        save_run_data(session, run_dir, meta={"agent": "hand", "agent_config": {"x": 1}, "wall_time_s": 1.5})
        memory = RunData.from_session(session, meta={"agent": "hand"})
    return run_dir, memory


def test_round_trip_equals_the_run_in_memory(saved, world):
    run_dir, memory = saved
    loaded = RunData.load(run_dir)
    for name, frame in memory.records.items():
        pd.testing.assert_frame_equal(loaded.records[name], frame, check_dtype=True)
    for name, frame in memory.hidden.items():
        pd.testing.assert_frame_equal(loaded.hidden[name], frame, check_dtype=True)
    assert loaded.world.name == "hand" and loaded.world.n_machines == 2
    # 1 order + 5 end_day + 2 restock calls
    assert len(loaded.calls) == 8 == loaded.meta["tool_calls"]["seq"]
    assert [c["tool"] for c in loaded.calls].count("end_day") == 5
    assert loaded.days == 5 and loaded.name == "hand-s1" and loaded.agent == "hand" and loaded.seed == 1
    assert loaded.meta["agent_config"] == {"x": 1} and loaded.meta["wall_time_s"] == 1.5
    assert loaded.meta["done"] is False and loaded.meta["horizon_days"] == 12


def test_daily_csv_matches_the_ledger(saved):
    run_dir, _ = saved
    daily = pd.read_csv(run_dir / "daily.csv")
    assert list(daily.columns) == DAILY_COLUMNS
    assert list(daily["day"]) == [1, 2, 3, 4, 5]
    # day 1: 10 x 2.0 + 8 x 2.0 = 36.0 bought, 2 machines x 4 fee = 8.0 (nothing else before day 4)
    assert daily.loc[0, "purchase"] == 36.0 and daily.loc[0, "daily_fee"] == 8.0
    assert daily.loc[0, "cash"] == 40000 - 36 - 8
    assert daily.loc[0, "inventory_at_cost"] == 36.0 and daily.loc[0, "net_assets"] == 40000 - 8
    # day 4: two machines visited, 2 x 35
    assert daily.loc[3, "visit"] == 70.0 and daily.loc[3, "visits"] == 2
    assert (daily["net_assets"] - daily["cash"] - daily["inventory_at_cost"]).abs().max() < 0.011


def test_run_json_is_complete(saved):
    run_dir, _ = saved
    meta = json.loads((run_dir / "run.json").read_text())
    for key in (
        "world_name",
        "world_hash",
        "world_path",
        "agent",
        "agent_config",
        "seed",
        "days",
        "code_version",
        "token_usage",
        "api_cost_usd",
        "wall_time_s",
        "final_net_assets",
        "tool_calls",
    ):
        assert key in meta
    assert meta["final_net_assets"] == pd.read_csv(run_dir / "daily.csv")["net_assets"].iloc[-1]


def test_missing_files_are_refused(saved, tmp_path):
    run_dir, _ = saved
    with pytest.raises(RunFolderError, match="no run.json"):
        RunData.load(tmp_path)
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "records.sqlite").unlink()
    with pytest.raises(RunFolderError, match="records.sqlite is missing"):
        RunData.load(broken)
    nowhere = tmp_path / "nowhere"
    shutil.copytree(run_dir, nowhere)
    shutil.rmtree(nowhere / "world")
    with pytest.raises(RunFolderError, match="cannot find the world"):
        RunData.load(nowhere)


class _Planted:
    """What a hostile pickle does when loaded: here, write a file (a shell command would do the same)."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (Path.write_text, (str(self.target), "ran"))  # type: ignore[return-value]


def test_a_pickled_world_in_the_folder_is_never_loaded(saved, tmp_path):
    """A world is kept as data files (world/, a bundle); an older folder's world.pkl is refused, never unpickled."""
    import pickle

    run_dir, _ = saved
    assert (run_dir / "world" / "manifest.json").is_file() and not (run_dir / "world.pkl").exists()
    assert RunData.load(run_dir).world.world_hash == json.loads((run_dir / "run.json").read_text())["world_hash"]
    planted = tmp_path / "planted"
    shutil.copytree(run_dir, planted)
    shutil.rmtree(planted / "world")
    marker = tmp_path / "marker.txt"
    (planted / "world.pkl").write_bytes(pickle.dumps(_Planted(marker)))
    with pytest.raises(RunFolderError, match="world.pkl, a pickle, which AutoVend does not read"):
        RunData.load(planted)
    assert not marker.exists()


def test_a_world_with_another_hash_is_refused(saved, world):
    run_dir, _ = saved
    meta = json.loads((run_dir / "run.json").read_text())
    other = dataclasses.replace(world, world_hash="f" * 64)
    copy = run_dir.parent / "other"
    shutil.copytree(run_dir, copy)
    meta["world_hash"] = "a" * 64
    (copy / "run.json").write_text(json.dumps(meta))
    with pytest.raises(RunFolderError, match="world hash"):
        RunData.load(copy, world=other)


def test_bundle_world_is_found_by_path(tmp_path):
    from autovend.world.bundle import load_world

    bundle = Path(__file__).resolve().parents[2] / "worlds" / "cn20"
    cn20 = load_world(bundle)
    with ToolSession(cn20, seed=2) as session:
        session.call("end_day", {})
        save_run_data(session, tmp_path / "r", meta={"world_path": str(bundle), "agent": "idle"})
    assert not (tmp_path / "r" / "world").exists()  # a bundle world is not copied into the folder
    assert not (tmp_path / "r" / "trajectory.jsonl").exists()  # the session kept no trajectory
    run = RunData.load(tmp_path / "r")
    assert run.world.world_hash == cn20.world_hash and run.calls == []
    # one idle day: only the fixed fee of 20 machines x 4
    assert run.final_net_assets == 40000 - 80


def test_daily_frame_orders_days():
    summary = pd.DataFrame(
        [
            {
                "day": d,
                "date": f"2025-01-0{d}",
                "cash": 10.0 * d,
                "net_assets": 12.0 * d,
                "units_sold": 0,
                "expired_units_sold": 0,
                "revenue": 0.0,
                "cogs": 0.0,
                "gross_profit": 0.0,
                "purchase": 0.0,
                "warehouse_rent": 0.0,
                "daily_fee": 0.0,
                "visit": 0.0,
                "expired_fine": 0.0,
                "expiry_writeoff": 0.0,
                "discard_writeoff": 0.0,
                "net": 0.0,
                "n_visits": 0,
                "shelf_units": 0,
                "shelf_expired_units": 0,
                "warehouse_units": 0,
                "warehouse_expired_units": 0,
                "in_transit_units": 0,
                "shelf_value": 1.0 * d,
                "warehouse_value": 0.5 * d,
                "in_transit_value": 0.5 * d,
            }
            for d in (2, 1)
        ]
    )
    out = daily_frame(summary)
    assert list(out["day"]) == [1, 2] and list(out["inventory_at_cost"]) == [2.0, 4.0]


def test_a_trajectory_cut_by_a_crash_keeps_its_complete_calls(tmp_path):
    from autovend.evaluation.rundata import read_calls

    path = tmp_path / "t.jsonl"
    head = '{"kind":"start","seed":1}\n'
    call = '{"kind":"call","seq":1,"day":1,"tool":"end_day","ok":true,"result":{}}\n'
    path.write_text(head + call + '{"kind":"call","seq":2,"da')
    assert [c["seq"] for c in read_calls(path)] == [1]
    path.write_text(head + "{oops\n" + call)
    with pytest.raises(RunFolderError, match="t.jsonl:2 is not valid JSON"):
        read_calls(path)
    assert read_calls(tmp_path / "absent.jsonl") == []
