"""Which runs may be compared: worlds, lengths, a run given twice; notes on versions, CPU features and resumes."""

from __future__ import annotations

import dataclasses

import pytest

from autovend.evaluation.comparability import check_comparable, short_hash
from autovend.provenance import Provenance

from .conftest import hand_world, make_run, summary_row

HASH_A, HASH_B = "a" * 64, "b" * 64
STACK = Provenance("3.11.7", "x86_64", {"numpy": "2.4.6", "scipy": "1.17.1"}, ("AVX2", "SSE2"), {})


@pytest.fixture(scope="module")
def world_a(world):
    return dataclasses.replace(world, world_hash=HASH_A)


def run(world, agent="x", seed=1, days=5, **meta):
    """A run of `days` empty days on `world` (labelled agent-s<seed>), with the provenance STACK by default."""
    info = {"agent": agent, "seed": seed, "provenance": STACK.to_json(), **meta}
    return make_run(world, meta=info, daily_summary=[summary_row(d) for d in range(1, days + 1)])


def test_runs_of_one_world_and_length_compare(world_a):
    check = check_comparable([run(world_a, seed=1), run(world_a, seed=2), run(world_a, "y", seed=1)])
    assert check.comparable and check.refusals == () and check.notes == ()


def test_different_lengths_are_refused(world_a):
    check = check_comparable([run(world_a, "x", days=5), run(world_a, "y", days=8), run(world_a, "z", days=5)])
    assert check.refusals == (
        "they differ in horizon or days played: 5 of 12 days in x-s1, z-s1; 8 of 12 days in y-s1",
    )
    assert "5 of 12 days in x-s1, z-s1" in check.explain()


def test_different_horizons_are_refused(world):
    short = hand_world(horizon=10)  # same name, no hash: told apart by their horizons
    check = check_comparable([run(world, "x"), run(short, "y")])
    assert check.refusals == ("they differ in horizon or days played: 5 of 12 days in x-s1; 5 of 10 days in y-s1",)


def test_different_worlds_are_refused(world, world_a):
    world_b = dataclasses.replace(world, world_hash=HASH_B)
    check = check_comparable([run(world_a, "x"), run(world_b, "y"), run(world_a, "z")])
    assert check.refusals == (
        "they were made on different worlds: world hand (aaaaaaaaaaaa) in x-s1, z-s1; world hand (bbbbbbbbbbbb) in y-s1",
    )


def test_the_same_agent_and_seed_twice_is_refused(world_a):
    twice = check_comparable([run(world_a, "x", 1), run(world_a, "x", 2), run(world_a, "x", 1)])
    assert twice.refusals == (
        "the same agent and seed twice: x (same configuration), seed 1, on world hand (aaaaaaaaaaaa), in x-s1, x-s1",
    )
    # another configuration of the agent is another experiment, not the same run again
    tuned = run(world_a, "x", 1, agent_config={"n_skus": 12})
    assert check_comparable([run(world_a, "x", 1), tuned]).comparable


def test_every_reason_is_given(world, world_a):
    check = check_comparable([run(world_a, "x", 1, days=5), run(world, "x", 1, days=8)])
    assert [r.split(":")[0] for r in check.refusals] == [
        "they were made on different worlds",
        "they differ in horizon or days played",
    ]  # on different worlds the two are not the same run twice


def test_notes_on_stacks_memory_worlds_and_resumes(world, world_a):
    other = dataclasses.replace(STACK, packages={**STACK.packages, "numpy": "2.5.0"}, cpu_features=("SSE2",))
    resumed = {"resumed_from_day": 3, "warning": "resumed from day 3 with another stack: scipy 1.17.1 -> 1.18.0"}
    runs = [
        run(world_a, "x"),
        run(world_a, "y", provenance=other.to_json()),
        run(world_a, "z", provenance=None),
        run(world_a, "w", provenance_changes=[resumed]),
    ]
    check = check_comparable(runs)
    assert check.comparable
    assert check.notes == (
        "no record of the versions and CPU features they ran with: z-s1",
        "y-s1 ran on another stack than x-s1: numpy 2.4.6 -> 2.5.0; CPU features: without AVX2",
        "w-s1 was resumed from day 3 with another stack: scipy 1.17.1 -> 1.18.0",
    )
    assert check_comparable([run(world, "x"), run(world, "y")]).notes == (
        "worlds built in memory have no hash, so only their names were compared: x-s1, y-s1",
    )


def test_short_hash():
    assert short_hash(HASH_A) == "aaaaaaaaaaaa" and short_hash("") == "in memory"
