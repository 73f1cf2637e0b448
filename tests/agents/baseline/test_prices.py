"""Price trials: prices from multipliers, crossover arms and effects, candidates, and a trial run by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autovend.agents.baseline.prices import (
    arms_today,
    crossover_arm,
    crossover_effect,
    crossover_halves,
    next_candidate,
    price_fen,
    price_fen_matrix,
    trial_kept,
    update_trials,
)


def test_price_fen_rounds_and_keeps_the_band():
    # 3.50 x 1.2 = 4.20; 3.33 x 1.1 = 3.663 -> 3.66; 3.50 x 2.5 -> capped at 2 x 3.50 = 7.00;
    # 3.50 x 0.45 -> raised to 0.5 x 3.50 = 1.75
    assert price_fen(120, [350], (0.5, 2.0)).tolist() == [420]
    assert price_fen(110, [333], (0.5, 2.0)).tolist() == [366]
    assert price_fen(250, [350], (0.5, 2.0)).tolist() == [700]
    assert price_fen(45, [350], (0.5, 2.0)).tolist() == [175]


def test_price_fen_matrix_one_row_per_machine():
    assert price_fen_matrix(np.array([100, 120]), np.array([350, 300]), (0.5, 2.0)).tolist() == [
        [350, 300],
        [420, 360],
    ]


def test_price_fen_matrix_rows_follow_the_machines_when_multipliers_repeat():
    # machines 0 and 2 share 120 %, machine 1 takes 90 %: 350 x 0.9 = 315, 300 x 0.9 = 270
    got = price_fen_matrix(np.array([120, 90, 120]), np.array([350, 300]), (0.5, 2.0))
    assert got.tolist() == [[420, 360], [315, 270], [420, 360]] and got.dtype == np.int64


def test_crossover_effect_is_the_mean_log_ratio():
    # machine 1: 70 under the incumbent, 80 under the candidate (7 days each): log(80/70) = 0.133531
    # machine 2: 140 and 120: log(120/140) = -0.154151; mean -0.010310
    # machine 3 has no candidate day and is left out
    effect = crossover_effect([[70.0, 80.0], [140.0, 120.0], [50.0, 0.0]], [[7, 7], [7, 7], [7, 0]])
    assert effect == pytest.approx((math.log(80 / 70) + math.log(120 / 140)) / 2)
    assert effect == pytest.approx(-0.010310, abs=1e-6)
    assert crossover_effect([[0.0, 5.0]], [[7, 7]]) is None


def test_crossover_arm_swaps_halves_at_mid_trial():
    # a 14-day trial from day 10: days 10-16 group 0 on the incumbent, group 1 on the candidate; then swapped
    assert crossover_arm([0, 1, 0], 10, 10, 14).tolist() == [0, 1, 0]
    assert crossover_arm([0, 1, 0], 16, 10, 14).tolist() == [0, 1, 0]
    assert crossover_arm([0, 1, 0], 17, 10, 14).tolist() == [1, 0, 1]


def test_crossover_halves_alternate_within_each_group():
    assert crossover_halves(np.array([0, 1, 0, 0, 1])).tolist() == [0, 0, 1, 0, 1]


def test_trial_kept_needs_the_minimum_gain():
    # min_gain 2%: the log ratio must exceed log(1.02) = 0.0198
    assert trial_kept(0.03, 0.02)
    assert not trial_kept(0.01, 0.02)
    assert not trial_kept(None, 0.02)


def test_next_candidate_turns_at_the_bounds():
    assert next_candidate(100, +1, 20, 70, 200) == (120, 0)
    assert next_candidate(200, +1, 20, 70, 200) == (180, 1)  # past the upper bound: one turn, step down
    assert next_candidate(80, -1, 20, 70, 200) == (100, 1)
    assert next_candidate(100, +1, 20, 100, 100) == (None, 2)  # nowhere to go


def test_a_crossover_trial_by_hand(memory):
    """Two machines in one network group; 2-day trials from day 5 (see the conftest)."""
    s = memory.s
    s.first_visit[:] = 1
    update_trials(memory, 4)  # too early: no trial
    assert s.trial_start.tolist() == [0]
    update_trials(memory, 5)  # the trial starts: candidate one step (20%) up
    assert (s.cand[0], s.trial_start[0]) == (120, 5)
    assert arms_today(memory, 5).tolist() == [100, 120]  # machine 0 incumbent, machine 1 candidate
    s.gp_hist[5] = [100.0, 121.0]
    update_trials(memory, 6)
    assert arms_today(memory, 6).tolist() == [120, 100]  # the halves swap
    s.gp_hist[6] = [110.0, 100.0]
    # machine 0: 110 / 100 under the candidate, machine 1: 121 / 100: mean of log 1.1 and log 1.21 = 0.142965
    update_trials(memory, 7)
    day, group, inc, cand, effect, kept = s.trials[0]
    assert (day, group, inc, cand, kept) == (7, "network", 100, 120, True)
    assert effect == pytest.approx((math.log(1.1) + math.log(1.21)) / 2)
    assert effect == pytest.approx(0.142965, abs=1e-6)
    assert s.mult[0] == 120
    assert (s.cand[0], s.trial_start[0]) == (140, 7)  # the next trial goes on in the winning direction
    # 140 earns 10% less on both machines (effect log 0.9): the price stays at 120 and the next trial goes
    # the other way, to 100
    arms_today(memory, 7)
    s.gp_hist[7] = [100.0, 90.0]
    update_trials(memory, 8)
    arms_today(memory, 8)
    s.gp_hist[8] = [90.0, 100.0]
    update_trials(memory, 9)
    assert not s.trials[1][5]  # not kept
    assert s.trials[1][4] == pytest.approx(math.log(0.9))
    assert (s.mult[0], s.direction[0], s.fails[0]) == (120, -1, 1)
    assert (s.cand[0], s.trial_start[0]) == (100, 9)
