"""The knob policy for the array env, and the training example that tunes it (shortened)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from autovend.agents.array_knobs import KNOB_RANGES, ArrayKnobs, knob_values
from autovend.arrays.actions import CODES
from autovend.arrays.env import ArrayVendVectorEnv

ROOT = Path(__file__).resolve().parents[2]


def test_knobs_map_to_their_ranges_and_clip():
    v = knob_values([[0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [-3, 2, 0.5, 0.5, 0.5]])
    assert v[0].tolist() == [r[0] for r in KNOB_RANGES] and v[1].tolist() == [r[1] for r in KNOB_RANGES]
    assert v[2, 0] == KNOB_RANGES[0][0] and v[2, 1] == KNOB_RANGES[1][1]
    assert v[2, 2] == pytest.approx(0.5)


def test_the_knob_policy_plays_within_the_rules():
    envs = ArrayVendVectorEnv(3, world=ROOT / "worlds" / "cn20", days=30, slots=48)
    policy = ArrayKnobs(envs.facts, [[0.5] * 5, [0.2, 0.9, 0.3, 0.8, 0.6], [1.0] * 5], 48)
    obs, _ = envs.reset(seed=[1, 2, 3])
    cut, other, visits_off = 0, 0, 0
    short = CODES.index("insufficient_stock")
    for _ in range(30):
        workday = bool(obs["workday"][0])
        obs, _, _, _, info = envs.step(policy.act(obs))
        slot = info["slot_refused"]
        cut += int((slot == short).sum())  # it asks for full shelves and lets the env cut them to the stock
        other += int((slot > 0).sum()) - int((slot == short).sum())
        other += sum(int(np.count_nonzero(info[k])) for k in ("visit_refused", "price_refused", "order_refused"))
        other += int(np.count_nonzero(info["discard_refused"]))
        visits_off += 0 if workday else int(info["visits"].sum())
    assert other == 0 and visits_off == 0 and cut > 0
    assert (obs["slot_product"] >= 0).sum(axis=2).max() <= 48
    assert (np.asarray(info["net_assets"]) != np.asarray(info["net_assets"])[0]).any()  # the knobs matter


@pytest.mark.slow
def test_the_training_example_improves_on_its_starting_knobs_on_held_out_seeds():
    spec = importlib.util.spec_from_file_location("array_es", ROOT / "examples" / "array_es.py")
    assert spec and spec.loader
    es = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(es)
    world = str(ROOT / "worlds" / "cn20")
    mean = es.train(world, generations=3, population=8, elite=3, seeds=[1, 2], days=60, rng=np.random.default_rng(0))
    held_out = es.evaluate(world, np.stack([np.full(5, 0.5), mean]), [11, 12, 13], days=60)
    start, trained = held_out.mean(axis=1)
    assert trained > start * 1.1, (start, trained)
