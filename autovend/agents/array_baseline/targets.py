"""Steps 5-6 for many machines at once: order-up-to levels of a machine's carried products, its service cycle.

`targets` is `autovend.agents.baseline.targets.machine_targets` for rows of (run, machine), `cycle` is
`visits.machine_cycle`, with the baseline's pure rules (`cycle_levels`' arithmetic, `newsvendor_z`,
`normal_loss`) on arrays of the carried products (the policy slots marked active, in catalog order).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr, ndtri

from autovend.agents.array_baseline.estimate import Est
from autovend.agents.array_baseline.level_kernel import needs, ratio_args, spoil_args
from autovend.agents.array_baseline.rows import shelf_targets
from autovend.agents.baseline.targets import normal_loss
from autovend.arrays.kernel import block_row_sums, nonzero

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def carried(est: Est, n: IntArray, m: IntArray) -> tuple[BoolArray, IntArray, IntArray]:
    """Rows' carried products: (mask, product (0 where none), place in catalog order)."""
    act, k, pos, _ = carried_order(est, n, m)
    return act, k, pos


def carried_order(est: Est, n: IntArray, m: IntArray) -> tuple[BoolArray, IntArray, IntArray, IntArray]:
    """`carried`, and each row's slots in catalog order (`list_order`)."""
    book = est.book
    act = book.active[n, m]
    pk = book.pk[n, m]
    k = np.where(act, pk, 0)
    pos, order = book.list_order(n, m)  # list_order(pk, act), kept by the book
    return act, k, pos, order


def levels(
    est: Est, n: IntArray, m: IntArray, k: IntArray, days: npt.ArrayLike, safety: BoolArray, act: BoolArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """`cycle_levels` of rows' carried products (`act`) over `days` (broadcast): (need, spoilage cap, rate).

    need and cap are worked out on the carried products only (0 elsewhere); the rate is every slot's.
    """
    st, cfg = est.st, est.cfg
    mu = est.slot_mu(n, m)  # the rows' slots are the carried products' (k), others masked out later
    days = np.asarray(days)
    lead = days.shape[:-2]  # (H,) for the cycle's horizons, else ()
    R, S = act.shape
    dd = np.broadcast_to(days, (*lead, R, S)).reshape(-1, R, S)  # a view: the horizons, then the rows' slots
    safety = np.asarray(safety)
    limit = np.zeros(act.shape)
    life = st.life.astype(np.float64)
    facing, share = float(cfg.facing_units), cfg.sell_through_share
    r_i, s_i, mean_h, var_h, arg = spoil_args(act, k, mu, est.r[n, m], life, dd, facing, share, safety.any(), limit)
    z = np.zeros((0, 0))
    if safety.any():
        table, row = est.margin_table()
        holding = cfg.shelf_holding_per_unit_day
        z = ndtri(ratio_args(ndtr(arg), r_i, s_i, k, dd, st.cost, table, row[n, m], holding))
    need = np.zeros((len(dd), R, S))
    needs(z, mean_h, var_h, r_i, s_i, np.broadcast_to(safety, (R,)), cfg.z_max, need)
    return need.reshape(*lead, R, S), limit, mu


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
    carried: tuple[BoolArray, IntArray, IntArray, IntArray] | None = None,
    mean_levels: tuple[FloatArray, FloatArray, FloatArray] | None = None,
) -> IntArray:
    """`machine_targets` of rows (run n, machine m) over their next `days` days, as (rows, S) over the slots.

    carried: the rows' `carried_order`, when known; mean_levels: their `levels` over these days without safety
    stock, when known (for `safety=False`).
    """
    act, k, pos, _ = carried_order(est, n, m) if carried is None else carried
    H = np.maximum(days, 1)[:, None]
    if mean_levels is not None and not safety:
        need, limit, mu = mean_levels
    else:
        need, limit, mu = levels(est, n, m, k, H, np.full(len(n), safety), act)
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
    act, k, pos, order = carried_order(est, n, m)
    live = act.any(axis=1)
    if cfg.cycle_rule == "fixed" or not live.any():
        return out
    n, m, act, k, pos, order = n[live], m[live], act[live], k[live], pos[live], order[live]
    rows = len(n)
    days = np.arange(1, top + 1)
    need, limit, mu = levels(est, n, m, k, days[:, None, None], np.ones(rows, dtype=bool), act)  # (H, R, S)
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
    # expected sales of the carried products only, in list order (the baseline's list)
    count = act.sum(axis=1)
    ro, j = nonzero(np.arange(act.shape[1])[None, :] < count[:, None])
    so = order[ro, j]
    r = est.r[n, m][ro]
    margin = np.maximum(est.margin(n[ro], m[ro], k[ro, so]), 0.0)
    mean = mu[ro, so] * days[:, None]  # (H, entries)
    sd = np.sqrt(mean + mean**2 / r)
    sold = mean - sd * normal_loss((stock[:, ro, so] - mean) / np.maximum(sd, 1e-9))
    row = (np.arange(H)[:, None] * rows + ro).ravel()
    total = block_row_sums(
        row, np.tile(j, H), (sold * margin).ravel(), np.tile(count, H), H * rows, presorted=True
    ).reshape(H, rows)
    value = (total - st.visit_fee) / days[:, None]
    best = np.full(rows, top, dtype=np.int64)
    best_value = np.full(rows, -np.inf)
    for h in range(H):  # the shorter cycle on a tie, as `best_cycle` goes through them
        better = value[h] > best_value + 1e-9
        best = np.where(better, h + 1, best)
        best_value = np.where(better, value[h], best_value)
    out[live] = best
    return out
