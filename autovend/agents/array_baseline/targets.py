"""Steps 5-6 for many machines at once: order-up-to levels of a machine's carried products, its service cycle.

`targets` is `autovend.agents.baseline.targets.machine_targets` for rows of (run, machine), `cycle` is
`visits.machine_cycle`, with the baseline's pure rules (`cycle_levels`' arithmetic, `newsvendor_z`,
`normal_loss`) on arrays of the carried products (the policy slots marked active, in catalog order).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.estimate import Est
from autovend.agents.array_baseline.rows import list_pos, list_sums, shelf_targets
from autovend.agents.baseline.targets import newsvendor_z, normal_loss, unsold_probability

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def carried(est: Est, n: IntArray, m: IntArray) -> tuple[BoolArray, IntArray, IntArray]:
    """Rows' carried products: (mask, product (0 where none), place in catalog order)."""
    book = est.book
    act = book.active[n, m]
    k = np.where(act, book.pk[n, m], 0)
    return act, k, list_pos(book.pk[n, m], act)


def levels(
    est: Est, n: IntArray, m: IntArray, k: IntArray, days: npt.ArrayLike, safety: BoolArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """`cycle_levels` of rows' products over `days` (broadcast): (need, spoilage cap, rate)."""
    st, cfg = est.st, est.cfg
    nn, mm = n[:, None], m[:, None]
    mu = est.slot_mu(n, m)  # the rows' slots are the carried products' (k), others masked out later
    r = est.r[n, m][:, None]
    life = st.life[k].astype(float)
    days = np.asarray(days)
    mean_h = mu * days
    var_h = mean_h + mean_h**2 / r
    mean_life = mu * life
    var_life = mean_life + mean_life**2 / r
    stock0 = np.maximum(cfg.facing_units, mean_h)
    p_spoil = unsold_probability(stock0, mean_life, var_life)
    co = cfg.shelf_holding_per_unit_day * days + p_spoil * st.cost[k]
    z = np.where(np.asarray(safety)[:, None], newsvendor_z(est.margin(nn, mm, k), co, cfg.z_max), 0.0)
    need = mean_h + z * np.sqrt(var_h)
    limit = np.floor(cfg.sell_through_share * mean_life)
    return need, limit, mu


def default_room(est: Est, n: IntArray, m: IntArray) -> IntArray:
    """The capacity less the units of products on the shelf that are not carried."""
    book = est.book
    other = (book.pk[n, m] >= 0) & ~book.active[n, m]
    return est.st.capacity[m] - np.where(other, book.shelf[n, m], 0).sum(axis=1)


def targets(
    est: Est,
    n: IntArray,
    m: IntArray,
    days: IntArray,
    room: IntArray | None = None,
    fill: bool = True,
    safety: bool = True,
) -> IntArray:
    """`machine_targets` of rows (run n, machine m) over their next `days` days, as (rows, S) over the slots."""
    act, k, pos = carried(est, n, m)
    H = np.maximum(days, 1)[:, None]
    need, limit, mu = levels(est, n, m, k, H, np.full(len(n), safety))
    if room is None:
        room = default_room(est, n, m)
    rows_fill = np.full(len(n), fill and est.cfg.fill_spare_room)
    return shelf_targets(need, mu, limit, act, pos, room, est.cfg.facing_units, rows_fill)


def cycle(est: Est, n: IntArray, m: IntArray) -> IntArray:
    """`machine_cycle` of rows: the service interval 1..max_cycle_days that earns most net of the visit fee."""
    cfg, st = est.cfg, est.st
    R = len(n)
    top = cfg.max_cycle_days
    out = np.full(R, top, dtype=np.int64)
    act, k, pos = carried(est, n, m)
    live = act.any(axis=1)
    if cfg.cycle_rule == "fixed" or not live.any():
        return out
    n, m, act, k, pos = n[live], m[live], act[live], k[live], pos[live]
    rows = len(n)
    days = np.arange(1, top + 1)
    need, limit, mu = levels(est, n, m, k, days[:, None, None], np.ones(rows, dtype=bool))  # (H, R, S)
    room = default_room(est, n, m)
    H = len(days)
    flat = lambda x: x.reshape(H * rows, -1)  # noqa: E731 - (H, R, S) -> (H * R, S)
    rep = lambda x: np.broadcast_to(x, (H, *x.shape)).reshape(H * rows, *x.shape[1:])  # noqa: E731
    stock = shelf_targets(
        flat(need),
        rep(mu),
        flat(np.broadcast_to(limit, need.shape)),
        rep(act),
        rep(pos),
        np.tile(room, H),
        cfg.facing_units,
        np.full(H * rows, cfg.fill_spare_room),
    ).reshape(H, rows, -1)
    r = est.r[n, m][None, :, None]
    margin = np.maximum(est.margin(n[:, None], m[:, None], k), 0.0)
    mean = mu[None] * days[:, None, None]
    sd = np.sqrt(mean + mean**2 / r)
    sold = mean - sd * normal_loss((stock - mean) / np.maximum(sd, 1e-9))
    total = list_sums(flat(sold * margin[None]), rep(act), rep(pos)).reshape(H, rows)
    value = (total - st.visit_fee) / days[:, None]
    best = np.full(rows, top, dtype=np.int64)
    best_value = np.full(rows, -np.inf)
    for h in range(H):  # the shorter cycle on a tie, as `best_cycle` goes through them
        better = value[h] > best_value + 1e-9
        best = np.where(better, h + 1, best)
        best_value = np.where(better, value[h], best_value)
    out[live] = best
    return out
