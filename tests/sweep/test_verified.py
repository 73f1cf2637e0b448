"""A sweep's row says "verified" only after this sweep's own replay of the run, and only for the files it compared.

The worker replays a finished run (`autovend verify`) and keeps the record in OUT/verified/<world>/<run>.json as
well as in RUN/verify.json. A run folder copied in with a verify.json of its own (even one whose file hashes are
right) is not taken at its word: its row is unverified until the sweep replays it, and a tampered copy then says
false. A file changed after the replay makes the record stale, and the sweep replays the run again.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from autovend.agents.base import make_agent
from autovend.evaluation.verify import VERIFY_FILE, digests
from autovend.runner import run_episode
from autovend.sweep import parse_spec
from autovend.sweep.results import read_result
from autovend.sweep.tasks import Channel, WorldFacts, execute, plan, verification_record
from autovend.world.bundle import load_world, make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world


@pytest.fixture(scope="module")
def toy_bundle(tmp_path_factory) -> Path:
    """A 3-machine, 12-product toy world (8 days), small enough for the fast suite."""
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=8))
    files = world_files(world)
    files["README.md"] = b"# toy world\n"
    out = tmp_path_factory.mktemp("worlds") / "toy3"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


def _tasks(toy_bundle, out):
    world = load_world(toy_bundle)
    facts = {"toy3": WorldFacts(str(toy_bundle), world.world_hash, world.horizon_days)}
    spec = parse_spec({"worlds": [str(toy_bundle)], "agents": ["baseline"], "seeds": [1, 2], "days": 3})
    return plan(spec, out, facts), world


def test_verified_means_replayed_by_this_sweep(toy_bundle, tmp_path):
    out = tmp_path / "sweep"
    (mine, copied), world = _tasks(toy_bundle, out)
    channel = Channel(topic="t", stop="s")
    assert execute(mine, channel).status == "ran"
    assert verification_record(mine) == out / "verified" / "toy3" / "baseline-s1-d3.json"
    assert verification_record(mine).is_file() and read_result(mine, out).verified is True

    # a run made elsewhere, copied in with a verify.json of its own claiming it verified (hashes and all)
    elsewhere = tmp_path / "elsewhere"
    run_episode(world, make_agent("baseline", 2), 2, days=3, out_dir=elsewhere, world_path=toy_bundle)
    conn = sqlite3.connect(elsewhere / "records.sqlite")
    assert conn.execute("UPDATE daily_costs SET amount = 0 WHERE rowid = 1").rowcount == 1  # a fee it never paid
    conn.commit()
    conn.close()
    claim = {"verified": True, "verifier": {"rules": 2, "code_version": "0.1.0"}, "files": digests(elsewhere)}
    (elsewhere / VERIFY_FILE).write_text(json.dumps(claim))
    shutil.copytree(elsewhere, copied.run_dir)
    assert read_result(copied, out).verified is None  # the folder's word only: not verified
    assert execute(copied, channel).status == "finished"  # the sweep finds it finished, and replays it
    assert read_result(copied, out).verified is False
    record = json.loads(verification_record(copied).read_text())
    assert record["difference"]["where"] == "records.sqlite" and record["difference"]["table"] == "daily_costs"

    # a file of a verified run edited afterwards: the record no longer holds, and the sweep replays the run again
    report = tmp_path / "sweep" / "runs" / "toy3" / "baseline-s1-d3" / "report.md"
    report.write_text(report.read_text().replace("# Run", "# Run (best)", 1))
    assert read_result(mine, out).verified is None
    execute(mine, channel)
    assert read_result(mine, out).verified is False
    assert json.loads(verification_record(mine).read_text())["difference"]["where"] == "report.md"


def test_runs_copied_into_a_sweep_are_replayed_before_the_leaderboard_says_anything(toy_bundle, tmp_path):
    from autovend.sweep.engine import run_sweep

    out = tmp_path / "sweep"
    (good, bad), world = _tasks(toy_bundle, out)
    for task in (good, bad):  # two runs made elsewhere, copied in whole: the sweep has nothing left to run
        run_episode(
            world, make_agent("baseline", task.seed), task.seed, days=3, out_dir=task.run_dir, world_path=toy_bundle
        )
        (Path(task.run_dir) / VERIFY_FILE).write_text(json.dumps({"verified": True, "files": digests(task.run_dir)}))
    report = Path(bad.run_dir) / "report.md"
    report.write_text(report.read_text().replace("# Run", "# Run (best)", 1))
    spec = parse_spec({"worlds": [str(toy_bundle)], "agents": ["baseline"], "seeds": [1, 2], "days": 3})
    outcome = run_sweep(spec, out)
    assert outcome.cluster is None  # no run to do: no cluster, yet both were replayed here
    assert [r.verified for r in outcome.rows] == [True, False]
    assert "| 1 | baseline | 2 | 1, 2 | 1/2 |" in (out / "leaderboard.md").read_text()
