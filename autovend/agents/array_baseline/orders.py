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
from autovend.arrays.kernel import as_int64, block_row_sums, nonzero
from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def clean(book: Book, st: Static, cfg: BaselineConfig, d: int, wh: dict[str, IntArray]) -> IntArray:
    """(N, K) warehouse units to throw away today (`clean_warehouse`); `wh` is updated as the baseline's is."""
    costly = np.asarray(st.rent * (st.horizon - d + 1) > st.cost)  # (K,) holding it to the end costs more
    qty, units, expired, expiring = (np.empty(book.carriers.shape, dtype=np.int64) for _ in range(4))
    good, old, soon, nxt, held = (as_int64(wh[key]) for key in ("good", "expired", "expiring", "next_expiry", "units"))
    _clean(book.carriers, book.inactive_since, d, cfg.dead_stock_days, st.horizon, costly, good, old, soon, nxt, held,
           qty, units, expired, expiring)  # fmt: skip
    wh["units"], wh["expired"], wh["expiring"], wh["good"] = units, expired, expiring, units.copy()
    return qty


@compiled(nogil=True, boundscheck=False)
def _clean(
    carriers: IntArray, inactive_since: IntArray, d: int, dead_days: int, horizon: int, costly: BoolArray,
    good: IntArray, expired: IntArray, expiring: IntArray, next_expiry: IntArray, units: IntArray, qty: IntArray,
    units_out: IntArray, expired_out: IntArray, expiring_out: IntArray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """`clean_warehouse` product by product: expired and soon-expiring units go, and all the units of dead stock.

    Dead stock: carried nowhere for `dead_days`, with units expiring in the horizon or costlier to hold than
    they cost.
    """
    N, K = carriers.shape
    for n in range(N):
        for k in range(K):
            carried = carriers[n, k] > 0
            if carried:
                inactive_since[n, k] = 0
            elif inactive_since[n, k] == 0:
                inactive_since[n, k] = d
            since = inactive_since[n, k]
            dead = not carried and since > 0 and d - since >= dead_days and good[n, k] > 0
            q = expired[n, k] + expiring[n, k]
            first = next_expiry[n, k] > 0 and next_expiry[n, k] <= horizon
            if dead and (first or costly[k]):
                q = units[n, k]
            qty[n, k] = q
            units_out[n, k] = units[n, k] - q
            expired_out[n, k] = 0 if q > 0 else expired[n, k]
            expiring_out[n, k] = 0 if q > 0 else expiring[n, k]


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
