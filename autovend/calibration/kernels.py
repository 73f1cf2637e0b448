"""The split's per-cell passes compiled with numba: expected demand by product or site type x category, loglik.

`SplitProblem.sweep` makes three passes over every cell per sweep, and a calibration hundreds of sweeps: in numpy
each pass is seven array operations (gather, multiply, bincount, divide, gather, multiply, bincount) that each
stream the cells through memory. `expected_sums` does the same arithmetic in two loops over the cells, in the same
order, so every sum gets the same bits as `mm.SplitCells`' numpy passes (tests/calibration/test_kernels.py): 3x faster.
`loglik` picks the terms of the objective the same way and leaves the logarithms and their sum to numpy.

Portable code: numba compiles for the CPU named by NUMBA_CPU_NAME, which this module sets to "generic" (plain
x86-64, or plain aarch64) unless the user set it, so no instruction a virtual CPU advertises but refuses is ever
emitted, and every machine runs the same machine code.

Compiled once, then cached (`cache=True`): the first process compiles (about 2 s CPU for the split's and the
E-step's kernels) and writes the machine code to numba's cache, the package's own `__pycache__` beside the `.pyc`
files (or the user's cache folder, or NUMBA_CACHE_DIR); later processes and Dask's workers load it. The cache is
numba's pickle of what this package compiled, written by this package: as trusted as the `.pyc` files Python
executes from the same folder, never anything a user hands in. Its key holds the source file's stamp, numba's
version and the target CPU (generic, so one entry serves every machine); a changed kernel is compiled again.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

os.environ.setdefault("NUMBA_CPU_NAME", "generic")  # read by numba's config at import (and by Dask's workers)

import numba  # noqa: E402
import numpy as np  # noqa: E402

if vars(numba.config).get("CPU_NAME") is None:  # numba was imported before this module, without the variable
    vars(numba.config).update(CPU_NAME="generic", CPU_FEATURES="")


def compiled(**flags: Any) -> Callable[[Callable[..., Any]], Any]:
    """`numba.njit` with numba's on-disk cache (module docstring); without it when no cache folder is writable."""

    def wrap(fn: Callable[..., Any]) -> Any:
        try:
            return numba.njit(cache=True, **flags)(fn)
        except RuntimeError:  # numba found no writable folder: compile in every process, as without a cache
            return numba.njit(cache=False, **flags)(fn)

    return wrap


@compiled(nogil=True, boundscheck=False)
def _attractions(
    md: np.ndarray, sk: np.ndarray, a: np.ndarray, table: np.ndarray, n_md: int, v: np.ndarray
) -> np.ndarray:  # pragma: no cover - compiled
    """v = table[sk] * a into `v`, and its sums per machine-day in cell order (a bincount's bits)."""
    n_table = len(table)
    V = np.zeros(n_md)
    for i in range(len(md)):
        if not (0 <= md[i] < n_md and 0 <= sk[i] < n_table):
            raise IndexError("a cell's machine-day or table code is out of range")
        x = table[sk[i]] * a[i]
        v[i] = x
        V[md[i]] += x
    return V


@compiled(nogil=True, boundscheck=False)
def expected_sums(
    md: np.ndarray,
    sk: np.ndarray,
    a: np.ndarray,
    table: np.ndarray,
    md_total: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    v: np.ndarray,
) -> np.ndarray:  # pragma: no cover - compiled (numpy's: `mm.SplitCells`)
    """Sum per `group` code of each cell's expected demand, md_total[md] * v / V[md] with v = table[sk] * a.

    V is the sum of v per machine-day (code md, 0..len(md_total)-1; a machine-day with V = 0 divides by 1), `v` a
    scratch array of one value per cell (left holding the attractions). A code out of range raises IndexError.
    """
    n_md = len(md_total)
    V = _attractions(md, sk, a, table, n_md, v)
    ratio = np.empty(n_md)
    for j in range(n_md):
        ratio[j] = md_total[j] / (V[j] if V[j] > 0 else 1.0)
    out = np.zeros(n_groups)
    for i in range(len(md)):
        if not 0 <= group[i] < n_groups:
            raise IndexError("a cell's group code is out of range")
        out[group[i]] += v[i] * ratio[md[i]]
    return out


@compiled(nogil=True, boundscheck=False, error_model="numpy")
def _loglik_terms(
    md: np.ndarray,
    sk: np.ndarray,
    a: np.ndarray,
    table: np.ndarray,
    demand: np.ndarray,
    n_md: int,
    d: np.ndarray,
    r: np.ndarray,
) -> int:  # pragma: no cover - compiled (numpy's: `mm.SplitCells`)
    """The cells with demand and attraction, in cell order: their demand into d[:n], v / V[md] into r[:n]; n.

    r first holds every cell's attraction v; the kept cells are then packed to its front in place (a cell is
    written at or before its own place, after its v was read). No branch on the cell: each is written at the next
    free place, which only a kept cell advances (which cells are kept follows no pattern a CPU's branch predictor
    could learn: with a branch the pass took 3 times as long).
    """
    V = _attractions(md, sk, a, table, n_md, r)
    j = 0
    for i in range(len(md)):
        v = r[i]
        d[j] = demand[i]
        r[j] = v / V[md[i]]  # 0 / 0 on a machine-day without attraction: a NaN at a place no kept cell has
        j += (demand[i] > 0) & (v > 0)
    return j


def loglik(
    md: np.ndarray,
    sk: np.ndarray,
    a: np.ndarray,
    table: np.ndarray,
    demand: np.ndarray,
    n_md: int,
    d: np.ndarray,
    r: np.ndarray,
) -> float:
    """Sum over the cells with demand and attraction of demand * log(v / V[md]), v = table[sk] * a.

    `d` and `r`: scratch arrays of at least one value per cell. The compiled loop picks the cells and their
    v / V; the logarithms and the sum stay numpy's (its logarithm and its pairwise sum, over the same values in the
    same order as `mm.SplitCells.loglik`: the same bits).
    """
    if len(d) < len(md) or len(r) < len(md):
        raise ValueError("loglik's scratch arrays hold fewer values than there are cells")
    n = _loglik_terms(md, sk, a, table, demand, n_md, d, r)
    return float(np.sum(d[:n] * np.log(r[:n])))
