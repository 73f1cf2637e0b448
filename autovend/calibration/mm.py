"""The product split's M-step: the penalised maximum-likelihood omega, pi, gamma by accelerated MM.

Given each machine-day's demand per product (imputed where censored), the split's log-likelihood is
sum over cells of d * log(v / V), v = omega_k * pi_{site,g1} * gamma_{g2} * a the cell's attraction
and V its machine-day's total. Each block update is a minorise-maximise step (Hunter & Lange 2004) and
one of the paper's definitions (see `choice`). Each omega has a weak Gamma(1 + a, a) prior (a =
`pseudo_units`): the maximum-likelihood omega does not exist for a product that sold on every
machine-day it was offered while nothing else did, and where the data link some products to the
others only through a site type's preference, their relative scale is not identified either; the
prior makes the optimum unique, with an effect of about a / n on a product with n units.

The rescalings the likelihood and the prior cannot see are removed after every sweep (gamma's
geometric mean 1 within each category, pi's column taking the factor; pi's geometric mean 1 within
each site type). Plain MM then still creeps along directions the prior pins only weakly (a fraction
a / n per sweep), so the sweeps are accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3) in
log parameters, with a fall-back to the plain double sweep whenever the extrapolation would lower the
penalised likelihood (near the optimum, where the objective is flat to its rounding error, that makes
it plain MM, which converges to the fixed point of its smooth update whatever the objective's noise).
It stops when a plain sweep moves no parameter by more than `tol` (relative).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

FloatArray = np.ndarray


@dataclass(frozen=True)
class Params:
    """omega (K,), pi (sites, categories), gamma (subcategories,)."""

    omega: FloatArray
    pi: FloatArray
    gamma: FloatArray


@dataclass(frozen=True)
class Layout:
    """The split's codes that every block shares: products' subcategories and categories, pi's shape."""

    n_products: int
    g2_of_k: np.ndarray  # (products,) subcategory code of each product
    g1_of_k: np.ndarray  # (products,) category code of each product
    g1_of_g2: np.ndarray  # (subcategories,) category code of each subcategory with cells (0 for the others)
    n_sites: int

    def table(self, p: Params) -> FloatArray:
        """omega_k * pi_{site,g1(k)} * gamma_{g2(k)} for every site type and product, flat (site * K + k).

        Multiplied in the order a cell's attraction is (`SplitCells`), so a cell's value taken from the table is the
        same float as the product computed for the cell alone.
        """
        t = p.omega[None, :] * p.pi[:, self.g1_of_k]
        t *= p.gamma[self.g2_of_k][None, :]
        return t.reshape(-1)


class SplitCells:
    """One block's cells of the split with their demand, for one M-step: the sums the M-step adds over blocks.

    A cell's attraction is v = omega_k * pi_{site,g1} * gamma_{g2} * a, its table value (`Layout.table`) times a.
    """

    def __init__(
        self,
        md: np.ndarray,
        sk: np.ndarray,
        k: np.ndarray,
        pig: np.ndarray,
        a: FloatArray,
        demand: FloatArray,
        n_md: int,
        n_products: int,
        n_pi: int,
    ) -> None:
        self.md, self.sk, self.k, self.pig, self.a, self.demand = md, sk, k, pig, a, demand
        self.n_md, self.n_products, self.n_pi = n_md, n_products, n_pi
        self._md_total = np.bincount(md, weights=demand, minlength=n_md)
        self.size = len(md)  # cells

    @property
    def _buffers(self) -> tuple[FloatArray, FloatArray]:
        """Two scratch arrays of one value per cell, shared by the blocks of a thread (they run one at a time)."""
        return scratch(len(self.k))

    def totals(self) -> tuple[FloatArray, FloatArray, np.ndarray]:
        """Demand per product, demand per site type x category (pi flattened), and which products have cells."""
        by_k = np.bincount(self.k, weights=self.demand, minlength=self.n_products)
        by_pi = np.bincount(self.pig, weights=self.demand, minlength=self.n_pi)
        return by_k, by_pi, np.bincount(self.k, minlength=self.n_products) > 0

    def _attraction(self, table: FloatArray, out: FloatArray) -> FloatArray:
        np.take(table, self.sk, out=out, mode="clip")
        return np.multiply(out, self.a, out=out)

    def attraction(self, table: FloatArray) -> FloatArray:
        """v of every cell (a new array)."""
        return self._attraction(table, np.empty(len(self.k)))

    def _expected(self, table: FloatArray) -> FloatArray:
        """Each cell's expected demand: its machine-day's demand split in proportion to the attractions.

        Computed in the first scratch array (valid until the next call).
        """
        v, tmp = self._buffers
        self._attraction(table, v)
        V = np.bincount(self.md, weights=v, minlength=self.n_md)
        np.take(self._md_total / np.where(V > 0, V, 1.0), self.md, out=tmp, mode="clip")
        return np.multiply(v, tmp, out=v)

    def _compiled_sums(self, table: FloatArray, group: np.ndarray, n_groups: int) -> FloatArray:
        from autovend.calibration.kernels import expected_sums  # numba is imported only for a large split

        return expected_sums(self.md, self.sk, self.a, table, self._md_total, group, n_groups, self._buffers[0])

    def expected_by_product(self, table: FloatArray, compiled: bool = False) -> FloatArray:
        """Expected demand per product at the table's parameters (`compiled`: `kernels.expected_sums`, same bits)."""
        if compiled:
            return self._compiled_sums(table, self.k, self.n_products)
        return np.bincount(self.k, weights=self._expected(table), minlength=self.n_products)

    def expected_by_pi(self, table: FloatArray, compiled: bool = False) -> FloatArray:
        """Expected demand per site type x category (pi flattened) at the table's parameters (`compiled`: as above)."""
        if compiled:
            return self._compiled_sums(table, self.pig, self.n_pi)
        return np.bincount(self.pig, weights=self._expected(table), minlength=self.n_pi)

    def loglik(self, table: FloatArray, compiled: bool = False) -> float:
        """The block's part of the split's log-likelihood: sum of d * log(v / V) over its cells.

        `compiled`: the terms picked by `kernels.loglik`'s loops, numpy's logarithm and sum (the same bits).
        """
        if compiled:
            from autovend.calibration.kernels import loglik

            return loglik(self.md, self.sk, self.a, table, self.demand, self.n_md, *self._buffers)
        v = self._attraction(table, self._buffers[0])
        V = np.bincount(self.md, weights=v, minlength=self.n_md)
        pos = (self.demand > 0) & (v > 0)
        return float(np.sum(self.demand[pos] * np.log(v[pos] / V[self.md[pos]])))


_SCRATCH = threading.local()


def scratch(n: int) -> tuple[FloatArray, FloatArray]:
    """Two float arrays of n values, reused across calls on this thread (grown when a larger block needs them)."""
    held = getattr(_SCRATCH, "arrays", None)
    if held is None or len(held[0]) < n:
        held = (np.empty(n), np.empty(n))
        _SCRATCH.arrays = held
    return held[0][:n], held[1][:n]


def drop_scratch() -> None:
    """Free this thread's scratch arrays (a fit is done with them: they would outlive it by the process's life)."""
    _SCRATCH.arrays = None


Over = Callable[..., list[Any]]  # over(fn, *args): [fn(cells, *args) for each block's SplitCells], in block order


def local(*blocks: SplitCells) -> Over:
    """`Over` the given blocks, in this process."""

    def over(fn: Callable[..., Any], *args: Any) -> list[Any]:
        return [fn(cells, *args) for cells in blocks]

    return over


def _totals(cells: SplitCells) -> tuple[FloatArray, FloatArray, np.ndarray]:
    return cells.totals()


def _by_product(cells: SplitCells, table: FloatArray, compiled: bool) -> FloatArray:
    return cells.expected_by_product(table, compiled)


def _by_pi(cells: SplitCells, table: FloatArray, compiled: bool) -> FloatArray:
    return cells.expected_by_pi(table, compiled)


def _loglik(cells: SplitCells, table: FloatArray, compiled: bool) -> float:
    return cells.loglik(table, compiled)


def _n_cells(cells: SplitCells) -> int:
    return cells.size


# From this many cells in the split, its passes run compiled (`kernels`, numba): the same bits, about 3x faster a
# pass, for a fixed cost per process of about 1.5 s CPU and 150 MiB of resident memory (numba's import maps LLVM's
# library, about 110 MiB of it shared pages, and compiling takes 40 MiB): below it numpy's passes cost less overall.
COMPILED_FROM_CELLS = 2_000_000


def ordered_sum(parts: list[Any]) -> Any:
    """The parts added in their order (an array is copied first): the same bits wherever the parts were made."""
    if isinstance(parts[0], np.ndarray):  # in the parts' common type (a block without cells sums to int zeros)
        total = np.array(parts[0], dtype=np.result_type(*parts))
    else:
        total = parts[0]
    for part in parts[1:]:
        total = total + part if not isinstance(total, np.ndarray) else np.add(total, part, out=total)
    return total


class SplitProblem:
    """One M-step of the split over every block's cells (`SplitCells`), each sum added block by block in order."""

    def __init__(self, over: Over, layout: Layout, shape: tuple[int, int], pseudo_units: float, update_omega: bool):
        self.over, self.layout, self.shape = over, layout, shape
        self.pseudo_units, self.update_omega = pseudo_units, update_omega
        by_k, by_pi, offered = zip(*over(_totals), strict=True)
        self.num_k = ordered_sum(list(by_k))
        self.num_g2 = np.bincount(layout.g2_of_k, weights=self.num_k, minlength=len(layout.g1_of_g2))
        self.num_pi = ordered_sum(list(by_pi)).reshape(shape)
        self.offered = np.logical_or.reduce(np.array(offered), axis=0)
        self.compiled = sum(over(_n_cells)) >= COMPILED_FROM_CELLS

    def sweep(self, p: Params) -> Params:
        """One MM sweep over the omega, pi and gamma blocks, then the invisible rescalings removed."""
        omega, pi, gamma = p.omega.copy(), p.pi.copy(), p.gamma.copy()
        S, C1 = pi.shape
        C2 = len(gamma)
        layout = self.layout
        if self.update_omega:
            den = ordered_sum(self.over(_by_product, layout.table(Params(omega, pi, gamma)), self.compiled))
            upd = den > 0
            omega[upd] = (self.num_k[upd] + self.pseudo_units) / (den[upd] / omega[upd] + self.pseudo_units)
        den = ordered_sum(self.over(_by_pi, layout.table(Params(omega, pi, gamma)), self.compiled)).reshape(S, C1)
        pi = np.where(den > 0, pi * self.num_pi / np.where(den > 0, den, 1.0), pi)
        den_k = ordered_sum(self.over(_by_product, layout.table(Params(omega, pi, gamma)), self.compiled))
        den = np.bincount(layout.g2_of_k, weights=den_k, minlength=C2)
        gamma = np.where(den > 0, gamma * self.num_g2 / np.where(den > 0, den, 1.0), gamma)
        return self.pin(Params(omega, pi, gamma))

    def pin(self, p: Params) -> Params:
        """The best scales along the objective's flat and prior-only directions, in closed form.

        omega * c and gamma / c within a subcategory leave the likelihood alone; the prior
        a * sum(log omega - omega) is then highest at c = n / sum(omega): omega's arithmetic mean 1
        over the subcategory's offered products (gamma takes the factor). gamma's geometric mean is
        set to 1 per category (pi's column takes it) and pi's to 1 per site type: neither the
        likelihood nor the prior sees those.
        """
        omega, gamma = p.omega, p.gamma
        if self.update_omega:
            C2 = len(gamma)
            g2_of_k, offered = self.layout.g2_of_k, self.offered
            sums = np.bincount(g2_of_k[offered], weights=omega[offered], minlength=C2)
            counts = np.bincount(g2_of_k[offered], minlength=C2)
            c2 = np.divide(sums, counts, out=np.ones(C2), where=(counts > 0) & (sums > 0))
            omega = np.where(offered, omega / c2[g2_of_k], omega)
            gamma = gamma * c2
        C1 = p.pi.shape[1]
        c1 = _log_mean(gamma, self.layout.g1_of_g2, C1)
        gamma = gamma / c1[self.layout.g1_of_g2]
        pi = p.pi * c1[None, :]
        c0 = _log_mean(pi.reshape(-1), np.repeat(np.arange(pi.shape[0]), C1), pi.shape[0])
        return Params(omega, pi / c0[:, None], gamma)

    def objective(self, p: Params) -> float:
        """The penalised log-likelihood (the objective MM climbs)."""
        ll = ordered_sum(self.over(_loglik, self.layout.table(p), self.compiled))
        if self.update_omega and self.pseudo_units > 0:
            om = p.omega[self.offered & (p.omega > 0)]
            ll += self.pseudo_units * float(np.sum(np.log(om) - om))
        return float(ll)


def _log_mean(values: FloatArray, groups: np.ndarray, n: int) -> FloatArray:
    """exp(mean log) of the positive values per group (1 for a group with none)."""
    ok = values > 0
    total = np.bincount(groups[ok], weights=np.log(values[ok]), minlength=n)
    count = np.bincount(groups[ok], minlength=n)
    return np.exp(np.divide(total, count, out=np.zeros(n), where=count > 0))


def _flat(p: Params) -> FloatArray:
    return np.concatenate([p.omega, p.pi.reshape(-1), p.gamma])


def _unflat(x: FloatArray, like: Params) -> Params:
    K, n_pi = len(like.omega), like.pi.size
    return Params(x[:K], x[K : K + n_pi].reshape(like.pi.shape), x[K + n_pi :])


def relative_change(new: Params, old: Params) -> float:
    """Largest |new / old - 1| over the positive parameters (1 where one reached or left 0)."""
    a, b = _flat(new), _flat(old)
    pos = b > 0
    if np.any((a > 0) != pos):
        return 1.0
    return float(np.max(np.abs(a[pos] / b[pos] - 1.0))) if np.any(pos) else 0.0


def solve(problem: SplitProblem, start: Params, *, tol: float, max_iter: int) -> tuple[Params, int, bool]:
    """The penalised optimum from `start`: (parameters, sweeps used, converged within `max_iter` sweeps)."""
    x = problem.pin(start)
    sweeps = 0
    while sweeps < max_iter:
        x1 = problem.sweep(x)
        sweeps += 1
        if relative_change(x1, x) <= tol:
            return x1, sweeps, True
        x2 = problem.sweep(x1)
        sweeps += 1
        f0, f1, f2 = _flat(x), _flat(x1), _flat(x2)
        live = (f0 > 0) & (f1 > 0) & (f2 > 0)
        r = np.where(live, np.log(np.where(live, f1, 1.0)) - np.log(np.where(live, f0, 1.0)), 0.0)
        v = np.where(live, np.log(np.where(live, f2, 1.0)) - np.log(np.where(live, f1, 1.0)), 0.0) - r
        rr, vv = float(np.dot(r, r)), float(np.dot(v, v))
        alpha = -np.sqrt(rr / vv) if vv > 0 else -1.0
        nxt = x2
        if alpha < -1.0:
            log_x = np.log(np.where(live, f0, 1.0)) - 2.0 * alpha * r + alpha * alpha * v
            trial = problem.pin(_unflat(np.where(live, np.exp(log_x), f2), x))
            trial = problem.sweep(trial)
            sweeps += 1
            if np.all(np.isfinite(_flat(trial))) and problem.objective(trial) >= problem.objective(x2):
                nxt = trial
        x = nxt
    return x, sweeps, False
