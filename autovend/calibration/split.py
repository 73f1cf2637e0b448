"""The product split's fit over the blocks of a store: MM for omega, pi and gamma, EM for censored demand.

`fit_choice` runs the EM of `choice` (see its docstring for the model): every M-step is `mm.solve` on a
`mm.SplitProblem` whose sums come from each block's `mm.SplitCells`, and every E-step imputes the sold-out cells
of each block's machine-days where the block is held. What the E-step needs of all blocks at once (the median of
the machine-days' uncensored demand ratios, the prior of each machine-day's scale) travels as machine-day arrays;
the cells never leave their block. In memory the blocks are a panel's (`panel_store`), or one `ChoiceData`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from autovend.calibration.blocks import EM_ARRAYS, Block, Spill, held, keep
from autovend.calibration.censored import (
    bincount,
    day_scales,
    moment_sums,
    posterior_impute,
    scale_ratios,
)
from autovend.calibration.choice import ChoiceCells, ChoiceData, ChoiceFit, SplitCodes, choice_of
from autovend.calibration.mm import Layout, Params, SplitCells, SplitProblem, drop_scratch, ordered_sum, scratch, solve
from autovend.calibration.store import local_store

# From this many sold-out cells in a split its E-steps run compiled (`tail_kernels`: P(D >= q) summed, within 2.5e-13
# of pdtrc; the E-step about 2x faster): importing numba and compiling cost 2-3 s CPU and 150 MiB, more than the
# embedded operator's 32k sold-out cells would save (its calibration: 2 s slower compiled); the 1M-line benchmark
# source has 340k (24 s instead of 48 s on the same day)
COMPILED_FROM_CENSORED = 150_000
DELTA = 0.01  # relative step of the uncensored sales in the E-step's variance correction (see `_ml_step`)


def data_cells(data: ChoiceData) -> ChoiceCells:
    """One `ChoiceData` (a whole split in memory) as a store of one block."""
    import pandas as pd

    block = Block(0, 0, pd.DataFrame(), pd.DataFrame(), data=data)
    store = local_store([block], [(0, 0)])
    K = data.n_products
    C1 = len(data.cats_l1)
    g1_of_k = np.zeros(K, dtype=np.int64)
    g1_of_k[data.k] = data.pig % C1
    codes = SplitCodes(data.sites, data.cats_l1, data.cats_l2, np.zeros(0, np.int64), g1_of_k, data.g2_of_k,
                       data.g1_of_g2, np.zeros(0))  # fmt: skip
    return ChoiceCells(
        store, codes, K, data.md_m, data.md_d, np.array([0, len(data.md_m)]),
        np.bincount(data.k, weights=data.y, minlength=K), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0),
        bool(np.any(data.censored)), data.avail is not None, len(data.k),
    )  # fmt: skip


def site_product(data: ChoiceData, n_products: int) -> np.ndarray:
    """Each cell's (site type, product) code, site * K + k: its row of `mm.Layout.table`."""
    return (data.pig // len(data.cats_l1)) * n_products + data.k


def attraction(data: ChoiceData, table: np.ndarray) -> np.ndarray:
    """v = omega_k * pi_{site,g1} * gamma_{g2} * a of every cell, from the layout's table (one new array)."""
    v = np.take(table, site_product(data, data.n_products), mode="clip")
    v *= data.a
    return v


def positive_or_one(x: np.ndarray) -> np.ndarray:
    """x with every value that is not positive set to 1, in place (as np.where(x > 0, x, 1.0))."""
    x[~(x > 0)] = 1.0
    return x


# -------------------------------------------------------------------------- what each block does


def _held(value: np.ndarray | None) -> np.ndarray:
    """A block's array that the fit's previous step set."""
    assert value is not None
    return value


def _start(block: Block, impute: bool) -> None:
    data = choice_of(block)
    keep(block, "dhat", data.y.copy())
    keep(block, "cens", data.censored & ~np.isnan(data.q) & impute)
    keep(block, "share", None)


def _n_censored(block: Block) -> int:
    return int(np.count_nonzero(_held(held(block, "cens"))))


class SpilledCells(SplitCells):
    """`mm.SplitCells` of a spilled block (`blocks.Spill`): each sum reads the arrays it needs back, then drops them."""

    FILES = {"md": "cell_md", "sk": "sk", "k": "k", "pig": "pig", "a": "a", "demand": "dhat"}

    def __init__(self, spill: Spill, n_md: int, n_products: int, n_pi: int) -> None:
        self.spill = spill
        self.n_md, self.n_products, self.n_pi = n_md, n_products, n_pi
        with self._loaded("md", "demand"):
            self._md_total = np.bincount(self.md, weights=self.demand, minlength=n_md)
            self.size = len(self.md)

    @contextlib.contextmanager
    def _loaded(self, *names: str) -> Iterator[None]:
        for name in names:
            setattr(self, name, self.spill.get(self.FILES[name]))
        try:
            yield
        finally:
            for name in names:
                setattr(self, name, None)

    @property
    def _buffers(self) -> tuple[np.ndarray, np.ndarray]:
        return scratch(len(self.sk) if self.sk is not None else len(self.k))

    def totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`mm.SplitCells.totals`, from the files."""
        with self._loaded("k", "pig", "demand"):
            return super().totals()

    def expected_by_product(self, table: np.ndarray, compiled: bool = False) -> np.ndarray:
        """`mm.SplitCells.expected_by_product`, from the files."""
        with self._loaded("md", "sk", "a", "k"):
            return super().expected_by_product(table, compiled)

    def expected_by_pi(self, table: np.ndarray, compiled: bool = False) -> np.ndarray:
        """`mm.SplitCells.expected_by_pi`, from the files."""
        with self._loaded("md", "sk", "a", "pig"):
            return super().expected_by_pi(table, compiled)

    def loglik(self, table: np.ndarray, compiled: bool = False) -> float:
        """`mm.SplitCells.loglik`, from the files."""
        with self._loaded("md", "sk", "a", "demand"):
            return super().loglik(table, compiled)


def _open(block: Block, n_pi: int) -> None:
    data = choice_of(block)
    K = data.n_products
    if block.spill is not None:
        block.spill.put("sk", site_product(data, K))
        block.split = SpilledCells(block.spill, len(data.md_m), K, n_pi)
        return
    block.split = SplitCells(data.cell_md, site_product(data, K), data.k, data.pig, data.a, _held(block.dhat),
                             len(data.md_m), K, n_pi)  # fmt: skip


def _close(block: Block) -> None:
    block.split = None
    drop_scratch()  # the sweeps' per-cell scratch goes before the E-step's
    if block.spill is not None:
        block.spill.put("sk", None)


def _shares(block: Block, table: np.ndarray) -> tuple[ChoiceData, np.ndarray]:
    """The block's split cells and v / V of each cell (kept in the block)."""
    data = choice_of(block)
    keep(block, "dhat", None)  # the E-step makes the next round's demand from y: this one can go now
    share = attraction(data, table)
    share /= positive_or_one(bincount(data.cell_md, share, len(data.md_m))[data.cell_md])
    return data, share


def _posterior_step(
    block: Block, table: np.ndarray, log_mean: np.ndarray, sd: float, compiled: bool = False
) -> np.ndarray:
    """E-step with the scale's log-normal prior (`censored.posterior_impute`); the block's variance corrections."""
    data, share = _shares(block, table)
    n_md = len(data.md_m)
    lo = block.md_lo
    dhat, var_adjust = posterior_impute(
        data.cell_md, share, data.y, _held(held(block, "cens")), data.q, n_md, log_mean[lo : lo + n_md], sd, compiled
    )
    keep(block, "dhat", dhat)
    return var_adjust


def _ratios(block: Block, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The block's machine-day ratios of uncensored units to share (`censored.scale_ratios`), plain and +DELTA."""
    data, share = _shares(block, table)
    cens = _held(held(block, "cens"))
    y_unc = bincount(data.cell_md, np.where(cens, 0.0, data.y), len(data.md_m))
    keep(block, "share", share)
    keep(block, "y_unc", y_unc)
    ratio = scale_ratios(data.cell_md, share, y_unc, cens, len(data.md_m))
    ratio_b = scale_ratios(data.cell_md, share, y_unc * (1 + DELTA), cens, len(data.md_m))
    return ratio, ratio_b


def _ml_step(block: Block, pooled: float, pooled_b: float, compiled: bool = False) -> np.ndarray:
    """E-step with each machine-day's maximum-likelihood scale: E[D | D >= q], and the variance corrections.

    The corrections for the shock's variance (see `shocks`): the conditional variance the imputation removes,
    and the extra noise the estimated scale passes from uncensored sales to the total.
    """
    data = choice_of(block)
    md, y = data.cell_md, data.y
    share, cens, y_unc = _held(held(block, "share")), _held(held(block, "cens")), _held(held(block, "y_unc"))
    scale = day_scales(md, share, y_unc, cens, data.q, data.md_m, pooled=pooled, compiled=compiled)
    ci = np.flatnonzero(cens)
    c_md, c_share, c_q = md[ci], share[ci], data.q[ci]
    dhat = y.copy()
    # the scale as a single node; the sums of the imputed means and variances per machine-day come with them
    _, imputed, var_cens, mean_c = moment_sums(c_md, c_share, c_q, scale[:, None], compiled)
    dhat[ci] = mean_c[:, 0]
    scale_b = day_scales(md, share, y_unc * (1 + DELTA), cens, data.q, data.md_m, pooled=pooled_b, compiled=compiled)
    extra = moment_sums(c_md, c_share, c_q, scale_b[:, None], compiled)[1][:, 0] - imputed[:, 0]
    g_md = np.where(y_unc > 0, 1.0 + extra / (DELTA * np.maximum(y_unc, 1e-12)), 1.0)
    keep(block, "dhat", dhat)
    keep(block, "y_unc", None)
    keep(block, "share", None)
    return (g_md**2 - 1.0) * y_unc - var_cens[:, 0]


def _summary(block: Block, table: np.ndarray, omega: np.ndarray, table1: np.ndarray) -> dict[str, Any]:
    """The block's part of the fit's figures: log-likelihood, exposure, demand per product and machine-day."""
    data = choice_of(block)
    md, k, dhat = data.cell_md, data.k, _held(held(block, "dhat"))
    n_md, K = len(data.md_m), data.n_products
    v = attraction(data, table)
    V = bincount(md, v, n_md)
    pos = (dhat > 0) & (v > 0)
    loglik = float(np.sum(dhat[pos] * np.log(v[pos] / V[md[pos]])))
    del pos
    # each cell's expected demand, total[md] * v / V[md], then per unit of omega: the exposure
    ex = bincount(md, dhat, n_md)[md]
    ex *= v
    ex /= positive_or_one(V[md])
    ex /= positive_or_one(omega[k])
    exposure = bincount(k, ex, K)
    del ex
    # products whose MLE omega is 0 still have exposure: recompute their share with omega = 1
    zero = omega[k] == 0
    if np.any(zero):
        v1 = attraction(data, table1)  # pi * gamma * a (omega = 1)
        tot = bincount(md, dhat, n_md)
        ex0 = tot[md] * v1 / np.where(V[md] > 0, V[md] + v1, 1.0)
        exposure += bincount(k, np.where(zero, ex0, 0.0), K)
    return {
        "loglik": loglik,
        "exposure": exposure,
        "units": bincount(k, dhat, K),
        "machine_days": bincount(k, np.ones(len(k)), K),
        "md_demand": bincount(md, dhat, n_md),
    }


def _end(block: Block) -> None:
    for name in EM_ARRAYS:
        keep(block, name, None)


# -------------------------------------------------------------------------- the fit


def fit_choice(
    cells: ChoiceCells | ChoiceData,
    *,
    em_rounds: int = 4,
    max_iter: int = 2000,
    tol: float = 1e-12,
    omega_fixed: np.ndarray | None = None,
    impute: bool = True,
    scale_prior: tuple[np.ndarray, float] | None = None,
    pseudo_units: float = 0.01,
    start: Params | None = None,
) -> ChoiceFit:
    """Fit omega, pi, gamma by MM with EM imputation of censored demand (`choice` module docstring).

    `pseudo_units` a: each product's likelihood gets a pseudo-observation of a units per a units of
    exposure at popularity 1 (a Gamma(1 + a, a) prior on omega): the maximum-likelihood split does not
    exist for a product that sold on every machine-day it was offered while nothing else did (its omega
    runs to infinity), and with a = 0.01 a product with n units moves by about 0.01 / n.

    With `omega_fixed`, only pi and gamma are updated (used after empirical-Bayes shrinkage of omega).
    `start` (without `omega_fixed`): where the MM starts; it runs to the same fixed point from anywhere.
    `impute=False` treats censored sales as demand (the uncorrected estimator, for comparison).
    `scale_prior=(log_mean, sd)` gives each machine-day's demand scale a log-normal prior (the
    structural expected demand and the shock's sigma); the E-step then integrates over the scale's
    posterior instead of plugging in its maximum-likelihood value (see `posterior_impute`).
    """
    if isinstance(cells, ChoiceData):
        cells = data_cells(cells)
    store, layout = cells.store, cells.layout
    K = cells.n_products
    S, C1, C2 = len(cells.sites), len(cells.cats_l1), len(cells.cats_l2)
    omega = np.ones(K) if omega_fixed is None else omega_fixed.astype(float).copy()
    pi = np.ones((S, C1))
    gamma = np.ones(C2)
    if start is not None and omega_fixed is None and start.pi.shape == (S, C1) and len(start.gamma) == C2:
        omega, pi, gamma = start.omega.astype(float).copy(), start.pi.copy(), start.gamma.copy()
    store.map(_start, impute)
    n_cens = sum(store.map(_n_censored)) if impute else 0
    any_cens = n_cens > 0
    compiled = n_cens >= COMPILED_FROM_CENSORED  # the E-steps' tails compiled (`tail_kernels`)
    it_total = 0
    all_converged = True
    var_adjust = np.zeros(len(cells.md_m))
    for _round in range(em_rounds + 1 if impute else 1):
        store.map(_open, S * C1)
        problem = SplitProblem(store.over_split, layout, (S, C1), pseudo_units, omega_fixed is None)
        fitted, sweeps, converged = solve(problem, Params(omega, pi, gamma), tol=tol, max_iter=max_iter)
        store.map(_close)
        omega, pi, gamma = fitted.omega, fitted.pi, fitted.gamma
        it_total += sweeps
        all_converged &= converged
        if not impute or not any_cens:
            break
        table = layout.table(Params(omega, pi, gamma))
        if scale_prior is not None:
            var_adjust = _cat(store.map(_posterior_step, table, scale_prior[0], scale_prior[1], compiled))
            continue
        ratios = store.map(_ratios, table)
        pooled = _pooled(_cat([r[0] for r in ratios]))
        pooled_b = _pooled(_cat([r[1] for r in ratios]))
        var_adjust = _cat(store.map(_ml_step, pooled, pooled_b, compiled))
    final = Params(omega, pi, gamma)
    parts = store.map(_summary, layout.table(final), omega, layout.table(Params(np.ones(K), pi, gamma)))
    store.map(_end)
    return ChoiceFit(
        omega=omega,
        pi=pi,
        gamma=gamma,
        units=ordered_sum([p["units"] for p in parts]),
        exposure=ordered_sum([p["exposure"] for p in parts]),
        machine_days=ordered_sum([p["machine_days"] for p in parts]),
        loglik=float(ordered_sum([p["loglik"] for p in parts])),
        iterations=it_total,
        converged=all_converged,
        md_demand=_cat([p["md_demand"] for p in parts]),
        md_var_adjust=var_adjust,
    )


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _pooled(ratio: np.ndarray) -> float:
    """The pooled scale of `censored.day_scales`: the median ratio over every machine-day that has one."""
    return float(np.nanmedian(ratio)) if np.any(np.isfinite(ratio)) else 1.0


def layout_of(codes: SplitCodes, n_products: int) -> Layout:
    """The M-step's layout of a split's codes."""
    return Layout(n_products, codes.g2_of_k, codes.g1_of_k, codes.g1_of_g2, len(codes.sites))
