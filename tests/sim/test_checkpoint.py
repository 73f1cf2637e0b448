"""Snapshots of a run: saved to one file and read back, restored into a simulator that continues exactly."""

from __future__ import annotations

import ast
import copy
import os
import pickle
from pathlib import Path

import pytest

from autovend.errors import CheckpointError
from autovend.sim import Simulator, checkpoint
from autovend.sim.scripted import KeepStocked

POLICY = KeepStocked(n_skus=6, cover_days=5)


def test_a_saved_snapshot_reads_back_whole(world, tmp_path):
    sim = Simulator(world, seed=2)
    POLICY.run(sim, days=6)
    path = checkpoint.save(sim.snapshot(), world, tmp_path / "deep" / "run.ckpt")
    back = checkpoint.load(path, world)
    assert back.records == sim.records.serialize()
    assert (back.state.day, back.state.cash_fen) == (7, sim.cash_fen)
    assert back.state.ledger == sim.snapshot().state.ledger
    assert back.hidden.frame("demand").equals(sim.hidden.frame("demand"))
    assert [p.name for p in path.parent.iterdir()] == ["run.ckpt"]  # written through a temporary sibling
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()


def test_a_restored_copy_continues_like_the_original(world):
    sim = Simulator(world, seed=4)
    POLICY.run(sim, days=5)
    twin = Simulator.restore(world, copy.deepcopy(sim.snapshot()))
    POLICY.run(sim, days=4)
    POLICY.run(twin, days=4)
    assert (twin.day, twin.cash_fen, twin.balance()) == (sim.day, sim.cash_fen, sim.balance())
    assert twin.records.frame("daily_summary").equals(sim.records.frame("daily_summary"))
    assert twin.hidden.frame("demand").equals(sim.hidden.frame("demand"))


def test_a_snapshot_shares_the_live_state(world):
    """Taking a snapshot copies nothing but the database: the state moves on with the run."""
    sim = Simulator(world, seed=0)
    snap = sim.snapshot()
    sim.end_day()
    assert snap.state.day == 2 and snap.state is sim.snapshot().state and snap.hidden is sim.hidden


def test_a_checkpoint_of_another_version_is_refused(world, tmp_path):
    path = checkpoint.save(Simulator(world, seed=0).snapshot(), world, tmp_path / "run.ckpt")
    payload = pickle.loads(path.read_bytes())
    path.write_bytes(pickle.dumps({**payload, "version": 1}))
    with pytest.raises(CheckpointError, match="version 1, this AutoVend reads version 2"):
        checkpoint.load(path, world)


def test_the_checkpoint_module_does_not_import_the_simulator():
    """checkpoint.py and simulator.py imported each other (broken by a lazy import); now only simulator -> checkpoint."""
    tree = ast.parse(Path(checkpoint.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "autovend.sim.state" in imported and "autovend.sim.simulator" not in imported


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
