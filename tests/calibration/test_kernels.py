"""The split's compiled passes give numpy's bits: expected demand summed by group, and the log-likelihood."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from autovend.calibration import kernels
from tests.calibration.split_cells import random_cells, random_problem


def _split_cells(md, sk, k, a, demand, n_md, n_products):
    """The cells as `mm.SplitCells` (site x product codes: the site types are the pi groups), numpy's passes."""
    from autovend.calibration import mm

    return mm.SplitCells(md, sk, k, sk // n_products, a, demand, n_md, n_products, 3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expected_sums_match_the_numpy_bincounts_to_the_bit(seed):
    md, sk, k, a, table, demand, md_total, n_md, n_products = random_cells(seed)
    numpy_cells = _split_cells(md, sk, k, a, demand, n_md, n_products)
    v = np.empty(len(md))
    got = kernels.expected_sums(md, sk, a, table, md_total, k, n_products, v)
    np.testing.assert_array_equal(got, numpy_cells.expected_by_product(table))
    np.testing.assert_array_equal(v, table[sk] * a)  # the scratch array holds the attractions
    # a machine-day whose attraction is 0 divides by 1: its demand is lost, the rest kept
    lost = np.bincount(md, weights=table[sk] * a, minlength=n_md) == 0
    assert got.sum() == pytest.approx(md_total[~lost].sum(), rel=1e-12)
    pig = sk // n_products  # summed by another code: the site types
    np.testing.assert_array_equal(
        kernels.expected_sums(md, sk, a, table, md_total, pig, 3, v), numpy_cells.expected_by_pi(table)
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_loglik_matches_numpy_to_the_bit(seed):
    md, sk, k, a, table, demand, _, n_md, n_products = random_cells(seed)
    n = len(md)
    d, r = np.full(n + 5, np.nan), np.full(n + 5, np.nan)  # scratch: what they held before does not matter
    got = kernels.loglik(md, sk, a, table, demand, n_md, d, r)
    assert got == _split_cells(md, sk, k, a, demand, n_md, n_products).loglik(table)
    assert got < 0  # log shares of cells with demand and attraction
    # the cells kept, in cell order: the ones with demand and attraction
    kept = (demand > 0) & (table[sk] * a > 0)
    np.testing.assert_array_equal(d[: kept.sum()], demand[kept])
    empty = np.array([], dtype=np.int64)
    assert kernels.loglik(empty, empty, np.array([]), table, np.array([]), 4, np.empty(0), np.empty(0)) == 0.0
    with pytest.raises(ValueError, match="scratch"):
        kernels.loglik(md, sk, a, table, demand, n_md, np.empty(n - 1), np.empty(n))


def test_a_code_out_of_range_raises_instead_of_reading_past_the_table():
    md, sk, k, a, table, demand, md_total, n_md, n_products = random_cells(3)
    bad = sk.copy()
    bad[7] = len(table)
    with pytest.raises(IndexError, match="out of range"):
        kernels.expected_sums(md, bad, a, table, md_total, k, n_products, np.empty(len(md)))
    with pytest.raises(IndexError, match="out of range"):
        kernels.loglik(md, bad, a, table, demand, n_md, np.empty(len(md)), np.empty(len(md)))
    with pytest.raises(IndexError, match="out of range"):
        kernels.expected_sums(
            md, sk, a, table, md_total, k, n_products - 1 if k.max() == n_products - 1 else 1, np.empty(len(md))
        )


ASM = """
import os, sys
if sys.argv[1] == "numba-first":
    import numba  # imported before AutoVend, without NUMBA_CPU_NAME
import numba
import numpy as np
from autovend.calibration import kernels
from tests.calibration.split_cells import random_cells, random_problem
i = np.array([0, 1, 1])
kernels.expected_sums(i, i, np.ones(3), np.ones(2), np.ones(2), i, 2, np.empty(3))
asm = "\\n".join(kernels.expected_sums.inspect_asm().values())
vex = any(reg in asm for reg in ("%ymm", "%zmm", "vmov", "vadd", "vmul", "vdiv"))
print(numba.config.CPU_NAME, repr(numba.config.CPU_FEATURES), "vex" if vex else "sse2")
"""


@pytest.mark.parametrize("order", ["autovend-first", "numba-first"])
def test_numba_compiles_for_the_generic_cpu_unless_told_otherwise(order):
    # the same machine code on every x86-64 CPU: no AVX instruction (VEX-encoded) that a virtual CPU may refuse
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    done = subprocess.run([sys.executable, "-c", ASM, order], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["generic", "''", "sse2"]


def test_split_cells_compiled_or_not_give_the_same_bits():
    cells, layout = random_problem(4)
    rng = np.random.default_rng(9)
    from autovend.calibration import mm

    table = layout.table(mm.Params(rng.gamma(1.0, 1.0, 120), rng.gamma(2.0, 0.5, (3, 3)), rng.gamma(2.0, 0.5, 6)))
    for compiled in (False, True):  # the numpy path first: it must not need numba
        np.testing.assert_array_equal(cells.expected_by_product(table, compiled), cells.expected_by_product(table))
        np.testing.assert_array_equal(cells.expected_by_pi(table, compiled), cells.expected_by_pi(table))
        assert cells.loglik(table, compiled) == cells.loglik(table)


def test_the_split_runs_compiled_from_its_threshold_and_solves_to_the_same_bits(monkeypatch):
    from autovend.calibration import mm

    cells, layout = random_problem(5)
    start = mm.Params(np.ones(120), np.ones((3, 3)), np.ones(6))
    problem = mm.SplitProblem(mm.local(cells), layout, (3, 3), 1.0, True)
    assert cells.size < mm.COMPILED_FROM_CELLS and not problem.compiled  # a small split stays in numpy
    plain = mm.solve(problem, start, tol=1e-9, max_iter=400)
    monkeypatch.setattr(mm, "COMPILED_FROM_CELLS", cells.size)
    problem = mm.SplitProblem(mm.local(cells), layout, (3, 3), 1.0, True)
    assert problem.compiled
    compiled = mm.solve(problem, start, tol=1e-9, max_iter=400)
    assert plain[1:] == compiled[1:] and plain[2]  # converged, in as many sweeps
    for name in ("omega", "pi", "gamma"):
        np.testing.assert_array_equal(getattr(plain[0], name), getattr(compiled[0], name))


def test_a_small_split_never_imports_numba():
    code = (
        "import sys\n"
        "from tests.calibration.split_cells import random_problem\n"
        "from autovend.calibration import mm\n"
        "cells, layout = random_problem(1)\n"
        "problem = mm.SplitProblem(mm.local(cells), layout, (3, 3), 1.0, True)\n"
        "mm.solve(problem, mm.Params(__import__('numpy').ones(120), __import__('numpy').ones((3, 3)),"
        " __import__('numpy').ones(6)), tol=1e-6, max_iter=50)\n"
        "print('numba' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


CACHED = """
import hashlib
import numpy as np
from autovend.calibration import kernels, tail_kernels
from tests.calibration.split_cells import random_cells
md, sk, k, a, table, demand, md_total, n_md, n_products = random_cells(3)
got = kernels.expected_sums(md, sk, a, table, md_total, k, n_products, np.empty(len(md)))
n = 40
cmd = np.repeat(np.arange(8), 5)
rng = np.random.default_rng(2)
s = rng.gamma(2.0, 1.0, (8, 33))
sums = tail_kernels.moment_sums(cmd, rng.uniform(0.01, 0.5, n), rng.integers(1, 9, n).astype(float), np.zeros(n), s,
                                np.log(s), np.zeros(n), np.empty((n, 33)))
digest = hashlib.sha256(b"".join(x.tobytes() for x in (got, *sums))).hexdigest()[:16]
fns = (kernels.expected_sums, tail_kernels.moment_sums)
print(sum(sum(f.stats.cache_hits.values()) for f in fns), sum(sum(f.stats.cache_misses.values()) for f in fns), digest)
"""


def test_the_kernels_are_compiled_once_then_loaded_from_numbas_cache(tmp_path):
    # a second process loads the machine code the first compiled (about 2 s CPU saved), and computes the same bits
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)

    def run() -> list[str]:
        return subprocess.run(
            [sys.executable, "-c", CACHED], env=env, capture_output=True, text=True, check=True
        ).stdout.split()

    hits, misses, first = run()
    assert (hits, misses) == ("0", "2")
    assert any(p.suffix == ".nbc" for p in tmp_path.rglob("*"))  # written where NUMBA_CACHE_DIR says
    hits, misses, again = run()
    assert (hits, misses) == ("2", "0") and again == first


def test_without_a_cache_folder_a_kernel_compiles_without_the_cache():
    # numba refuses to cache a function whose source file it cannot find a writable cache folder for (here: none)
    code = compile("def twice(x):\n    return 2.0 * x\n", "<no file>", "exec")
    space: dict[str, object] = {}
    exec(code, space)
    with pytest.raises(RuntimeError, match="no locator"):
        kernels.numba.njit(cache=True)(space["twice"])
    twice = kernels.compiled(nogil=True)(space["twice"])
    assert twice(1.5) == 3.0 and twice._cache.__class__.__name__ == "NullCache"
