"""The censored E-step's per-cell work compiled with numba: Poisson tails, truncated moments, the scales' Newton steps.

The E-step (`censored`) needs P(D >= q), D ~ Poisson(lam), for every sold-out cell at each of the 33 nodes of the
scale's posterior and at each Newton step of the day scales: 112M tails a fit on the 1M-line benchmark source,
where `special.pdtrc` (Cephes' incomplete gamma function) costs about 100 ns each and numpy's passes around it as
much again. For an integer q the tail is a short sum of positive Poisson terms, each the one before times lam / j
or j / lam, started from P(D = q - 1), which the truncated moments need anyway:

- lam >= max(q - sqrt(q), 0.5): P(D >= q) = 1 - P(D <= q - 1), that sum taken from P(D = q - 1) down to P(D = 0)
  (stopped once a term is below 1e-17 of the sum). P(D >= q) is then at least about 0.1, so the subtraction loses
  at most a few bits;
- otherwise the upper sum from P(D = q) upwards, stopped the same way (its terms fall at least as fast as
  (lam / (q + 1))^j).

Within 2.5e-13 relative of `pdtrc` for q in 1..60 and lam in 1e-14..500 (tests/calibration/test_tail_kernels.py;
1.8e-13 at worst, as for `censored.tail_probabilities`' deeper tails: P(D = q - 1) is the exp of a logarithm as
large as 690 in magnitude, whose last bit is 1e-13 of the result).
The moments and the Newton steps are `censored`'s formulas, except that P(D = q - 2) is P(D = q - 1) (q - 1) / lam
rather than the exp of its logarithm, that log lam is log s + log share (the node's or the Newton step's logarithm
and the cell's), that a machine-day's sum of log P(D >= q) is the logarithm of the tails' product (taken when the
product nears the floats' floor: one logarithm for many cells, 22% of the loop), and that libm's exp and log
stand where numpy uses its own (an ulp apart at most): the values agree with numpy's path to a few 1e-13
relative, and the estimates after canonical rounding (the 1M-line benchmark source and the embedded operator keep
their hashes with either path). The split uses these kernels only
when it has many sold-out cells (`split.COMPILED_FROM_CENSORED`): importing numba costs about 0.4 s CPU and
150 MiB, compiling them about 1.5 s the first time (later processes load them from numba's cache, see `kernels`).

Compiled for numba's generic CPU (set by `kernels` before numba is imported), like the split's passes.
"""

from __future__ import annotations

import math

from autovend.calibration import kernels as _portable  # sets numba's generic CPU target first

import numpy as np  # noqa: E402  isort: skip

FLOOR = 1e-12  # lam below it is taken at FLOOR for the moments (`censored.truncated_moments`)
# log P(D >= q) summed over a machine-day's cells as the logarithm of their product, taken whenever the product
# falls under PROD_FLUSH; a tail under TAIL_ALONE adds its own logarithm (so the product stays a normal float)
TAIL_ALONE = 1e-100
PROD_FLUSH = 1e-200


@_portable.compiled(nogil=True, boundscheck=False, error_model="numpy")
def poisson_sf(q: float, lam: float, pmf: float) -> float:  # pragma: no cover - compiled
    """P(D >= q) for D ~ Poisson(lam), integer q >= 1, lam > 0, given P(D = q - 1) (see the module docstring)."""
    t = pmf
    if lam >= max(q - math.sqrt(q), 0.5):
        inv = 1.0 / lam
        c = t
        j = q - 1.0
        while j > 0.5:
            t *= j * inv
            c += t
            j -= 1.0
            if t <= 1e-17 * c:
                break
        return 1.0 - c
    t = t * lam / q
    s = t
    j = q
    while t > 1e-17 * s:
        j += 1.0
        t *= lam / j
        s += t
    return s


@_portable.compiled(nogil=True, boundscheck=False, error_model="numpy")
def _moments_one(
    q: float, raw: float, log_raw: float, log_fact: float
) -> tuple[float, float, float]:  # pragma: no cover - compiled
    """E[D | D >= q], Var[D | D >= q] and P(D >= q) of one cell (`censored.truncated_moments`' formulas).

    `log_raw`: log lam, from the logarithms of the scale and of the share (a logarithm per cell and node saved).
    """
    if raw < FLOOR:
        lam, log_lam = FLOOR, math.log(FLOOR)
    else:
        lam, log_lam = raw, log_raw
    pmf = math.exp((q - 1.0) * log_lam - lam - log_fact)  # P(D = q - 1)
    p0 = poisson_sf(q, lam, pmf)
    run = p0 + pmf
    p1 = run if q >= 2.0 else 1.0
    p2 = run + pmf * (q - 1.0) / lam if q >= 3.0 else 1.0  # + P(D = q - 2)
    pc = max(p0, 1e-300)
    m1 = lam * p1 / pc
    mean = max(m1 if p0 > 1e-300 else q + lam, q)
    m2 = (lam**2 * p2 + lam * p1) / pc
    var = max(m2 - m1**2, 0.0)
    if raw < FLOOR:  # the survival function is taken at lam itself
        p0 = poisson_sf(q, raw, math.exp((q - 1.0) * math.log(raw) - raw - log_fact)) if raw > 0 else 0.0
    return mean, var, p0


@_portable.compiled(nogil=True, boundscheck=False, error_model="numpy")
def moment_sums(
    cmd: np.ndarray,
    cshare: np.ndarray,
    cq: np.ndarray,
    log_fact: np.ndarray,
    s: np.ndarray,
    log_s: np.ndarray,
    log_share: np.ndarray,
    mean_c: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled (numpy's: `censored`)
    """`censored.moment_sums` compiled: the cells' truncated means into mean_c; the three sums per machine-day and node.

    Each sum adds its cells in cell order, as numpy's bincount does.
    """
    n_md, n_nodes = s.shape
    log_sf = np.zeros((n_md, n_nodes))
    prod = np.ones((n_md, n_nodes))  # the tails' product not yet in log_sf (kept above PROD_FLUSH)
    tot_mean = np.zeros((n_md, n_nodes))
    tot_var = np.zeros((n_md, n_nodes))
    for c in range(len(cmd)):
        d = cmd[c]
        if not 0 <= d < n_md:
            raise IndexError("a sold-out cell's machine-day is out of range")
        for g in range(n_nodes):
            m, v, p = _moments_one(cq[c], s[d, g] * cshare[c], log_s[d, g] + log_share[c], log_fact[c])
            mean_c[c, g] = m
            p = max(p, 1e-300)
            if p < TAIL_ALONE:  # a deep tail: its own logarithm (a product of such could leave the normal floats)
                log_sf[d, g] += math.log(p)
            else:
                x = prod[d, g] * p
                if x < PROD_FLUSH:
                    log_sf[d, g] += math.log(x)
                    x = 1.0
                prod[d, g] = x
            tot_mean[d, g] += m
            tot_var[d, g] += v
    for d in range(n_md):
        for g in range(n_nodes):
            log_sf[d, g] += math.log(prod[d, g])
    return log_sf, tot_mean, tot_var


@_portable.compiled(nogil=True, boundscheck=False, error_model="numpy")
def newton_days(
    days: np.ndarray,
    t: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    first_cell: np.ndarray,
    cshare: np.ndarray,
    log_share: np.ndarray,
    cq: np.ndarray,
    log_fact: np.ndarray,
    y_unc: np.ndarray,
    p_unc: np.ndarray,
    alpha: float,
    beta: np.ndarray,
    max_steps: int,
) -> None:  # pragma: no cover - compiled (numpy's: `censored._newton`)
    """`censored._newton` one machine-day at a time (days are independent): the same steps, t, lo, hi in place.

    log lam is t + log share (the scale's logarithm is the Newton variable t), a logarithm per cell and step saved.
    """
    for d in days:
        for _ in range(max_steps):
            t_l = t[d]
            s = math.exp(t_l)
            s1 = 0.0
            s2 = 0.0
            for r in range(first_cell[d], first_cell[d + 1]):
                q = cq[r]
                lam = s * cshare[r]
                p1 = math.exp((q - 1.0) * (t_l + log_share[r]) - lam - log_fact[r])  # P(D = q - 1)
                tail = max(poisson_sf(q, lam, p1), 1e-300)  # P(D >= q)
                p2 = p1 * (q - 1.0) / lam if q >= 2.0 else 0.0  # P(D = q - 2)
                hazard = p1 / tail
                s1 += cshare[r] * hazard
                s2 += cshare[r] ** 2 * ((p2 - p1) / tail - hazard**2)
            score = y_unc[d] / s - p_unc[d] + s1 + (alpha - 1.0) / s - beta[d]
            slope = -(y_unc[d] + alpha - 1.0) / s + s * s2
            if score > 0:
                lo[d] = t_l
            else:
                hi[d] = t_l
            step = score / (slope if slope < 0 else -np.inf)
            inside = (t_l - step >= lo[d]) and (t_l - step <= hi[d]) and (slope < 0)
            t[d] = t_l - step if inside else 0.5 * (lo[d] + hi[d])
            tol = 1e-14 * max(1.0, abs(t_l))
            if (inside and abs(step) <= tol) or (hi[d] - lo[d] <= tol):
                break
