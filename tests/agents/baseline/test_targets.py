"""Newsvendor targets: the safety factor, spoilage odds, the loss function, cycle needs, shelf targets."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.estimate import Estimates
from autovend.agents.baseline.state import Memory
from autovend.agents.baseline.targets import (
    cycle_levels,
    fit_within,
    machine_targets,
    machine_targets_by_cycle,
    newsvendor_z,
    normal_loss,
    shelf_targets,
    unsold_probability,
)

POISSON = 1e12  # a dispersion r this large leaves var = mean


def test_newsvendor_z_from_the_critical_ratio():
    # cu = 3, co = 1: ratio 0.75, z = Phi^-1(0.75) = 0.6745
    # cu = 99, co = 1: ratio 0.99, z = 2.3263, clipped to z_max = 2
    # co = 0: ratio 1, z = z_max; cu <= 0: no safety stock
    z = newsvendor_z([3.0, 99.0, 2.0, -1.0, 0.0], [1.0, 1.0, 0.0, 1.0, 1.0], z_max=2.0)
    np.testing.assert_allclose(z, [0.674490, 2.0, 2.0, 0.0, 0.0], atol=1e-6)


def test_newsvendor_z_is_never_negative():
    # cu = 1, co = 3: ratio 0.25 would give z = -0.6745; the shelf never holds less than the mean
    assert newsvendor_z([1.0], [3.0], z_max=2.0).tolist() == [0.0]


def test_unsold_probability_and_normal_loss():
    # stock 10 against mean 9.5, sd 2: P(D < 10) = Phi((10 - 0.5 - 9.5) / 2) = Phi(0) = 0.5
    # stock 14.5: Phi((14.5 - 0.5 - 9.5) / 2) = Phi(2.25) = 0.98778
    np.testing.assert_allclose(unsold_probability([10.0, 14.5], 9.5, 4.0), [0.5, 0.987776], atol=1e-6)
    # E[(Z - 0)^+] = 1 / sqrt(2 pi) = 0.398942; at z = 1: pdf(1) - 1 * (1 - Phi(1)) = 0.241971 - 0.158655
    np.testing.assert_allclose(normal_loss([0.0, 1.0]), [0.398942, 0.083316], atol=1e-6)


def test_cycle_levels_order_up_to_mean_plus_z_sd():
    # mu = 2 a day over H = 4 days: mean 8; r = 8: var = 8 + 64 / 8 = 16, sd 4.
    # cu = margin 3; co = holding 0.25 x 4 days = 1 (cost 0: spoilage costs nothing): ratio 0.75, z = 0.6745;
    # need = 8 + 0.6745 x 4 = 10.698. Spoilage cap: 0.7 x (2 a day x 30 days of life) = 42
    cfg = BaselineConfig(shelf_holding_per_unit_day=0.25)
    need, limit = cycle_levels(np.array([2.0]), 8.0, np.array([30.0]), np.array([0.0]), np.array([3.0]), 4, cfg)
    assert need[0] == pytest.approx(8 + 0.674490 * 4, abs=1e-5)
    assert need[0] == pytest.approx(10.69796, abs=1e-5)
    assert limit.tolist() == [42.0]
    # without safety stock the need is the mean
    need, _ = cycle_levels(np.array([2.0]), 8.0, np.array([30.0]), np.array([0.0]), np.array([3.0]), 4, cfg, False)
    assert need.tolist() == [8.0]


def test_cycle_levels_spoilage_lowers_the_safety_stock():
    # mu = 1 a day, life 5 days: mean over the life 5, var 5 (r huge), sd 2.236; the marginal unit is the
    # 5th (stock = max(facing 5, mean 4)): P(unsold) = Phi((5 - 0.5 - 5) / 2.236) = Phi(-0.2236) = 0.41153;
    # co = 0.41153 x cost 2 = 0.82306, cu = 1: ratio 1 / 1.82306 = 0.54853, z = 0.12194;
    # need = 4 + 0.12194 x 2 = 4.2439 (H = 4: mean 4, sd 2), against 4 + 0.6745 x 2 with no spoilage
    cfg = BaselineConfig()
    need, _ = cycle_levels(np.array([1.0]), POISSON, np.array([5.0]), np.array([2.0]), np.array([1.0]), 4, cfg)
    p = unsold_probability(5.0, 5.0, 5.0)
    assert p == pytest.approx(0.41153, abs=1e-5)
    z = newsvendor_z(1.0, p * 2.0, cfg.z_max)
    assert need[0] == pytest.approx(4 + z * 2, abs=1e-9)
    assert need[0] == pytest.approx(4.2439, abs=1e-4)


def test_shelf_targets_share_spare_room_by_rate():
    # needs 2 and 2 -> facings 5 and 5 (10 of 20); spare 10 by rate 1:3 -> +2 and +7 (floors);
    # the last unit goes to the fastest product: [7, 13]
    S = shelf_targets([2.0, 2.0], [1.0, 3.0], [99, 99], room=20, facing=5)
    assert S.tolist() == [7, 13]
    # without fill the needs stay at the facings
    assert shelf_targets([2.0, 2.0], [1.0, 3.0], [99, 99], room=20, facing=5, fill=False).tolist() == [5, 5]


def test_shelf_targets_scale_the_part_above_the_facing():
    # needs 12, 4, 20 -> [12, 5, 20] = 37 > room 30. Above the facings: [7, 0, 15] = 22 into a budget of
    # 30 - 15 = 15: floor(7*15/22) = 4, 0, floor(15*15/22) = 10 -> [9, 5, 15] = 29; the last unit goes to
    # the fastest product (rate 3): [9, 5, 16]
    S = shelf_targets([12.0, 4.0, 20.0], [2.0, 1.0, 3.0], [99, 99, 99], room=30, facing=5)
    assert S.tolist() == [9, 5, 16]


def test_shelf_targets_when_even_the_facings_do_not_fit():
    # 3 products x facing 5 > room 12: the two fastest keep 5 each, the third gets the 2 units left
    S = shelf_targets([1.0, 1.0, 1.0], [0.5, 2.0, 1.0], [99, 99, 99], room=12, facing=5)
    assert S.tolist() == [2, 5, 5]


def test_shelf_targets_respect_the_spoilage_cap():
    # the first product may hold at most 6 units; the spare room goes to the second
    S = shelf_targets([1.0, 1.0], [1.0, 1.0], [6, 99], room=30, facing=5)
    assert S.tolist() == [6, 24]


def test_shelf_targets_of_nothing_or_no_room():
    assert shelf_targets([], [], [], room=10, facing=5).tolist() == []
    assert shelf_targets([3.0], [1.0], [99], room=0, facing=5).tolist() == [0]


def test_fit_within_largest_remainders():
    # [5, 3, 2] = 10 into 7: exact 3.5, 2.1, 1.4 -> floors [3, 2, 1] = 6; the largest remainder (.5) gets the 7th
    assert fit_within([5, 3, 2], 7).tolist() == [4, 2, 1]
    assert fit_within([5, 3, 2], 10).tolist() == [5, 3, 2]  # fits as it is
    assert fit_within([5, 3, 2], 0).tolist() == [0, 0, 0]


def test_machine_targets_fill_the_machine_without_the_room_of_dropped_products(memory):
    # machine 0 carries B, C, D (the opening assortment); 20 units of A, no longer carried, are still there,
    # so the carried products share 100 - 20 = 80 units of capacity
    s = memory.s
    assert s.active[0].tolist() == [False, True, True, True]
    s.shelf[0, 0] = 20
    M, K = s.shelf.shape
    est = Estimates(
        mu=np.full((M, K), 2.0),
        prior=np.full((M, K), 2.0),
        r=np.full(M, 3.0),
        machine_rate=np.full(M, 6.0),
        gp_per_unit=np.full(M, 1.0),
        margin=np.full((M, K), 1.5),
        cycle=s.cycle,
    )
    S = machine_targets(memory, est, 0, 7)
    assert S.sum() == 80
    assert machine_targets(memory, est, 0, 7, room=30).sum() == 30


def test_machine_targets_without_spare_room_stop_at_the_order_up_to_levels(memory):
    """fill_spare_room off (the paper's rule): each of B, C, D gets mu H + z sd_H, not a share of the room.

    mu = 2 a day over H = 2 days: mean 4, sd sqrt(4 + 16 / 3) = 3.06. z from margin 1.5 against cost x the
    chance that the 5th unit is unsold within the shelf life (r = 3): B (cost 3, 90 days) P = 0.047, z = 1.37;
    C (cost 2, 30 days) P = 0.059, z = 1.45; D (cost 1, 30 days) z = 1.77. S = ceil(4 + z * 3.06) = 9, 9, 10:
    28 units, where the default shares out all 100.
    """
    s = memory.s
    M, K = s.shelf.shape
    est = Estimates(
        mu=np.full((M, K), 2.0),
        prior=np.full((M, K), 2.0),
        r=np.full(M, 3.0),
        machine_rate=np.full(M, 6.0),
        gp_per_unit=np.full(M, 1.0),
        margin=np.full((M, K), 1.5),
        cycle=s.cycle,
    )
    assert machine_targets(memory, est, 0, 2).sum() == 100
    paper = Memory(memory.cfg.model_copy(update={"fill_spare_room": False}), memory.st, s)
    assert machine_targets(paper, est, 0, 2).tolist() == [9, 9, 10]


def test_machine_targets_by_cycle_are_machine_targets_of_each_cycle(memory):
    """Levels of H = 1 .. 7 in one pass equal those of each H alone (mixed rates, margins and a dropped product).

    Without spare-room sharing the 2-day levels are the paper's 9, 9, 10 (see the test above); with it, each
    H fills the 80 units left by 20 units of the dropped product A.
    """
    s = memory.s
    M, K = s.shelf.shape
    s.shelf[0, 0] = 20
    est = Estimates(
        mu=np.tile([0.5, 2.0, 0.7, 3.1], (M, 1)),
        prior=np.full((M, K), 2.0),
        r=np.full(M, 3.0),
        machine_rate=np.full(M, 6.0),
        gp_per_unit=np.full(M, 1.0),
        margin=np.tile([1.5, 1.5, -0.2, 0.8], (M, 1)),
        cycle=s.cycle,
    )
    got = machine_targets_by_cycle(memory, est, 0, 7)
    assert len(got) == 7 and all(g.sum() == 80 for g in got)
    assert all(np.array_equal(g, machine_targets(memory, est, 0, H)) for H, g in enumerate(got, start=1))
    paper = Memory(memory.cfg.model_copy(update={"fill_spare_room": False}), memory.st, s)
    est.mu[:] = 2.0
    est.margin[:] = 1.5
    by_cycle = machine_targets_by_cycle(paper, est, 0, 7)
    assert by_cycle[1].tolist() == [9, 9, 10]
    assert all(np.array_equal(g, machine_targets(paper, est, 0, H)) for H, g in enumerate(by_cycle, start=1))
