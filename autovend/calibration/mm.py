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

from dataclasses import dataclass
from functools import cached_property

import numpy as np

FloatArray = np.ndarray


@dataclass(frozen=True)
class Params:
    """omega (K,), pi (sites, categories), gamma (subcategories,)."""

    omega: FloatArray
    pi: FloatArray
    gamma: FloatArray


@dataclass(frozen=True, eq=False)
class SplitProblem:
    """The cells of the split with their demand for one M-step."""

    md: np.ndarray  # machine-day code of each cell
    k: np.ndarray  # product code
    pig: np.ndarray  # site type x category code (the index into pi flattened)
    g2_of_k: np.ndarray  # (products,) subcategory code of each product
    a: FloatArray  # fixed attraction factors
    demand: FloatArray  # demand per cell (imputed where censored)
    n_md: int
    n_products: int
    g1_of_g2: np.ndarray  # (subcategories,) category code of each subcategory
    pseudo_units: float
    update_omega: bool

    @cached_property
    def _md_total(self) -> FloatArray:
        """Each machine-day's demand total (the demand is fixed within one M-step)."""
        return np.bincount(self.md, weights=self.demand, minlength=self.n_md)

    @cached_property
    def _demand_by_product(self) -> tuple[FloatArray, FloatArray]:
        """Demand per product and per subcategory (summed over its products)."""
        by_k = np.bincount(self.k, weights=self.demand, minlength=self.n_products)
        return by_k, np.bincount(self.g2_of_k, weights=by_k, minlength=len(self.g1_of_g2))

    @cached_property
    def _products(self) -> tuple[np.ndarray, np.ndarray]:
        """Each product's subcategory code and whether it has cells."""
        return self.g2_of_k, np.bincount(self.k, minlength=self.n_products) > 0

    @cached_property
    def _pi_demand(self) -> dict[tuple[int, int], FloatArray]:
        return {}

    def _pi_cells(self, shape: tuple[int, int]) -> tuple[np.ndarray, FloatArray]:
        """Each cell's index into pi flattened, and the demand per site type x category."""
        if shape not in self._pi_demand:
            self._pi_demand[shape] = np.bincount(self.pig, weights=self.demand, minlength=shape[0] * shape[1]).reshape(
                shape
            )
        return self.pig, self._pi_demand[shape]

    @cached_property
    def _buffers(self) -> tuple[FloatArray, FloatArray]:
        """Scratch arrays of one value per cell: the sweeps reuse them instead of allocating their temporaries."""
        n = len(self.k)
        return np.empty(n), np.empty(n)

    def attraction(self, p: Params) -> FloatArray:
        """v of every cell."""
        return self._attraction(p, np.empty(len(self.k)), self._buffers[1])

    def _attraction(self, p: Params, out: FloatArray, scratch: FloatArray) -> FloatArray:
        """v = omega_k * pi_{site,g1} * gamma_{g2} * a, multiplied in that order, into `out`."""
        np.take(p.omega, self.k, out=out, mode="clip")
        np.multiply(out, np.take(p.pi.reshape(-1), self.pig, out=scratch, mode="clip"), out=out)
        np.multiply(out, np.take(p.gamma[self.g2_of_k], self.k, out=scratch, mode="clip"), out=out)
        return np.multiply(out, self.a, out=out)

    def _expected(self, p: Params) -> FloatArray:
        """Each cell's expected demand: its machine-day's demand split in proportion to the attractions.

        Computed in the first scratch array (valid until the next call).
        """
        v, scratch = self._buffers
        self._attraction(p, v, scratch)
        V = np.bincount(self.md, weights=v, minlength=self.n_md)
        np.take(self._md_total / np.where(V > 0, V, 1.0), self.md, out=scratch, mode="clip")
        return np.multiply(v, scratch, out=v)

    def sweep(self, p: Params) -> Params:
        """One MM sweep over the omega, pi and gamma blocks, then the invisible rescalings removed."""
        omega, pi, gamma = p.omega.copy(), p.pi.copy(), p.gamma.copy()
        S, C1 = pi.shape
        C2, K = len(gamma), self.n_products
        num_k, num_g2 = self._demand_by_product
        pi_index, num = self._pi_cells((S, C1))
        if self.update_omega:
            ex = self._expected(Params(omega, pi, gamma))
            den = np.bincount(self.k, weights=ex, minlength=K)
            upd = den > 0
            omega[upd] = (num_k[upd] + self.pseudo_units) / (den[upd] / omega[upd] + self.pseudo_units)
        ex = self._expected(Params(omega, pi, gamma))
        den = np.bincount(pi_index, weights=ex, minlength=S * C1).reshape(S, C1)
        pi = np.where(den > 0, pi * num / np.where(den > 0, den, 1.0), pi)
        ex = self._expected(Params(omega, pi, gamma))
        den = np.bincount(self.g2_of_k, weights=np.bincount(self.k, weights=ex, minlength=K), minlength=C2)
        gamma = np.where(den > 0, gamma * num_g2 / np.where(den > 0, den, 1.0), gamma)
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
            g2_of_k, offered = self._products
            sums = np.bincount(g2_of_k[offered], weights=omega[offered], minlength=C2)
            counts = np.bincount(g2_of_k[offered], minlength=C2)
            c2 = np.divide(sums, counts, out=np.ones(C2), where=(counts > 0) & (sums > 0))
            omega = np.where(offered, omega / c2[g2_of_k], omega)
            gamma = gamma * c2
        C1 = p.pi.shape[1]
        c1 = _log_mean(gamma, self.g1_of_g2, C1)
        gamma = gamma / c1[self.g1_of_g2]
        pi = p.pi * c1[None, :]
        c0 = _log_mean(pi.reshape(-1), np.repeat(np.arange(pi.shape[0]), C1), pi.shape[0])
        return Params(omega, pi / c0[:, None], gamma)

    def objective(self, p: Params) -> float:
        """The penalised log-likelihood (the objective MM climbs)."""
        v = self._attraction(p, *self._buffers[:2])
        V = np.bincount(self.md, weights=v, minlength=self.n_md)
        pos = (self.demand > 0) & (v > 0)
        ll = float(np.sum(self.demand[pos] * np.log(v[pos] / V[self.md[pos]])))
        if self.update_omega and self.pseudo_units > 0:
            offered = self._products[1]
            om = p.omega[offered & (p.omega > 0)]
            ll += self.pseudo_units * float(np.sum(np.log(om) - om))
        return ll


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
