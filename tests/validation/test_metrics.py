import numpy as np
import pytest

from autovend.validation.metrics import median_within_spearman, tvd, volume_error, wape


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
