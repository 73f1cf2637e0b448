"""Step 3 for N runs: the baseline's demand estimates (`autovend.agents.baseline.estimate`), to the bit.

The baseline estimates every (machine, product) of the catalog; the steps after it read the rates of the
products a machine carries or holds, and the priors of the products a reviewed machine might take on. `Est`
holds what is per machine and per product, and gives the rate and prior of any (run, machine, product) on
demand, with the baseline's arithmetic in the baseline's order (its (M, K) sums are numpy's:
`block_row_sums` and sequential sums where numpy adds rows one after the other).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.book import Book
from autovend.agents.array_baseline.pool_kernel import machine_sums, pooled_sums
from autovend.agents.array_baseline.rate_kernel import day_rates, row_rates
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.estimate import MAX_DISPERSION, MIN_DISPERSION_DAYS
from autovend.agents.baseline.state import Static
from autovend.arrays.kernel import block_row_sums, dense_row_sums, nonzero
from autovend.sim.money import FEN_PER_CNY

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def price_fen(pct: npt.ArrayLike, ref_fen: npt.ArrayLike, band: tuple[float, float]) -> IntArray:
    """`autovend.agents.baseline.prices.price_fen` for arrays of multipliers (percent)."""
    ref = np.asarray(ref_fen, dtype=np.int64)
    return clip_fen(pct, ref, *band_fen(ref, band))


def band_fen(ref_fen: npt.ArrayLike, band: tuple[float, float]) -> tuple[IntArray, IntArray]:
    """The lowest and highest price in fen of each reference price (`price_fen`'s bounds)."""
    ref = np.asarray(ref_fen, dtype=np.int64)
    return np.ceil(ref * band[0] - 1e-9).astype(np.int64), np.floor(ref * band[1] + 1e-9).astype(np.int64)


def clip_fen(pct: npt.ArrayLike, ref_fen: IntArray, lo: IntArray, hi: IntArray) -> IntArray:
    """`price_fen` with its bounds (`band_fen`) given."""
    return np.clip((ref_fen * np.asarray(pct, dtype=np.int64) + 50) // 100, lo, hi)


@dataclass(eq=False)
class Est:
    """One day's estimates of N runs (what `Estimates` holds, per machine, and the parts of its (M, K) arrays)."""

    book: Book
    st: Static
    cfg: BaselineConfig
    base: FloatArray  # (N, M) units per exposure-day
    idx: FloatArray  # (N, K) relative index of each product
    f: FloatArray  # (N, sites, categories) site x category factor
    scale: FloatArray  # (N, M) attraction -> rate
    r: FloatArray  # (N, M) dispersion
    machine_rate: FloatArray  # (N, M)
    gp_per_unit: FloatArray  # (N, M)
    pct: IntArray  # (N, M) the incumbent multiplier of each machine's price group
    _slot_k: IntArray | None = None
    _slot_mu: FloatArray | None = None
    _carried_attr: tuple[IntArray, FloatArray] | None = None  # (N, M, S) the carried slots' products, their `attr`
    _margin: FloatArray | None = None  # (distinct multipliers, K) unit margins
    _pct_at: IntArray | None = None  # (N, M) each machine's row of `_margin`

    def prior_attr(self, n: IntArray, m: IntArray, k: IntArray) -> FloatArray:
        """The prior attraction of (run, machine, product) triples (flat gathers of base[n, m], idx[n, k], f)."""
        st = self.st
        M, K = self.base.shape[1], self.idx.shape[1]
        f = self.f.ravel()[(n * st.n_site + st.site[m]) * st.n_l1 + st.l1[k]]
        return self.base.ravel()[n * M + m] * self.idx.ravel()[n * K + k] * f

    def prior_rows(self, n: IntArray, m: IntArray) -> FloatArray:
        """(R, K) `prior` of rows' machines over the whole catalog (the same arithmetic, row-wise gathers)."""
        st = self.st
        attr = self.base[n, m][:, None] * self.idx[n] * self.f[n, st.site[m]][:, st.l1]
        return attr * self.scale[n, m][:, None]

    def margin_table(self) -> tuple[FloatArray, IntArray]:
        """The day's margins (distinct multipliers, K) and each machine's row of it (N, M): `margin`'s lookup."""
        none = np.zeros(0, dtype=np.int64)
        self.margin(none, none, none)  # the day's table
        assert self._margin is not None and self._pct_at is not None
        return self._margin, self._pct_at

    def margin_rows(self, n: IntArray, m: IntArray) -> FloatArray:
        """(R, K) `margin` of rows' machines over the whole catalog."""
        table, row = self.margin_table()
        return table[row[n, m]]

    def attr(self, n: IntArray, m: IntArray, k: IntArray) -> FloatArray:
        """Units per exposure-day of triples: the window's, shrunk to the prior."""
        book = self.book
        _, M, K = book.index.shape
        row = n * M + m  # flat gathers of index[n, m, k], wu[n, m, p] and we[n, m, p]
        p = book.index.ravel()[row * K + k].astype(np.int64)
        has = p >= 0
        at = row * book.ek.shape[2] + np.where(has, p, 0)
        units = np.where(has, book.wu.ravel()[at], 0).astype(np.float64)
        expo = np.where(has, book.we.ravel()[at], 0.0)
        n0 = self.cfg.prior_strength_days
        return (units + n0 * self.prior_attr(n, m, k)) / (expo + n0)

    def mu(self, n: IntArray, m: IntArray, k: IntArray) -> FloatArray:
        """Rates (units a day) of triples."""
        return self.attr(n, m, k) * self.scale[n, m]

    def slot_mu(self, n: IntArray, m: IntArray) -> FloatArray:
        """(R, S) rates of the products in rows' slots (0 for an empty slot); the day's values kept per slot."""
        book = self.book
        S = book.pk.shape[2]
        if self._slot_k is None:  # the slots as the day began, and their rates (compiled walks: `rate_kernel`)
            self._slot_k = book.pk.copy()
            self._slot_mu = np.empty(book.pk.shape)
            carried_k, carried_attr = self._carried_attr or (np.full(book.pk.shape, -1, dtype=np.int64), self._slot_mu)
            new = day_rates(book.pk, carried_k, carried_attr, self.scale, self._slot_mu)
            if len(new):  # products not carried when `_share_scale` ran: their own `attr`
                a, b, c = np.unravel_index(new, book.pk.shape)
                self._slot_mu.reshape(-1)[new] = self.attr(a, b, book.pk.reshape(-1)[new]) * self.scale[a, b]
        assert self._slot_mu is not None
        out = np.empty((len(n), S))
        moved = row_rates(n, m, book.pk, self._slot_k, self._slot_mu, out)
        if len(moved):  # products placed since: their own rates (a product's rate holds all day: kept)
            r, s = np.divmod(moved, S)
            k = book.pk[n[r], m[r], s]
            rate = self.mu(n[r], m[r], k)
            out[r, s] = rate
            self._slot_mu[n[r], m[r], s] = rate
            self._slot_k[n[r], m[r], s] = k
        return out

    def prior(self, n: IntArray, m: IntArray, k: IntArray) -> FloatArray:
        """What a product is expected to sell at a machine untried (units a day)."""
        return self.prior_attr(n, m, k) * self.scale[n, m]

    def margin(self, n: IntArray, m: IntArray, k: IntArray) -> FloatArray:
        """Unit margins (CNY) at the incumbent multiplier of the machine's price group.

        Looked up in a table of the day's multipliers x the catalog (`price_fen` of each, computed once a day).
        """
        if self._margin is None or self._pct_at is None:
            st = self.st
            values, at = np.unique(self.pct, return_inverse=True)
            kk = np.arange(len(st.ref_fen))[None, :]
            self._margin = price_fen(values[:, None], st.ref_fen[kk], st.band) / FEN_PER_CNY - st.cost[kk]
            self._pct_at = at.reshape(self.pct.shape)
        M, K = self._pct_at.shape[1], self._margin.shape[1]
        return self._margin.ravel()[self._pct_at.ravel()[n * M + m] * K + k]  # _margin[_pct_at[n, m], k], flat


class RowGain:
    """`prior_rows * margin_rows` of rows (n, m): what each catalog product would earn a day there untried.

    Worked out when first asked, then kept: the review and the clearance of the same visits both ask.
    """

    def __init__(self, est: Est, n: IntArray, m: IntArray) -> None:
        self.est, self.n, self.m = est, n, m
        self._value: FloatArray | None = None

    def __call__(self, rows: npt.NDArray[np.bool_] | None = None) -> FloatArray:
        """(R, K) the gains of every row, or of the rows `rows` marks."""
        if self._value is None:
            self._value = self.est.prior_rows(self.n, self.m) * self.est.margin_rows(self.n, self.m)
        return self._value if rows is None else self._value[rows]


def estimate(book: Book, st: Static, cfg: BaselineConfig) -> Est:
    """The day's estimates (see the module docstring and `autovend.agents.baseline.estimate.estimate`)."""
    N, M, P = book.ek.shape
    n, m, p, k = book.sorted_entries()  # run, machine, product: the (M, K) arrays' order
    row = book.entry_array("row", lambda: n * M + m)
    flat = book.entry_array(("flat", P), lambda: row * P + p)  # into the (N, M, P) arrays
    m_units, m_expo = np.zeros(N * M), np.zeros(N * M)  # np.bincount's sums of the window's units and exposure
    machine_sums(row, flat, book.wu.reshape(-1), book.we.reshape(-1), m_units, m_expo)
    m_units, m_expo = m_units.reshape(N, M), m_expo.reshape(N, M)
    fallback = cfg.prior_units_per_machine_day / max(cfg.starter_skus, 1)
    base = np.where(m_expo > 0, m_units / np.maximum(m_expo, 1e-9), fallback)
    idx, f = _pooled_index(book, st, cfg, n, m, k, flat, fallback)
    days = book.ring_stocked.sum(axis=0)
    machine_rate = np.where(days > 0, m_units / np.maximum(days, 1), cfg.prior_units_per_machine_day)
    pct = book.mult[:, book.price_group]
    est = Est(book, st, cfg, base, idx, f, np.ones((N, M)), _dispersion(book, cfg), machine_rate, np.zeros((N, M)), pct)
    carried = _carried_sorted(book, len(st.sku_ids))
    est.scale = _share_scale(est, machine_rate, carried)
    est.gp_per_unit = _gp_per_unit(book, est, m_units.astype(np.float64), carried)
    return est


def _carried_sorted(book: Book, K: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """(n, m, k, slot) of the carried products, by run, machine and product (the book's lists, in catalog order)."""
    N, M, S = book.pk.shape
    rows = np.arange(N * M)
    _, order = book.list_order(rows // M, rows % M)  # each row's carried slots first, by product
    r, j = nonzero(np.arange(S)[None, :] < book.active.sum(axis=2).reshape(-1, 1))
    s = order[r, j]
    n, m = np.divmod(r, M)
    return n, m, book.pk[n, m, s], s


def _pooled_index(
    book: Book, st: Static, cfg: BaselineConfig, n: IntArray, m: IntArray, k: IntArray, flat: IntArray, fallback: float
) -> tuple[FloatArray, FloatArray]:
    """`pooled_index`: the product index (N, K) and the site x category factor (N, sites, categories)."""
    N, M, _ = book.ek.shape
    K = len(st.sku_ids)
    cu, ce = book.cu.ravel()[flat], book.ce.ravel()[flat]
    row = book.entry_array("row", lambda: n * M + m)
    # np.sum over the catalog (the entries come by row, then product)
    ce_row = dense_row_sums(row, k, ce, K, N * M).reshape(N, M)
    # the sums over the entries (np.bincount's, in entry order: run, machine, product): compiled
    f_flat, adj_flat, ce_flat = pooled_sums(
        n, m, k, cu, ce, ce_row.ravel(), st.site, st.l1, st.n_site, st.n_l1, M, K, N, fallback, cfg.site_prior_days
    )
    f = f_flat.reshape(N, st.n_site, st.n_l1)
    adj_k, ce_k = adj_flat.reshape(N, K), ce_flat.reshape(N, K)
    l2 = (np.arange(N)[:, None] * st.n_l2 + st.l2[None, :]).ravel()  # products in catalog order
    sub_num = np.bincount(l2, weights=adj_k.ravel(), minlength=N * st.n_l2).reshape(N, st.n_l2)
    sub_den = np.bincount(l2, weights=ce_k.ravel(), minlength=N * st.n_l2).reshape(N, st.n_l2)
    sub = (sub_num + cfg.subcategory_prior_days) / (sub_den + cfg.subcategory_prior_days)
    ip = cfg.index_prior_days
    idx = (adj_k + ip * np.take(sub, st.l2, axis=1)) / (ce_k + ip)
    return np.ascontiguousarray(idx), f  # C order: the gathers read rows of it


def _share_scale(est: Est, machine_rate: FloatArray, nmk: tuple[IntArray, IntArray, IntArray, IntArray]) -> FloatArray:
    """`share_scale`: the carried products' rates add up to the machine's rate (nmk: `_carried_sorted`)."""
    book, st = est.book, est.st
    N, M, S = book.pk.shape
    K = len(st.sku_ids)
    n, m, k, s = nmk
    attr = est.attr(n, m, k)
    slot_k = np.full((N, M, S), -1, dtype=np.int64)
    slot_attr = np.zeros((N, M, S))
    slot_k[n, m, s], slot_attr[n, m, s] = k, attr
    est._carried_attr = slot_k, slot_attr  # `slot_mu` needs them again
    # np.where(...).sum(1)
    carried = block_row_sums(n * M + m, k, attr, np.full(N * M, K), N * M, presorted=True).reshape(N, M)
    denom = carried.copy()
    none = carried <= 0
    if none.any():  # a machine that carries nothing: the sum over the whole catalog
        rn, rm = nonzero(none)
        kk = np.tile(np.arange(K), len(rn))
        rr = np.repeat(np.arange(len(rn)), K)
        full = block_row_sums(rr, kk, est.attr(rn[rr], rm[rr], kk), np.full(len(rn), K), len(rn))
        denom[rn, rm] = np.maximum(full, 1e-9)
    return machine_rate / denom


def _dispersion(book: Book, cfg: BaselineConfig) -> FloatArray:
    """`machine_dispersion`: r of each machine from its daily totals over the stocked days of the window."""
    W, N, M = book.ring_stocked.shape
    stocked = book.ring_stocked.reshape(W, N * M).T  # (rows, ring slots): days in ring order
    totals = book.ring_machine_units.reshape(W, N * M).T.astype(np.float64)
    count = stocked.sum(axis=1)
    mean = np.where(stocked, totals, 0.0).sum(axis=1) / np.maximum(count, 1)  # whole numbers: exact
    pos = np.cumsum(stocked, axis=1) - 1
    r, c = nonzero(stocked)
    dev = totals[r, c] - mean[r]
    var = block_row_sums(r, pos[r, c], dev * dev, count, N * M, presorted=True) / np.maximum(count - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        fitted = np.clip(mean * mean / (var - mean), 1.0, MAX_DISPERSION)
    out = np.where((mean <= 0) | (var <= mean), MAX_DISPERSION, fitted)
    out = np.where(count < MIN_DISPERSION_DAYS, cfg.default_dispersion, out)
    return out.reshape(N, M)


def _gp_per_unit(
    book: Book, est: Est, m_units: FloatArray, nmk: tuple[IntArray, IntArray, IntArray, IntArray]
) -> FloatArray:
    """Each machine's gross profit per unit over the window; before it sells, the mean margin of its products."""
    N, M, S = book.pk.shape
    gp_window = book.gp_hist.sum(axis=0)  # ring slots one after the other, as the baseline sums them
    n, m, k, _ = nmk  # by machine, then product
    margin = est.margin(n, m, k)
    count = book.active.sum(axis=2).ravel()
    rows = n * M + m
    pos = np.zeros(len(n), dtype=np.int64)
    if len(n):  # each product's place among its machine's carried products, in catalog order
        first = np.r_[True, rows[1:] != rows[:-1]]
        i = np.arange(len(rows))
        pos = i - np.maximum.accumulate(np.where(first, i, 0))
    mean = block_row_sums(rows, pos, margin, count, N * M, presorted=True) / np.maximum(count, 1)
    fallback = np.where(count > 0, mean, 0.0).reshape(N, M)
    return np.where(m_units > 0, gp_window / np.maximum(m_units, 1), fallback)
