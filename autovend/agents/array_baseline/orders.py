"""Steps 2 and 7 for N runs: throwing away warehouse stock (`baseline.clean`) and ordering (`baseline.procurement`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.book import Book
from autovend.agents.array_baseline.estimate import Est
from autovend.agents.array_baseline.order_kernel import carried_sums
from autovend.agents.array_baseline.targets import targets
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.procurement import round_lots
from autovend.agents.baseline.state import Static
from autovend.agents.baseline.targets import newsvendor_z, unsold_probability
from autovend.arrays.kernel import block_row_sums, nonzero

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def carried_anywhere(book: Book, K: int) -> BoolArray:
    """(N, K) products some machine of the run carries."""
    return book.carriers > 0


def clean(book: Book, st: Static, cfg: BaselineConfig, d: int, wh: dict[str, IntArray]) -> IntArray:
    """(N, K) warehouse units to throw away today (`clean_warehouse`); `wh` is updated as the baseline's is."""
    K = len(st.sku_ids)
    carried = carried_anywhere(book, K)
    book.inactive_since[carried] = 0
    book.inactive_since[~carried & (book.inactive_since == 0)] = d
    idle = d - book.inactive_since >= cfg.dead_stock_days
    dead = ~carried & (book.inactive_since > 0) & idle & (wh["good"] > 0)
    qty = wh["expired"] + wh["expiring"]
    expires_first = (wh["next_expiry"] > 0) & (wh["next_expiry"] <= st.horizon)
    costly = expires_first | (st.rent * (st.horizon - d + 1) > st.cost)[None, :]
    qty = np.where(dead & costly, wh["units"], qty)
    wh["units"] = wh["units"] - qty
    gone = qty > 0
    wh["expired"] = np.where(gone, 0, wh["expired"])
    wh["expiring"] = np.where(gone, 0, wh["expiring"])
    wh["good"] = wh["units"].copy()
    return qty


def network_exposure(book: Book, K: int) -> FloatArray:
    """(N, K) exposure-days of each product over the network (`cum_expo.sum(axis=0)`: machine after machine)."""
    N, M, P = book.ek.shape
    n, m, p, k = book.sorted_entries()  # machine by machine: np.bincount adds them one after the other
    col = book.entry_array(("col", K), lambda: n * K + k)
    flat = book.entry_array(("flat", P), lambda: (n * M + m) * P + p)  # ce[n, m, p] as one flat gather
    return np.bincount(col, weights=book.ce.ravel()[flat], minlength=N * K).reshape(N, K).astype(np.float64)


def place_orders(est: Est, d: int, warehouse: IntArray, transit: IntArray, cash: FloatArray) -> IntArray:
    """(N, K) units to order today: the echelon order-up-to levels (`place_orders`)."""
    book, st, cfg = est.book, est.st, est.cfg
    N, M, S = book.pk.shape
    K = len(st.sku_ids)
    out = np.zeros((N, K), dtype=np.int64)
    remaining = st.horizon - d
    if remaining < st.lead_days:
        return out
    L = min(st.lead_days + cfg.lead_allowance_days, remaining)
    cover = min(cfg.order_cover_days, max(remaining - L, 0))
    nn, mm = (a.ravel() for a in np.meshgrid(np.arange(N), np.arange(M), indexing="ij"))
    level = targets(est, nn, mm, book.cycle[nn, mm]).reshape(N, M, S)
    margin_table, margin_row = est.margin_table()
    live, count, sums = carried_sums(
        book.active,  # run, machine, slot: the machines one after the other within a run
        book.pk,
        level,
        est.slot_mu(nn, mm).reshape(N, M, S),
        book.index,
        book.ce,
        float(cfg.min_trial_days),
        float(L),
        est.r,
        margin_table,
        margin_row,
        book.shelf,
    )
    # sums over the machines, one after the other (np.bincount's order); only the carried products (some machine of
    # the run carries them) are ordered: the rest is worked out on them
    kl = live % K
    shelf_target, mu_k, mu_plan, var_k, margin_sum, shelf_sum = sums
    margin_k = margin_sum / np.maximum(count, 1)
    mean_life = mu_k * st.life[kl]
    var_life = mean_life + mean_life**2 / cfg.default_dispersion
    p_spoil = unsold_probability(shelf_target + mu_k * (L + cover), mean_life, var_life)
    co = st.rent * (cover + cfg.max_cycle_days / 2.0) + p_spoil * st.cost[kl]
    z = newsvendor_z(margin_k, co, cfg.z_max)
    reorder = shelf_target + mu_plan * L + z * np.sqrt(var_k)
    up_to = np.minimum(reorder + mu_plan * cover, shelf_target + cfg.sell_through_share * mean_life)
    priority = np.zeros(N * K)
    priority[live] = mu_k * margin_k
    on_shelves = shelf_sum.astype(np.int64)
    position = (warehouse + transit).ravel()[live] + on_shelves
    qty = np.zeros(N * K, dtype=np.int64)
    qty[live] = round_lots(np.where(position < reorder, up_to - position, 0.0), cfg.order_lot)
    return _within_cash(qty.reshape(N, K), st.cost, priority.reshape(N, K), cash - cfg.cash_floor)


def _within_cash(qty: IntArray, cost: FloatArray, priority: FloatArray, budget: FloatArray) -> IntArray:
    """`within_cash`: all the order lines of a run if they fit its budget, else the highest-priority ones that do."""
    N, K = qty.shape
    n, k = nonzero(qty)
    value = qty[n, k] * cost[k]
    first = np.r_[True, n[1:] != n[:-1]] if len(n) else np.zeros(0, dtype=bool)
    i = np.arange(len(n))
    pos = i - np.maximum.accumulate(np.where(first, i, 0)) if len(n) else i
    total = block_row_sums(n, pos, value, np.bincount(n, minlength=N), N)  # np.sum of the lines, in product order
    short = total > budget
    if not short[n].any():
        return qty
    out = qty.copy()
    sel = short[n]
    ns, ks, vs, ps = n[sel], k[sel], value[sel], priority[n[sel], k[sel]]
    order = np.lexsort((ks, -ps, ns))
    ns, ks, vs = ns[order], ks[order], vs[order]
    running = _running(vs, np.r_[True, ns[1:] != ns[:-1]])
    keep = running <= np.maximum(budget[ns], 0.0)
    drop = ~keep
    out[ns[drop], ks[drop]] = 0
    return out


def _running(v: FloatArray, first: BoolArray) -> FloatArray:
    """Each run's running sum of `v` from its first entry (`np.cumsum` of that run alone, to the bit)."""
    out = np.empty_like(v)
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(v)]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):  # runs short of cash only
        out[a:b] = np.cumsum(v[a:b])
    return out
