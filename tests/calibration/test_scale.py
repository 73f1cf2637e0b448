"""The sales-only machines' scales from the sales rule: `scale._c_from_rule` against one machine at a time."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd

from autovend.calibration.scale import _c_from_rule


def _one_at_a_time(panel, W, machines, u, R_hat, demand_ratio) -> pd.Series:
    """The definition, machine by machine: mean f over the days from the machine's first, missing days at 0."""
    mean_units = panel.machine_days.groupby("m")["units"].mean()
    first = panel.machine_days.groupby("m")["d"].min()
    out = {}
    have = set(W.index.get_level_values(0))
    for m in machines:
        if m not in have or m not in mean_units.index:
            continue
        W_m = W.loc[m].reindex(range(int(first[m]), panel.n_days)).fillna(0.0).to_numpy()
        f_m = W_m / (u * R_hat[m] + W_m)
        out[int(m)] = float(mean_units[m]) * demand_ratio / max(float(f_m.mean()), 1e-12)
    return pd.Series(out, dtype=float)


def test_scales_from_the_rule_are_the_machine_by_machine_values_to_the_bit():
    rng = np.random.default_rng(5)
    n_m, n_days = 60, 47
    starts = rng.choice([0, 0, 3, 10, 46], n_m)  # machines that start late, one on the last day
    rows = [
        (m, d, int(rng.integers(0, 30))) for m in range(n_m) for d in range(starts[m], n_days) if rng.random() < 0.8
    ]
    machine_days = pd.DataFrame(rows, columns=["m", "d", "units"])
    panel = types.SimpleNamespace(machine_days=machine_days, n_days=n_days)
    keys = [(m, d) for m in range(n_m - 5) for d in range(n_days + 3) if rng.random() < 0.7]  # m 55-59: none
    W = pd.Series(rng.gamma(0.7, 2.0, len(keys)), index=pd.MultiIndex.from_tuples(keys, names=["m", "d"]))
    W.iloc[::17] = np.nan  # missing attractions count as 0, as do days without a row and days before the start
    W.iloc[::23] = 0.0
    R_hat = rng.uniform(0.5, 4.0, n_m)
    machines = np.array([7, 3, 58, 3, *range(20, 60)])  # any order, a repeat, machines without attractions
    got = _c_from_rule(panel, W, machines, 0.37, R_hat, 1.21)
    want = _one_at_a_time(panel, W, machines, 0.37, R_hat, 1.21)
    assert list(got.index) == list(want.index) and len(got) >= 30  # in the order given, each once
    assert 58 not in got.index and got.index[0] == 7
    np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
    assert _c_from_rule(panel, W.iloc[:0], machines, 0.37, R_hat, 1.21).empty
