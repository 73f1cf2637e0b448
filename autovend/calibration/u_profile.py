"""What the records say about the no-purchase weight u: its profile likelihood, a 95% interval, identified or not.

The structural fit of `no_purchase` gives u's maximum; here the log-likelihood of the machine-day totals (c_m
profiled out in closed form) is profiled over u, walking out from the maximum, the nuisance parameters
re-maximised at every point:

- lambda, the shock's control-function weight (`no_purchase.fit_no_purchase`);
- on shelves estimated from sales alone (`availability`), the depletion exponent theta and the level s. Those
  shelves say which products were on the shelf, not how full it was or how many facings each kept, and both fall
  as products sell out between restocks, so the shelf's attraction varies more than that of the products on it
  and is lower: W = s R (W_avail / R) ** theta. theta (in `THETA_BOUNDS`; 1: fill and facings constant) maps the
  one variation to the other (on the embedded operator, where the truth is known, the true attraction varies as
  W_avail ** 1.47 within machines); s (in `LEVEL_BOUNDS`) is how much lower the typical shelf is. Fill and
  facings can only lower a shelf's attraction (s <= 1); s >= 0.2 is the stated floor (a typical fill of at least
  a fifth and half facings: 0.2 ** 0.5 * 0.5). u and s enter the likelihood almost only through u / s, so with s
  free the profile of u is wide unless the data pin the elasticity e = u / (u + x) very well.

The Poisson likelihood ignores the shock's overdispersion and its serial correlation, so its curvature overstates
what the data know. The likelihood ratio is divided by the ratio of the machine-clustered sandwich variance of
log u to its model-based variance (the adjusted profile likelihood of Chandler & Bate 2007), and the interval is
where 2 * (max - profile) / that ratio <= 3.84 (chi-square, one degree of freedom, 95%). An end that reaches the
search bounds is open: the data cannot reject u that far. u is identified when both ends are closed and the
interval is within a factor `IDENTIFIED_SPAN` (hi / lo): otherwise the records leave u to the stated prior.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import optimize

from autovend.calibration.no_purchase import CONTROL_FLOOR

CHI2_95 = 3.841458820694124  # chi-square quantile, 1 degree of freedom, 0.95
WALK_STEP = float(np.log(1.5))  # the profile is walked from its maximum in steps of a factor 1.5 in u
THETA_BOUNDS = (1.0, 3.0)  # the depletion exponent: 1 = shelves as estimated; above, fill falls with availability
LEVEL_BOUNDS = (0.2, 1.0)  # s, the typical shelf's attraction over the estimated availability's
LAMBDA_BOUNDS = (-5.0, 5.0)
IDENTIFIED_SPAN = 4.0  # an interval wider than this (hi / lo) leaves u to the prior: within a factor 2 either side


@dataclass(frozen=True)
class ProfileData:
    """Machine-day totals and attractions of the u fit (aligned arrays), machines coded 0..n_m-1.

    `depletion`: the shelves were estimated from sales alone, so theta is free; the level s is then free in
    `LEVEL_BOUNDS` unless `level` fixes it so that the geometric mean of the real shelf's attraction over the
    reference shelf (`W_real` / R) is `level` (a borrowed x).
    """

    D: np.ndarray
    W: np.ndarray  # the shelf's attraction as estimated (kappa = 1)
    R: np.ndarray  # the machine's reference-shelf attraction on each machine-day
    m: np.ndarray
    n_m: int
    control: np.ndarray | None  # the previous day's demand over its plain-fit mean (None: no shock control)
    depletion: bool
    W_real: np.ndarray | None = None
    level: float | None = None

    @property
    def free(self) -> tuple[bool, bool, bool]:
        """Which nuisances (theta, lambda, log s) are free."""
        return self.depletion, self.control is not None, self.depletion and self.level is None

    # What every evaluation of the likelihood would otherwise recompute (the fits call it hundreds of times).
    @cached_property
    def log_ratio_mean(self) -> float:
        """Mean over machine-days of log(W_real / R) (0 without W_real)."""
        if self.W_real is None:
            return 0.0
        ratio = self.W_real / self.R
        return float(np.mean(np.log(ratio[ratio > 0]))) if np.any(ratio > 0) else 0.0

    @cached_property
    def ratio(self) -> np.ndarray:
        """W / R of each machine-day."""
        return self.W / self.R

    @cached_property
    def log_ratio(self) -> np.ndarray:
        """log(W / R) of each machine-day (floored at 1e-300 before the log)."""
        return np.log(np.maximum(self.ratio, 1e-300))

    @cached_property
    def control_excess(self) -> np.ndarray:
        """control - 1 (control must be set)."""
        assert self.control is not None
        return self.control - 1.0

    @cached_property
    def machine_demand(self) -> np.ndarray:
        """D summed by machine."""
        return np.bincount(self.m, weights=self.D, minlength=self.n_m)

    @cached_property
    def positive(self) -> np.ndarray:
        """Where D > 0."""
        return self.D > 0

    @cached_property
    def positive_demand(self) -> np.ndarray:
        """D where it is positive."""
        return self.D[self.positive]

    def attraction(self, theta: float, log_s: float) -> np.ndarray:
        """The shelf's attraction s R (W / R) ** theta (s from `level` when it is set)."""
        W = self.W if theta == 1.0 else self.R * self.ratio**theta
        if self.depletion and self.level is not None:
            log_s = float(np.log(self.level)) - theta * self.log_ratio_mean
        return W if log_s == 0.0 else W * np.exp(log_s)

    def attraction_level(self, theta: float) -> float:
        """s at theta when `level` sets it (the free s otherwise is a nuisance: this is 1)."""
        if self.depletion and self.level is not None:
            return float(np.exp(np.log(self.level) - theta * self.log_ratio_mean))
        return 1.0

    def x(self, theta: float, log_s: float) -> float:
        """The geometric mean of the real shelf's attraction over the reference shelf's at (theta, s)."""
        if self.depletion and self.level is not None:
            return self.level
        return float(np.exp(theta * self.log_ratio_mean + log_s))


Nuisance = tuple[float, float, float]  # theta, lambda, log s
NEUTRAL: Nuisance = (1.0, 0.0, 0.0)


@dataclass(frozen=True)
class UProfile:
    """The profile of u: maximum, nuisances there, the adjusted 95% interval and the verdict on identification."""

    u_hat: float
    nuisance: Nuisance  # theta, lambda, log s at the maximum
    low: float | None  # None: open, the data cannot reject u down to the search bound
    high: float | None  # None: open up to the search bound
    adjustment: float  # sandwich over model variance of log u (>= 1)
    identified: bool
    reason: str
    points: tuple[tuple[float, float], ...]  # (u, adjusted 2 * (max - profile)) at the points the walk visited

    def contains(self, u: float) -> bool:
        """Whether the interval contains u (open ends contain everything beyond them)."""
        return (self.low is None or u >= self.low) and (self.high is None or u <= self.high)


def mean_at(data: ProfileData, log_u: float, nuis: Nuisance) -> tuple[float, np.ndarray, np.ndarray]:
    """(log-likelihood, mu, f) at u and the nuisances, with each machine's c_m at its profile value."""
    theta, lam, log_s = nuis
    W = data.attraction(theta, log_s)
    u = np.exp(log_u)
    f = W / (u * data.R + W)
    if data.control is not None:
        f = f * np.maximum(1.0 + lam * data.control_excess, CONTROL_FLOOR)
    c = data.machine_demand / np.maximum(np.bincount(data.m, weights=f, minlength=data.n_m), 1e-300)
    mu = c[data.m] * f
    return float(np.sum(data.positive_demand * np.log(mu[data.positive])) - np.sum(mu)), mu, f


def _derivatives(data: ProfileData, log_u: float, nuis: Nuisance) -> np.ndarray:
    """d log mu / d (log u, then each free nuisance) of every machine-day, c_m held."""
    theta, lam, log_s = nuis
    W = data.attraction(theta, log_s)
    u = np.exp(log_u)
    share = u * data.R / (u * data.R + W)  # d log f / d log W
    cols = [-share]
    free_theta, free_lam, free_s = data.free
    if free_theta:
        d_log_w = data.log_ratio
        if data.level is not None:  # s moves with theta so that the level is held
            d_log_w = d_log_w - data.log_ratio_mean
        cols.append(share * d_log_w)
    if free_lam:
        assert data.control is not None
        h = 1.0 + lam * data.control_excess
        cols.append(np.where(h > CONTROL_FLOOR, data.control_excess / np.maximum(h, CONTROL_FLOOR), 0.0))
    if free_s:
        cols.append(share)
    return np.column_stack(cols)


def _pack(data: ProfileData, nuis: Nuisance) -> np.ndarray:
    return np.array([v for v, f in zip(nuis, data.free, strict=True) if f])


def _unpack(data: ProfileData, x: np.ndarray, base: Nuisance = NEUTRAL) -> Nuisance:
    it = iter(x.tolist())
    theta, lam, log_s = (next(it) if f else b for f, b in zip(data.free, base, strict=True))
    return float(theta), float(lam), float(log_s)


def _box(data: ProfileData) -> list[tuple[float, float]]:
    log_level = (float(np.log(LEVEL_BOUNDS[0])), float(np.log(LEVEL_BOUNDS[1])))
    return [b for b, f in zip((THETA_BOUNDS, LAMBDA_BOUNDS, log_level), data.free, strict=True) if f]


def best_nuisance(data: ProfileData, log_u: float, start: Nuisance) -> tuple[float, Nuisance]:
    """(log-likelihood, nuisances) maximised over the free nuisances at u."""
    if not any(data.free):
        return mean_at(data, log_u, NEUTRAL)[0], NEUTRAL
    box = _box(data)
    x0 = np.clip(_pack(data, start), [b[0] for b in box], [b[1] for b in box])

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        nuis = _unpack(data, x)
        ll, mu, _ = mean_at(data, log_u, nuis)
        return -ll, -((data.D - mu) @ _derivatives(data, log_u, nuis))[1:]

    res = optimize.minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=box, options={"gtol": 1e-8})
    return -float(res.fun), _unpack(data, res.x)


def _joint(data: ProfileData, log_u0: float, bounds: tuple[float, float]) -> tuple[float, float, Nuisance]:
    """(log-likelihood, log u, nuisances) at the joint maximum, from log u0."""
    box = [bounds, *_box(data)]
    x0 = np.concatenate([[np.clip(log_u0, *bounds)], _pack(data, NEUTRAL)])
    x0 = np.clip(x0, [b[0] for b in box], [b[1] for b in box])

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        nuis = _unpack(data, x[1:])
        ll, mu, _ = mean_at(data, float(x[0]), nuis)
        return -ll, -((data.D - mu) @ _derivatives(data, float(x[0]), nuis))

    opts = {"gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000}
    res = optimize.minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=box, options=opts)
    return -float(res.fun), float(res.x[0]), _unpack(data, res.x[1:])


def _adjustment(data: ProfileData, log_u: float, nuis: Nuisance) -> float:
    """Sandwich (clustered by machine) over model-based variance of log u, c_m and the nuisances profiled out."""
    _, mu, _ = mean_at(data, log_u, nuis)
    X = _derivatives(data, log_u, nuis)
    tot = np.bincount(data.m, weights=mu, minlength=data.n_m)
    for j in range(X.shape[1]):  # c_m profiled: each column centred within its machine, weighted by mu
        mean_j = np.bincount(data.m, weights=mu * X[:, j], minlength=data.n_m) / np.maximum(tot, 1e-300)
        X[:, j] -= mean_j[data.m]
    info = (X * mu[:, None]).T @ X
    scores = np.column_stack(
        [np.bincount(data.m, weights=(data.D - mu) * X[:, j], minlength=data.n_m) for j in range(X.shape[1])]
    )
    try:
        inv = np.linalg.pinv(info)
    except np.linalg.LinAlgError:
        return float("inf")
    model = inv[0, 0]
    sandwich = float((inv @ (scores.T @ scores) @ inv)[0, 0])
    return max(sandwich / model, 1.0) if model > 0 else float("inf")


def _walk(
    data: ProfileData, log_hat: float, ll_hat: float, nuis: Nuisance, adjust: float, limit: float
) -> tuple[float | None, list[tuple[float, float]]]:
    """Where the adjusted statistic crosses CHI2_95 walking from the maximum toward `limit` (a log u bound).

    Steps of `WALK_STEP`, the crossing refined by Brent's method; None when the statistic stays below CHI2_95 up
    to the bound. Also returns the points visited.
    """
    step = WALK_STEP if limit > log_hat else -WALK_STEP
    seen: list[tuple[float, float]] = []
    start = nuis

    def stat(t: float) -> float:
        nonlocal start
        ll, start = best_nuisance(data, t, start)
        return max(2.0 * (ll_hat - ll), 0.0) / adjust

    prev, t = log_hat, log_hat
    while (limit - t) * step > 0:
        t = min(t + step, limit) if step > 0 else max(t + step, limit)
        value = stat(t)
        seen.append((float(np.exp(t)), value))
        if value > CHI2_95:
            at = optimize.brentq(lambda z: stat(z) - CHI2_95, min(prev, t), max(prev, t), xtol=1e-6)
            return float(np.exp(at)), seen
        prev = t
    return None, seen


def profile_u(data: ProfileData, bounds: tuple[float, float], u_start: float) -> UProfile:
    """Profile u over `bounds` (module docstring), starting the maximisation at `u_start`."""
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    ll_hat, log_hat, nuis = _joint(data, float(np.log(u_start)), (lo, hi))
    adjust = _adjustment(data, log_hat, nuis)
    low, below = _walk(data, log_hat, ll_hat, nuis, adjust, lo)
    high, above = _walk(data, log_hat, ll_hat, nuis, adjust, hi)
    if min(log_hat - lo, hi - log_hat) < 1e-3:
        identified, reason = False, f"the profile's maximum is at the search bound {tuple(bounds)}"
    elif low is None or high is None:
        side = "below" if low is None else "above"
        identified, reason = False, f"the data cannot reject u {side} the estimate as far as the search bounds"
    elif high / low > IDENTIFIED_SPAN:
        identified = False
        reason = f"the 95% interval spans a factor {high / low:.1f}, more than {IDENTIFIED_SPAN:g}"
    else:
        identified, reason = True, f"the 95% interval spans a factor {high / low:.2f}"
    points = tuple(sorted([*below, (float(np.exp(log_hat)), 0.0), *above]))
    return UProfile(float(np.exp(log_hat)), nuis, low, high, adjust, identified, reason, points)
