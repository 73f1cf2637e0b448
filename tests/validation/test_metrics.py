import math
import warnings

import numpy as np
import pytest

from autovend.validation.metrics import beats, median_within_spearman, spread, tvd, volume_error, wape


def test_wape_by_hand():
    # |10-8| + |0-1| + |5-5| = 3 over 15
    assert wape(np.array([10, 0, 5]), np.array([8, 1, 5])) == pytest.approx(3 / 15)


def test_tvd_by_hand():
    # shares (0.5, 0.5, 0) vs (0.25, 0.25, 0.5): half of 0.25 + 0.25 + 0.5
    assert tvd(np.array([2, 2, 0]), np.array([1, 1, 2])) == pytest.approx(0.5)
    assert tvd(np.array([1, 3]), np.array([2, 6])) == pytest.approx(0.0)


def test_volume_error_by_hand():
    assert volume_error(200.0, 190.0) == pytest.approx(-0.05)


def test_median_within_machine_spearman_skips_small_groups():
    group = np.array([0] * 5 + [1] * 5 + [2] * 2)
    actual = np.array([1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 1, 2])
    predicted = np.array([1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2])
    med, rhos = median_within_spearman(group, actual, predicted)
    np.testing.assert_allclose(rhos, [1.0, -1.0])  # group 2 has fewer than 5 items
    assert med == pytest.approx(0.0)


def test_spread_of_per_seed_values_skips_seeds_without_a_value():
    sp = spread([1.0, 2.0, math.nan, 3.0, 4.0])
    assert sp.mean == pytest.approx(2.5)
    assert sp.sd == pytest.approx(math.sqrt(1.25))  # population sd of 1, 2, 3, 4
    assert (sp.p05, sp.p95) == (pytest.approx(1.15), pytest.approx(3.85))  # linear interpolation


def test_nothing_to_summarise_gives_none_and_no_numpy_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert spread([math.nan, math.nan]) is None
        assert spread([]) is None
        # every machine has fewer than 5 products: no correlation to take the median of
        med, rhos = median_within_spearman(np.array([0, 0, 1]), np.array([1.0, 2, 3]), np.array([1.0, 2, 3]))
        assert math.isnan(med) and len(rhos) == 0
        assert math.isnan(wape(np.zeros(3), np.ones(3))) and math.isnan(tvd(np.zeros(2), np.ones(2)))
    assert caught == []


def test_beats_is_strict_and_none_without_both_numbers():
    assert beats(0.47, 0.56) is True
    assert beats(0.61, 0.56) is False
    assert beats(0.56, 0.56) is False  # a tie does not beat the reference
    assert beats(math.nan, 0.56) is None and beats(0.47, math.nan) is None


def test_within_machine_correlation_is_of_ranks_not_of_values():
    """Monotone but not linear: the ranks agree exactly (Spearman 1), the values do not (Pearson about 0.87)."""
    from autovend.validation.metrics import within_spearman

    group = np.zeros(5, dtype=np.int64)
    actual = np.array([1.0, 2.0, 3.0, 4.0, 40.0])
    predicted = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert within_spearman(group, 1, actual, predicted)[0] == pytest.approx(1.0)
    # ties take their mean rank: ranks (1.5, 1.5, 3, 4, 5) against (1, 2, 3, 4, 5)
    tied = within_spearman(group, 1, np.array([2.0, 2.0, 3.0, 4.0, 9.0]), predicted)[0]
    assert tied == pytest.approx(np.corrcoef([1.5, 1.5, 3, 4, 5], [1, 2, 3, 4, 5])[0, 1])
