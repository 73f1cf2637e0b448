"""Same seed and actions give the same run to the last digit; checkpoints continue exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from autovend.errors import CheckpointError, EpisodeOver
from autovend.sim import Simulator
from autovend.sim.checkpoint import world_fingerprint
from autovend.sim.scripted import KeepStocked
from autovend.world.model import Economics
from autovend.world.toy import toy_world

from .conftest import advance_to

POLICY = KeepStocked(n_skus=8, cover_days=6)


def run(world, seed: int, days: int) -> Simulator:
    sim = Simulator(world, seed=seed)
    POLICY.run(sim, days=days)
    return sim


def assert_same_run(a: Simulator, b: Simulator) -> None:
    assert a.day == b.day and a.done == b.done
    assert a.cash_fen == b.cash_fen and a.balance() == b.balance()
    pd.testing.assert_frame_equal(a.ledger(), b.ledger())
    for table in a.records.tables:
        pd.testing.assert_frame_equal(a.records.frame(table), b.records.frame(table), check_exact=True)
    for table in a.hidden.tables:
        pd.testing.assert_frame_equal(a.hidden.frame(table), b.hidden.frame(table), check_exact=True)
    assert np.array_equal(a.shelf_units(), b.shelf_units())
    assert a.shelf_batches().equals(b.shelf_batches()) and a.warehouse_batches().equals(b.warehouse_batches())
    assert [r.to_dict() for r in a.reports] == [r.to_dict() for r in b.reports]


def test_same_seed_same_actions_same_run(world):
    assert_same_run(run(world, 7, 25), run(world, 7, 25))


def test_another_seed_gives_another_run(world):
    a, b = run(world, 7, 25), run(world, 8, 25)
    assert a.records.frame("daily_sales")["units"].sum() != b.records.frame("daily_sales")["units"].sum()


def test_a_machines_demand_does_not_depend_on_other_machines(world):
    """Common random numbers: stocking machines 1 and 2 differently leaves machine 0's draws unchanged."""
    sims = []
    for other_qty in (0, 9):
        sim = Simulator(world, seed=21)
        sim.place_order([{"sku_id": k, "qty": 60} for k in ("SKU0001", "SKU0002", "SKU0003")])
        advance_to(sim, 9)
        items = [{"device_id": "CN_WORKSITE_01", "sku_id": k, "qty": 12} for k in ("SKU0001", "SKU0002")]
        if other_qty:
            items += [{"device_id": d, "sku_id": "SKU0003", "qty": other_qty} for d in sim.device_ids[1:]]
            sim.adjust_price([{"device_id": "CN_CAMPUS_01", "sku_id": "SKU0001", "price": 2.0}])
        sim.restock(items)
        for _ in range(3):
            sim.end_day()
        sims.append(sim)
    demand = [s.hidden.frame("demand") for s in sims]
    m0 = [d[d["device_id"] == "CN_WORKSITE_01"].reset_index(drop=True) for d in demand]
    pd.testing.assert_frame_equal(m0[0], m0[1], check_exact=True)
    assert len(demand[1]) > len(demand[0])  # the other machines did sell in the second run


def test_checkpoint_restores_a_run_that_continues_exactly(world, tmp_path):
    whole = run(world, 5, 30)
    part = run(world, 5, 13)
    path = part.save(tmp_path / "run.ckpt")
    del part
    restored = Simulator.load(path, world)
    assert restored.day == 14
    POLICY.run(restored, days=17)
    assert_same_run(whole, restored)


def test_checkpoint_after_the_last_day_stays_over(tmp_path):
    world = toy_world(2, 4, seed=0, economics=Economics(horizon_days=2))
    sim = Simulator(world, seed=0)
    sim.end_day()
    sim.end_day()
    restored = Simulator.load(sim.save(tmp_path / "end.ckpt"), world)
    assert restored.done and restored.balance() == sim.balance()
    with pytest.raises(EpisodeOver):
        restored.end_day()


def test_checkpoint_refuses_another_world_or_a_broken_file(world, short_world, tmp_path):
    path = run(world, 1, 3).save(tmp_path / "a.ckpt")
    assert world_fingerprint(world) != world_fingerprint(short_world)
    with pytest.raises(CheckpointError, match="does not match world"):
        Simulator.load(path, short_world)
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(CheckpointError, match="cannot read"):
        Simulator.load(bad, world)
    with pytest.raises(CheckpointError, match="cannot read"):
        Simulator.load(tmp_path / "missing.ckpt", world)
