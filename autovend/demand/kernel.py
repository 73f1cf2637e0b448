"""The one demand kernel of eq. (2)-(3), used by the synthetic source, the validation replay and the sim.

Shapes: the last axis is always products (K); any leading axes (machines, days, seeds) broadcast.
Per-machine inputs (capacity, elasticity, U, xi) carry the leading shape without the product axis.

Eq. (2): w = b * F**eta * min(1, q/phi) * (p/p_ref)**(-eps) * E
Eq. (3): N ~ Poisson(xi * U*W/(U+W)), W = sum_k w; each attempt picks k with probability w_k/W.
By Poisson thinning, the demand for product k is Poisson(xi * U * w_k / (U + W)) independently, which
is what `product_rates` returns. Sales are min(demand, shelf stock); unmet demand is lost.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def fill_fraction(q: npt.ArrayLike, capacity: npt.ArrayLike) -> FloatArray:
    """F: units on the shelf over capacity, capped at 1."""
    q = np.asarray(q, dtype=float)
    return np.minimum(q.sum(axis=-1) / np.asarray(capacity, dtype=float), 1.0)


def attraction(
    b: npt.ArrayLike,
    q: npt.ArrayLike,
    capacity: npt.ArrayLike,
    *,
    eta: float,
    phi: float,
    price_ratio: npt.ArrayLike | None = None,
    elasticity: npt.ArrayLike | None = None,
    env: npt.ArrayLike | None = None,
    fill: npt.ArrayLike | None = None,
) -> FloatArray:
    """Eq. (2): the attraction w of every product on every shelf.

    b: base attraction (..., K); q: shelf units (..., K); capacity: (...); price_ratio p/p_ref (..., K)
    and elasticity (...) go together (None: reference prices); env: E (..., K) or None (neutral);
    fill: F (...) where the shelf's fill is known but not all its products are given (None: from q).
    Products with q = 0 have w = 0.
    """
    q = np.asarray(q, dtype=float)
    fill = (fill_fraction(q, capacity) if fill is None else np.asarray(fill, dtype=float)) ** eta
    w = np.asarray(b, dtype=float) * fill[..., None] * np.minimum(1.0, q / phi)
    if price_ratio is not None:
        if elasticity is None:
            raise ValueError("price_ratio needs the elasticity of each machine's site type")
        ratio = np.asarray(price_ratio, dtype=float)
        eps = np.broadcast_to(-np.asarray(elasticity, dtype=float)[..., None], np.broadcast(ratio, w).shape)
        factor = np.ones(eps.shape)
        moved = (ratio != 1.0) & (ratio > 0)  # 1 ** -e is 1 exactly: the power is taken only where prices moved
        np.power(np.broadcast_to(ratio, eps.shape), eps, out=factor, where=moved)
        w = w * factor
    if env is not None:
        w = w * np.asarray(env, dtype=float)
    return w


def purchase_rate(W: npt.ArrayLike, U: npt.ArrayLike, xi: npt.ArrayLike = 1.0) -> FloatArray:
    """Eq. (3): expected purchase attempts xi * U*W/(U+W) of a machine-day (0 where W = 0)."""
    W = np.asarray(W, dtype=float)
    U = np.asarray(U, dtype=float)
    denom = U + W
    return np.asarray(xi, dtype=float) * np.divide(
        U * W, denom, out=np.zeros(np.broadcast(U, W).shape), where=denom > 0
    )


def product_rates(w: npt.ArrayLike, U: npt.ArrayLike, xi: npt.ArrayLike = 1.0) -> FloatArray:
    """Expected demand of each product: xi * U * w_k / (U + W)."""
    w = np.asarray(w, dtype=float)
    W = w.sum(axis=-1)
    U = np.asarray(U, dtype=float)
    scale = np.asarray(xi, dtype=float) * np.divide(U, U + W, out=np.zeros(np.broadcast(U, W).shape), where=(U + W) > 0)
    return w * scale[..., None]


def sample_demand(rng: np.random.Generator, rates: npt.ArrayLike) -> IntArray:
    """Poisson demand draws for given rates (fast path for replay and the synthetic source)."""
    return rng.poisson(np.asarray(rates, dtype=float)).astype(np.int64)


def demand_from_uniforms(uniforms: npt.ArrayLike, rates: npt.ArrayLike) -> IntArray:
    """Poisson demand by inverse CDF of given uniforms (common random numbers for the simulator).

    A product's draw depends only on its own uniform and rate, so the same machine-day gives the same
    demand for a product whatever else is on the shelf, if its rate is the same. The result is the
    exact quantile, the smallest n with P(N <= n) >= u: a Cornish-Fisher guess is corrected step by
    step against the Poisson CDF until it is exact.
    """
    from scipy import special  # here, not at import: loading a world stays free of scipy (about 0.2 s)

    u = np.asarray(uniforms, dtype=float)
    lam = np.asarray(rates, dtype=float)
    out = np.zeros(np.broadcast(u, lam).shape, dtype=np.int64)
    pos = lam > 0
    if not np.any(pos):
        return out
    u_b = np.broadcast_to(u, out.shape)[pos]
    lam_b = np.broadcast_to(lam, out.shape)[pos]
    z = special.ndtri(np.clip(u_b, 1e-300, 1.0 - 1e-16))
    n = np.maximum(np.floor(lam_b + np.sqrt(lam_b) * z + (z * z - 1.0) / 6.0), 0.0)
    # each draw moves on its own, so only the draws not yet settled are stepped (the guess settles most at once)
    active = np.arange(len(n))
    for _ in range(200):
        na, la, ua = n[active], lam_b[active], u_b[active]
        up = special.pdtr(na, la) < ua  # the quantile is above n
        rest = ~up
        down = np.zeros_like(up)  # ... or at most n - 1 (never both: P(N <= n-1) <= P(N <= n))
        check = rest & (na > 0)
        down[check] = special.pdtr(na[check] - 1, la[check]) >= ua[check]
        moving = up | down
        if not moving.any():
            break
        active = active[moving]
        n[active] += up[moving].astype(np.float64) - down[moving]
    out[pos] = n.astype(np.int64)
    return out


def sales_from_demand(demand: npt.ArrayLike, q: npt.ArrayLike) -> IntArray:
    """Sales are the minimum of demand and shelf stock."""
    return np.minimum(np.asarray(demand), np.asarray(q)).astype(np.int64)


def reference_shelf(b: npt.ArrayLike, capacity: int, phi: float) -> tuple[IntArray, FloatArray]:
    """The reference shelf: products sorted by b (descending), phi units each until capacity is full.

    Returns (q_ref, R): shelf units (..., K) and R = sum of the reference shelf's attraction at F = 1,
    reference prices and neutral environment (the last product may get a partial facing).
    """
    b = np.asarray(b, dtype=float)
    per = int(np.ceil(phi))
    order = np.argsort(-b, axis=-1, kind="stable")
    ranks = np.argsort(order, axis=-1, kind="stable")  # rank of each product by b
    cum_before = ranks * per
    q_ref = np.clip(capacity - cum_before, 0, per)
    q_ref = np.where(b > 0, q_ref, 0).astype(np.int64)
    R = np.sum(b * np.minimum(1.0, q_ref / phi), axis=-1)
    return q_ref, R
