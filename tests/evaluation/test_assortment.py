"""Assortment score and reassignment gap on the hand world, worked out by hand.

Standard display of one product on a capacity-10 machine: 5 units (phi), so F = 5/10 and
F^0.5 = 0.707107; reference prices; neutral environment. Margins: A 2.0, B 3.0, C 0.5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from autovend.evaluation.assortment import (
    display_units,
    mix_values,
    reassignment_gap,
    reassignment_matrix,
    reference_mix,
)
from autovend.evaluation.economics import ShelfEconomics
from autovend.evaluation.metrics import assortment, site_coordination
from autovend.evaluation.settings import EvalSettings

from .conftest import make_run, summary_row
from .test_economics import emin

F1 = math.sqrt(0.5)  # fill term of one product at 5 of 10 units


def value(w: float, U: float, margin: float, v: int = 5) -> float:
    """Expected gross profit of one product alone on a display: rate U w / (U + w)."""
    return emin(U * w / (U + w), v) * margin


# one product displayed alone, by machine (U) and product (b, margin)
V_M1_A = value(2.0 * F1, 1.0, 2.0)  # rate 1.414214 / 2.414214 = 0.585786 -> 1.171...
V_M1_B = value(1.0 * F1, 1.0, 3.0)  # rate 0.707107 / 1.707107 = 0.414214 -> 1.242...
V_M1_C = value(0.5 * F1, 1.0, 0.5)  # rate 0.353553 / 1.353553 = 0.261204 -> 0.130...
V_M2_A = value(0.5 * F1, 2.0, 2.0)  # rate 0.707107 / 2.353553 = 0.300440 -> 0.600...
V_M2_B = value(1.0 * F1, 2.0, 3.0)  # rate 1.414214 / 2.707107 = 0.522408 -> 1.567...
V_M2_C = value(2.0 * F1, 2.0, 0.5)  # rate 2.828427 / 3.414214 = 0.828427 -> 0.414...


@pytest.mark.parametrize(
    ("capacity", "n", "units"),
    [(10, 1, 5), (10, 2, 5), (10, 3, 3), (200, 45, 4), (10, 20, 1), (10, 0, 0)],
)
def test_display_units(capacity, n, units):
    assert display_units(capacity, n, 5.0) == units


def test_reference_mix_by_hand(world):
    econ = ShelfEconomics.from_world(world)
    # M1 (U = 1), n = 1, one product at 5 units: w = b x 0.707107 = (1.414214, 0.707107, 0.353553), margins
    # (2, 3, 0.5). Start: the largest w m is A's (2.83 > 2.12), G = 0.585786 x 2 = 1.1716, rho = G / U.
    # Round 1: w (m - rho) = A 1.414 x 0.828 = 1.171, B 0.707 x 1.828 = 1.293, C < 0 -> B alone:
    # rate 0.707107 / 1.707107 = 0.414214, G = 1.2426 > 1.1716. Round 2: rho = 1.2426 keeps B.
    assert V_M1_B > V_M1_A > V_M1_C
    assert reference_mix(econ, 0, 1, (1, 1)).tolist() == [1]
    # M2 (U = 2), n = 1: w = (0.353553, 0.707107, 1.414214); start with B (w m 2.12), G = 1.5672, rho = 0.7836:
    # A 0.354 x 1.216 = 0.43, B 0.707 x 2.216 = 1.57, C 1.414 x (0.5 - 0.78) < 0 -> B again; C, the most
    # attractive product, is the worst choice
    assert reference_mix(econ, 1, 1, (1, 1)).tolist() == [1]
    # M1, n = 2: F = 1, w = (2, 1, 0.5), W = 3, rates w / 4: G(A, B) = 0.5 x 2 + 0.25 x 3 = 1.75 (less a tiny
    # sell-out tail), rho = 1.75: A 2 x 0.25 = 0.5, B 1 x 1.25 = 1.25, C 0.5 x (0.5 - 1.75) < 0 -> A and B
    assert reference_mix(econ, 0, 2, (1, 1)).tolist() == [0, 1]
    # the reference beats every other pair: (B, C) earns 0.4 x 3 + 0.2 x 0.5 = 1.3, (A, C) 2/3.5 x 2 + ...
    pairs = [np.array(p) for p in ([0, 1], [0, 2], [1, 2])]
    values = mix_values(econ, [0, 0, 0], pairs, (1, 1))
    assert values.argmax() == 0 and values[0] == pytest.approx(emin(0.5, 5) * 2 + emin(0.25, 5) * 3, rel=1e-12)
    assert reference_mix(econ, 0, 0, (1, 1)).tolist() == []


def test_mix_values_by_hand(world):
    econ = ShelfEconomics.from_world(world)
    got = mix_values(econ, [0, 0, 1, 1], [np.array([0]), np.array([2]), np.array([1]), np.array([2])], (1, 5))
    assert got == pytest.approx([V_M1_A, V_M1_C, V_M2_B, V_M2_C], rel=1e-12)
    # two products at M1: 5 units each, F = 1, w = (2, 1), rates 2/4 and 1/4
    two = mix_values(econ, [0], [np.array([0, 1])], (1, 5))[0]
    assert two == pytest.approx(emin(0.5, 5) * 2 + emin(0.25, 5) * 3, rel=1e-12)


def _swapped_run(world):
    """Day 1: M1 gets C (which suits M2), M2 gets A (which suits M1); nothing sells; 2 days."""
    return make_run(
        world,
        daily_summary=[summary_row(1), summary_row(2)],
        shelf_events=[(1, "M1", "C", "restock", 5, 0), (1, "M2", "A", "restock", 5, 0)],
    )


def test_assortment_score_by_hand(world):
    run = _swapped_run(world)
    out = assortment(run, EvalSettings(checkpoint_every=2))
    # M1: C against its reference B; M2: A against its reference B
    m1 = V_M1_C / V_M1_B  # 0.130602 / 1.242641 = 0.1051
    m2 = V_M2_A / V_M2_B  # 0.600880 / 1.567217 = 0.3834
    assert out["checkpoints"] == [{"day": 2, "score": pytest.approx((m1 + m2) / 2, abs=1e-6), "machines": 2}]
    assert out["score"] == pytest.approx((m1 + m2) / 2, rel=1e-12)
    assert 0.2442 < out["score"] < 0.2443


def test_reassignment_gap_by_hand(world):
    econ = ShelfEconomics.from_world(world)
    V = reassignment_matrix(econ, [np.array([2]), np.array([0])], (1, 2))
    assert pytest.approx(np.array([[V_M1_C, V_M1_A], [V_M2_C, V_M2_A]]), rel=1e-12) == V
    gap, actual, best = reassignment_gap(V)
    # actual: C at M1 + A at M2 = 0.1306 + 0.6009; best: swap, A at M1 + C at M2 = 1.1716 + 0.4142
    assert actual == pytest.approx(V_M1_C + V_M2_A, rel=1e-12)
    assert best == pytest.approx(V_M1_A + V_M2_C, rel=1e-12)
    assert gap == pytest.approx(1 - (V_M1_C + V_M2_A) / (V_M1_A + V_M2_C), rel=1e-12)
    assert 0.538 < gap < 0.539
    out = site_coordination(_swapped_run(world), EvalSettings(checkpoint_every=2))
    assert out["reassignment_gap"] == pytest.approx(gap, rel=1e-12)


def test_well_placed_mixes_have_no_gap_and_empty_shelves_are_skipped(world):
    run = make_run(
        world,
        daily_summary=[summary_row(d) for d in (1, 2, 3, 4)],
        shelf_events=[(1, "M1", "A", "restock", 5, 0), (1, "M2", "C", "restock", 5, 0)],
    )
    out = site_coordination(run, EvalSettings(checkpoint_every=2))
    assert [c["gap"] for c in out["checkpoints"]] == [0.0, 0.0] and out["reassignment_gap"] == 0.0
    empty = make_run(world, daily_summary=[summary_row(1), summary_row(2)])
    assert assortment(empty, EvalSettings(checkpoint_every=2))["score"] is None
    assert site_coordination(empty, EvalSettings(checkpoint_every=2))["reassignment_gap"] is None
    # no checkpoint within a 1-day run
    assert assortment(make_run(world, daily_summary=[summary_row(1)]), EvalSettings())["checkpoints"] == []


@pytest.mark.parametrize("n", [3, 8, 20])
def test_no_single_swap_improves_the_reference(n):
    """On a 40-product toy world with real weather, swapping any product of the reference for any other loses."""
    from autovend.world.model import Economics
    from autovend.world.toy import toy_world

    toy = toy_world(2, 40, seed=5, economics=Economics(horizon_days=30))
    econ = ShelfEconomics.from_world(toy)
    for m in (0, 1):
        ref = reference_mix(econ, m, n, (1, 30))
        best = mix_values(econ, [m], [ref], (1, 30))[0]
        outside = np.setdiff1d(np.arange(40), ref)
        swaps = [np.where(ref == out_, in_, ref) for out_ in ref for in_ in outside]
        values = mix_values(econ, [m] * len(swaps), swaps, (1, 30))
        assert values.max() <= best * (1 + 1e-9)
