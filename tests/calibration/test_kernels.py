"""The split's compiled passes give numpy's bits: expected demand summed by group, and the log-likelihood."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from autovend.calibration import kernels


def _cells(seed: int, n_md: int = 500, per_md: int = 40, n_sites: int = 3, n_products: int = 120):
    """Cells of machine-days in panel order, a site x product table with zeros, demand with zeros."""
    rng = np.random.default_rng(seed)
    md = np.repeat(np.arange(n_md), rng.integers(0, per_md, n_md))  # some machine-days have no cells
    k = rng.integers(0, n_products, len(md))
    sk = rng.integers(0, n_sites, n_md)[md] * n_products + k
    table = rng.gamma(0.7, 1.0, n_sites * n_products)
    table[rng.random(len(table)) < 0.05] = 0.0  # products out of the split (omega 0): cells with v = 0
    a = rng.uniform(0.3, 2.0, len(md))
    demand = np.where(rng.random(len(md)) < 0.4, 0.0, rng.gamma(1.5, 2.0, len(md)))
    md_total = np.bincount(md, weights=demand, minlength=n_md)
    return md, sk, k, a, table, demand, md_total, n_md, n_products


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_sums_match_the_numpy_bincounts_to_the_bit(seed):
    md, sk, k, a, table, demand, md_total, n_md, n_products = _cells(seed)
    v = np.empty(len(md))
    got = kernels.expected_sums(md, sk, a, table, md_total, k, n_products, v)
    want = kernels.expected_sums_numpy(md, sk, a, table, md_total, k, n_products)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(v, table[sk] * a)  # the scratch array holds the attractions
    # a machine-day whose attraction is 0 divides by 1: its demand is lost, the rest kept
    lost = np.bincount(md, weights=table[sk] * a, minlength=n_md) == 0
    assert got.sum() == pytest.approx(md_total[~lost].sum(), rel=1e-12)
    pig = sk // n_products  # summed by another code: the site types
    np.testing.assert_array_equal(
        kernels.expected_sums(md, sk, a, table, md_total, pig, 3, v),
        kernels.expected_sums_numpy(md, sk, a, table, md_total, pig, 3),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loglik_matches_numpy_to_the_bit(seed):
    md, sk, _, a, table, demand, _, n_md, _ = _cells(seed)
    got = kernels.loglik(md, sk, a, table, demand, n_md, np.empty(len(md)))
    assert got == kernels.loglik_numpy(md, sk, a, table, demand, n_md)
    assert got < 0  # log shares of cells with demand and attraction
    empty = np.array([], dtype=np.int64)
    assert kernels.loglik(empty, empty, np.array([]), table, np.array([]), 4, np.empty(0)) == 0.0


def test_a_code_out_of_range_raises_instead_of_reading_past_the_table():
    md, sk, k, a, table, demand, md_total, n_md, n_products = _cells(3)
    bad = sk.copy()
    bad[7] = len(table)
    with pytest.raises(IndexError, match="out of range"):
        kernels.expected_sums(md, bad, a, table, md_total, k, n_products, np.empty(len(md)))
    with pytest.raises(IndexError, match="out of range"):
        kernels.loglik(md, bad, a, table, demand, n_md, np.empty(len(md)))
    with pytest.raises(IndexError, match="out of range"):
        kernels.expected_sums(md, sk, a, table, md_total, k, n_products - 1 if k.max() == n_products - 1 else 1,
                              np.empty(len(md)))  # fmt: skip


ASM = """
import os, sys
if sys.argv[1] == "numba-first":
    import numba  # imported before AutoVend, without NUMBA_CPU_NAME
import numba
import numpy as np
from autovend.calibration import kernels
i = np.array([0, 1, 1])
kernels.expected_sums(i, i, np.ones(3), np.ones(2), np.ones(2), i, 2, np.empty(3))
asm = "\\n".join(kernels._expected_sums.inspect_asm().values())
vex = any(reg in asm for reg in ("%ymm", "%zmm", "vmov", "vadd", "vmul", "vdiv"))
print(numba.config.CPU_NAME, repr(numba.config.CPU_FEATURES), "vex" if vex else "sse2")
"""


@pytest.mark.parametrize("order", ["autovend-first", "numba-first"])
def test_numba_compiles_for_the_generic_cpu_unless_told_otherwise(order):
    # the same machine code on every x86-64 CPU: no AVX instruction (VEX-encoded) that a virtual CPU may refuse
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    done = subprocess.run([sys.executable, "-c", ASM, order], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["generic", "''", "sse2"]
