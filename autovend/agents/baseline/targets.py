"""Step 6, targets: newsvendor order-up-to levels of the shelves.

Per (machine, product): S = mu * H + z * sd_H with H the days to the next visit and z from the
newsvendor critical ratio cu / (cu + co): cu = unit margin at the machine's price, co = holding (no
rent on shelves) plus the cost times the probability that the marginal unit expires before it
sells. S is at least the facing depth, capped by what sells within its shelf life, and the
machine's capacity is shared out in proportion to demand (a fuller machine sells more, and shelf
space costs nothing) unless `fill_spare_room` is off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr, ndtri

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.state import FloatArray, IntArray, Memory

if TYPE_CHECKING:
    from autovend.agents.baseline.estimate import Estimates

SHARE_ROUNDS = 3  # passes that share spare room among products still below their cap

# ------------------------------------------------------------------------------------------------ pure rules


def newsvendor_z(cu: npt.ArrayLike, co: npt.ArrayLike, z_max: float) -> FloatArray:
    """Safety factor z = Phi^-1(cu / (cu + co)), clipped to [0, z_max]; 0 where the margin cu <= 0."""
    cu = np.asarray(cu, dtype=float)
    co = np.maximum(np.asarray(co, dtype=float), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(cu > 0, cu / (cu + co), 0.5)
    z = ndtri(np.clip(ratio, 0.5, 1.0))
    return np.clip(z, 0.0, z_max)


def unsold_probability(stock: npt.ArrayLike, mean: npt.ArrayLike, var: npt.ArrayLike) -> FloatArray:
    """P(demand < stock) under a normal approximation: the chance that the stock-th unit is still unsold."""
    stock, mean, var = (np.asarray(x, dtype=float) for x in (stock, mean, var))
    sd = np.sqrt(np.maximum(var, 1e-9))
    return ndtr((stock - 0.5 - mean) / sd)


def normal_loss(z: npt.ArrayLike) -> FloatArray:
    """Standard normal loss function E[(Z - z)^+] = pdf(z) - z (1 - Phi(z))."""
    z = np.asarray(z, dtype=float)
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi) - z * ndtr(-z)


def cycle_levels(
    mu: FloatArray,
    r: float,
    life: FloatArray,
    cost: FloatArray,
    margin: FloatArray,
    days: int,
    cfg: BaselineConfig,
    safety: bool = True,
) -> tuple[FloatArray, FloatArray]:
    """Newsvendor need mu * H + z * sd_H over `days` = H of each product, and its spoilage cap.

    Demand over H days has mean mu * H and variance mean + mean^2 / r (negative binomial). The
    overage cost co is shelf holding for H days plus the cost times the chance that the marginal unit
    (at least a facing) is unsold within its shelf `life`; the underage cost is the `margin`. Without
    `safety`, z = 0 (the mean need). The cap is `sell_through_share` of the mean sales within `life`.
    """
    mean_h = mu * days
    var_h = mean_h + mean_h**2 / r
    mean_life = mu * life
    var_life = mean_life + mean_life**2 / r
    stock0 = np.maximum(cfg.facing_units, mean_h)
    p_spoil = unsold_probability(stock0, mean_life, var_life)
    co = cfg.shelf_holding_per_unit_day * days + p_spoil * cost
    z = newsvendor_z(margin, co, cfg.z_max) if safety else 0.0
    need = mean_h + z * np.sqrt(var_h)
    limit = np.floor(cfg.sell_through_share * mean_life)
    return need, limit


def shelf_targets(
    cycle_need: npt.ArrayLike,
    rate: npt.ArrayLike,
    limit: npt.ArrayLike,
    room: int,
    facing: int,
    fill: bool = True,
) -> IntArray:
    """Target units of each carried product of one machine, filling `room` units of capacity.

    Each product gets max(facing, ceil(cycle_need)), capped by its `limit` (spoilage guard). If the
    targets exceed the room, the part above the facing is scaled down (and, if even the facings do
    not fit, only the fastest products keep theirs); if they leave room over and `fill` is set, it is
    shared out in proportion to `rate` among products below their limit (a fuller machine sells more).
    """
    need = np.asarray(cycle_need, dtype=float)
    speed = np.maximum(np.asarray(rate, dtype=float), 0.0)
    cap = np.maximum(np.asarray(limit, dtype=float), facing).astype(np.int64)
    n = len(need)
    if n == 0 or room <= 0:
        return np.zeros(n, dtype=np.int64)
    order = np.lexsort((np.arange(n), -speed))  # fastest first, ties in given order
    if n * facing >= room:
        return _facings_only(order, room, facing)
    S = np.minimum(np.maximum(np.ceil(need - 1e-9), facing), cap).astype(np.int64)
    total = int(S.sum())
    if total > room:
        return _scale_above_facing(S, order, room, facing)
    return _share_spare(S, cap, speed, order, room - total if fill else 0)


def _facings_only(order: IntArray, room: int, facing: int) -> IntArray:
    """Not even the facings fit: the fastest products get a facing each, the next one what is left."""
    n = len(order)
    S = np.zeros(n, dtype=np.int64)
    keep = order[: room // facing]
    S[keep] = facing
    rest = room - len(keep) * facing
    if rest and len(keep) < n:
        S[order[len(keep)]] = rest
    return S


def _scale_above_facing(S: IntArray, order: IntArray, room: int, facing: int) -> IntArray:
    """Targets over the room: scale the part above the facings down to fit, whole units left to the fastest."""
    n = len(S)
    extra = (S - facing).astype(float)
    budget = room - n * facing
    add = np.floor(extra * budget / extra.sum()).astype(np.int64)
    S = facing + add
    left = room - int(S.sum())
    for i in order:  # whole units lost to flooring go to the fastest products
        if left <= 0:
            break
        if S[i] < facing + extra[i]:
            S[i] += 1
            left -= 1
    return S


def _share_spare(S: IntArray, cap: IntArray, rate: FloatArray, order: IntArray, spare: int) -> IntArray:
    """Share `spare` units by rate among products below their cap (then one by one, fastest first)."""
    for _ in range(SHARE_ROUNDS):
        if spare <= 0:
            break
        open_ = (cap > S) & (rate > 0)
        if not open_.any():
            break
        w = np.where(open_, rate, 0.0)
        add = np.minimum(np.floor(spare * w / w.sum()).astype(np.int64), cap - S)
        if add.sum() == 0:
            for i in order:
                if spare <= 0:
                    break
                if S[i] < cap[i] and rate[i] > 0:
                    S[i] += 1
                    spare -= 1
            break
        S += add
        spare -= int(add.sum())
    return S


def fit_within(need: npt.ArrayLike, free: int) -> IntArray:
    """Scale quantities down (largest remainders, ties to the first) so that they sum to at most `free`."""
    need = np.asarray(need, dtype=np.int64)
    total = int(need.sum())
    if total <= free:
        return need
    if free <= 0:
        return np.zeros_like(need)
    exact = need * (free / total)
    out = np.floor(exact).astype(np.int64)
    left = free - int(out.sum())
    for i in np.lexsort((np.arange(len(need)), -(exact - out))):
        if left <= 0:
            break
        if out[i] < need[i]:
            out[i] += 1
            left -= 1
    return out


# ------------------------------------------------------------------------------------------------ one machine


def machine_targets(
    mem: Memory,
    est: Estimates,
    m: int,
    horizon_days: int,
    room: int | None = None,
    fill: bool = True,
    safety: bool = True,
) -> IntArray:
    """Order-up-to levels of machine m's carried products (in product order of `active[m]`).

    `room`: capacity they may fill; by default the capacity less the units of dropped products still
    there. `fill`: share spare room out (never when `fill_spare_room` is off: the levels themselves are
    the targets, the paper's order-up-to rule); `safety`: add z * sd (False, with fill False: the mean needs).
    """
    s, st, cfg = mem.s, mem.st, mem.cfg
    ks = np.flatnonzero(s.active[m])
    if not len(ks):
        return np.zeros(0, dtype=np.int64)
    H = max(int(horizon_days), 1)
    mu = est.mu[m, ks]
    life = st.life[ks].astype(float)
    need, limit = cycle_levels(mu, est.r[m], life, st.cost[ks], est.margin[m, ks], H, cfg, safety)
    if room is None:
        room = int(st.capacity[m] - s.shelf[m, ~s.active[m]].sum())
    return shelf_targets(need, mu, limit, room, cfg.facing_units, fill and cfg.fill_spare_room)


def machine_targets_by_cycle(mem: Memory, est: Estimates, m: int, max_days: int) -> list[IntArray]:
    """`machine_targets(mem, est, m, H)` for H = 1 .. max_days (item H - 1), the levels of all H in one pass.

    The levels are elementwise, so each row equals the one computed for its H alone.
    """
    s, st, cfg = mem.s, mem.st, mem.cfg
    ks = np.flatnonzero(s.active[m])
    if not len(ks):
        return [np.zeros(0, dtype=np.int64) for _ in range(max_days)]
    days = np.arange(1, max_days + 1)[:, None]
    mu = est.mu[m, ks]
    life = st.life[ks].astype(float)
    need, limit = cycle_levels(mu, est.r[m], life, st.cost[ks], est.margin[m, ks], days, cfg)  # type: ignore[arg-type]
    room = int(st.capacity[m] - s.shelf[m, ~s.active[m]].sum())
    fill = cfg.fill_spare_room
    return [shelf_targets(need[i], mu, limit, room, cfg.facing_units, fill) for i in range(max_days)]


def shelf_need(mem: Memory, est: Estimates, m: int, horizon_days: int) -> IntArray:
    """Units a visit today would bring to machine m (targets minus shelf, within free capacity)."""
    s, st = mem.s, mem.st
    ks = np.flatnonzero(s.active[m])
    need = np.maximum(machine_targets(mem, est, m, horizon_days) - s.shelf[m, ks], 0)
    free = int(st.capacity[m] - s.shelf[m].sum())
    return fit_within(need, free)
