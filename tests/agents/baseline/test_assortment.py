"""Assortment: the opening assortment over subcategories, and when replacing a product pays."""

from __future__ import annotations

from autovend.agents.baseline.assortment import add, drop, replacement_pays, spread_quota, starter_assortment


def test_spread_quota_by_square_root_of_size():
    # sizes 64, 16, 4 -> weights 8, 4, 2 (sum 14); 10 slots: 5.714, 2.857, 1.429 -> floors 5, 2, 1 (8);
    # largest remainders .857 then .714 get the 2 slots left: [6, 3, 1]
    assert spread_quota([64, 16, 4], 10).tolist() == [6, 3, 1]
    # never more than a group holds
    assert spread_quota([1, 100], 10).tolist() == [1, 9]


def test_starter_assortment_by_hand(tiny):
    # subcategory sizes 3 (A, B, C) and 1 (D); 3 slots: sqrt weights 1.732 and 1 -> 1.902 and 1.098 -> [2, 1].
    # Subcategory 0 by reference margin: B 2.00, C 2.00 (tie: catalog order), A 1.50. Machine 0 takes ranks
    # 1-2 (B, C), machine 1 ranks 3 and 1 again (A, B); both take D.
    chosen = starter_assortment(tiny, 3)
    assert chosen.tolist() == [[False, True, True, True], [True, True, False, True]]


def test_replacement_pays_when_the_gain_beats_what_is_thrown_away():
    # a newcomer earning 5 a day instead of 2, for 10 days: 30 against 25 of stranded stock
    assert replacement_pays(5.0, 2.0, 10, 25.0)
    assert not replacement_pays(5.0, 2.0, 10, 30.0)  # not more than
    assert not replacement_pays(5.0, 2.0, 0, 0.0)  # no days left


def test_drop_phases_out_what_is_on_the_shelf(memory):
    s = memory.s
    s.shelf[0, 1] = 4
    drop(s, 0, 1)  # B, 4 units left: sells down
    drop(s, 0, 2)  # C, none left
    assert s.active[0].tolist() == [False, False, False, True]
    assert s.dropped[0].tolist() == [False, True, True, False]
    assert s.phase_out[0].tolist() == [False, True, False, False]
    add(s, 0, 0, 9)
    assert s.active[0, 0] and s.active_since[0, 0] == 9
