"""Random cells of the product split for the tests of its passes (importing neither numba nor the kernels)."""

from __future__ import annotations

import numpy as np

from autovend.calibration import mm


def random_cells(seed: int, n_md: int = 500, per_md: int = 40, n_sites: int = 3, n_products: int = 120):
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


def random_problem(seed: int):
    md, sk, k, a, _, demand, _, n_md, K = random_cells(seed)
    site = sk // K
    g1_of_k, g2_of_k = np.arange(K) % 3, np.arange(K) % 6
    cells = mm.SplitCells(md, sk, k, site * 3 + g1_of_k[k], a, demand, n_md, K, 9)
    layout = mm.Layout(K, g2_of_k, g1_of_k, np.arange(6) % 3, 3)
    return cells, layout
