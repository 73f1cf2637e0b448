"""Latent availability: which products were on a sales-only machine's shelf, estimated jointly with demand.

Without inventory records nobody wrote down what was on the shelf. The old sales rule (a product counts as
offered on the days it sold and across gaps of at most G days) makes the shelf a function of the demand it is
meant to explain: slow sellers are exposed only on the days they sell, so their popularity is inflated several
fold, and busy days "add" products. Here whether product k was on machine m's shelf on day d is a hidden state
(`hmm`: ON, OUT = sold out, ABSENT = off the assortment) estimated with the demand model by EM:

- E-step: for every pair (m, k) that sold at least once, a chain over the machine's days; on day d the product
  would sell Poisson(lambda) if ON, with lambda = s_{m,d} * v_{m,k,d}: v its attraction (omega * pi * gamma
  times its price and environment factors, eq. 2) and s_{m,d} the machine-day's demand per unit of attraction
  on the shelf (units sold / expected attraction on the shelf: it carries the day's shock). Forward-backward gives
  P(ON) for every day, and P(ON) with the day's own sales left out.
- M-step: the product split (`mm`: omega, pi, gamma) on every pair-day weighted by P(ON) (the expected
  complete-data likelihood of the Poisson model is the split's with each cell's attraction times P(ON)); the day
  scales; each machine's transition matrix and first-day distribution (its expected counts, with the pooled
  ones over all machines as a prior of `PRIOR_TRANSITIONS` transitions per state).

A run of zero-sales days thus counts against availability only as far as the fitted rate says the product should
have sold. The split starts from "on the shelf between its first and last sale". Pairs that never sold on a
machine are not seen at all: a product offered there and never bought leaves no trace, so the exposure of the
slowest products is understated (their popularity is an upper bound). What the chains cannot see either: the
shelf's fill and facings, which deplete between restocks (see `no_purchase.fit_depletion`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from autovend.calibration.choice import FACTOR_BLOCK, _environment_table, _factors, split_codes
from autovend.calibration.hmm import ABSENT, N_STATES, OUT, Chains, forward_backward
from autovend.calibration.mm import Layout, Params, SplitCells, SplitProblem, local
from autovend.calibration.panel import Panel
from autovend.demand.settings import DemandSettings

KEEP = 1e-4  # a pair-day with P(ON) at or below this is left out of the split's cells (its weight is negligible)
PRIOR_TRANSITIONS = 20.0  # pooled transitions per state added to each machine's counts
START_TRANSITION = np.array([[0.93, 0.06, 0.01], [0.30, 0.69, 0.01], [0.01, 0.0, 0.99]])  # ON, OUT, ABSENT
START_INITIAL = np.array([0.5, 0.05, 0.45])
SWEEPS_PER_ROUND = 3  # MM sweeps of the split per EM round (the calibration refits it to its own tolerance after)


@dataclass(frozen=True)
class PairDays:
    """Every day of every machine-product pair with a sale, pair after pair in (m, k, d) order."""

    m: np.ndarray
    k: np.ndarray
    d: np.ndarray
    md: np.ndarray  # machine-day code: `md_start[m] + d - first[m]`
    units: np.ndarray
    revenue: np.ndarray
    price: np.ndarray
    a0: np.ndarray  # price and environment factors of eq. (2) (facing 1: quantities are unknown)
    chains: Chains  # the pairs as chains for `forward_backward`
    chain_pair: np.ndarray  # (pairs,) the pair (in (m, k) order) of each chain
    pair_m: np.ndarray  # (pairs,) machine of each pair, pairs in (m, k) order
    pair_k: np.ndarray  # (pairs,) product of each pair
    md_m: np.ndarray  # machine of each machine-day
    md_d: np.ndarray  # day of each machine-day


@dataclass(frozen=True)
class Availability:
    """The estimate: P(ON) of every pair-day and how the EM went."""

    days: PairDays
    on: np.ndarray
    on_loo: np.ndarray
    final: np.ndarray  # (pairs, 3) each pair's state distribution on the panel's last day, pairs in (m, k) order
    transition: np.ndarray  # (machines, 3, 3)
    initial: np.ndarray  # (machines, 3)
    params: Params  # the split at the last M-step
    loglik: list[float]  # the chains' log-likelihood after each round
    rounds: int

    def on_after(self, days: int) -> np.ndarray:
        """(pairs, days) P(ON) on each of the `days` days after the panel's last, from the last day's state.

        The forecast of the chains: each pair's state on the last day carried forward by its machine's
        transition matrix, with no sale seen (what a forecast of the days after the records may know).
        """
        state = self.final.copy()
        T = self.transition[self.days.pair_m]
        out = np.empty((len(state), days))
        for t in range(days):
            state = np.einsum("pi,pij->pj", state, T)
            out[:, t] = state[:, 0]
        return out

    def cells(self) -> pd.DataFrame:
        """The panel cells of the estimate: the pair-days with P(ON) above `KEEP` (every sale is one)."""
        pd_ = self.days
        keep = (self.on > KEEP) | (pd_.units > 0)
        n = int(keep.sum())
        return pd.DataFrame(
            {
                "m": pd_.m[keep].astype(np.int32),
                "k": pd_.k[keep].astype(np.int32),
                "d": pd_.d[keep].astype(np.int32),
                "units": pd_.units[keep].astype(np.int32),
                "q": np.full(n, np.nan),
                "censored": np.zeros(n, bool),
                "known": np.zeros(n, bool),
                "revenue": pd_.revenue[keep],
                "price": pd_.price[keep],
                "avail": np.where(pd_.units[keep] > 0, 1.0, self.on[keep]),
                "avail_loo": self.on_loo[keep],
            }
        )


def pair_days(panel: Panel, settings: DemandSettings) -> PairDays:
    """Lay out every pair with a sale over its machine's days (from its first record to the panel's end)."""
    cells = panel.cells
    D = panel.n_days
    sold = cells[cells["units"].to_numpy() > 0]
    sm, sk, sd = (sold[c].to_numpy().astype(np.int64) for c in ("m", "k", "d"))
    pair_key = sm * panel.n_products + sk
    starts = np.flatnonzero(np.r_[True, pair_key[1:] != pair_key[:-1]])  # cells come in (m, k, d) order
    pm, pk = sm[starts], sk[starts]
    md_days = panel.machine_days
    first = np.full(panel.n_machines, D, dtype=np.int64)
    grouped = md_days.groupby("m")["d"].min()
    first[grouped.index.to_numpy()] = grouped.to_numpy()
    length = D - first[pm]
    offset = np.cumsum(length) - length
    n = int(length.sum())
    pair = np.repeat(np.arange(len(pm)), length)
    t = np.arange(n) - offset[pair]
    m, k, d = pm[pair], pk[pair], first[pm][pair] + t
    at = offset[np.repeat(np.arange(len(pm)), np.diff(np.r_[starts, len(sm)]))] + (sd - first[sm])
    units = np.zeros(n)
    units[at] = sold["units"].to_numpy()
    revenue = np.zeros(n)
    revenue[at] = sold["revenue"].to_numpy()
    price = _carried_price(units, revenue, pair, panel.products["ref_price"].to_numpy(dtype=float)[k])
    n_md_m = np.maximum(D - first, 0)
    md_start = np.cumsum(n_md_m) - n_md_m
    md = md_start[m] + d - first[m]
    env_table = _environment_table(panel, settings)
    a0 = np.empty(n)
    for lo in range(0, n, FACTOR_BLOCK):
        hi = min(lo + FACTOR_BLOCK, n)
        block = pd.DataFrame({"m": m[lo:hi], "k": k[lo:hi], "d": d[lo:hi], "q": np.nan, "price": price[lo:hi]})
        a0[lo:hi] = _factors(panel, settings, env_table, block)
    order = np.argsort(-length, kind="stable")  # longest chains first (`Chains`)
    chains = Chains(offset=offset[order], length=length[order], group=pm[order])
    md_m = np.repeat(np.arange(panel.n_machines), n_md_m)
    md_d = np.arange(int(n_md_m.sum())) - md_start[md_m] + first[md_m]
    return PairDays(m, k, d, md, units, revenue, price, a0, chains, order, pm, pk, md_m, md_d)


def _carried_price(units: np.ndarray, revenue: np.ndarray, pair: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """The price in force: the charged price on sale days, carried forward then backward within the pair."""
    n = len(units)
    idx = np.arange(n)
    charged = np.where(units > 0, revenue / np.where(units > 0, units, 1.0), np.nan)
    start = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]]) if n else np.zeros(0, np.int64)
    first = np.repeat(start, np.diff(np.r_[start, n]))
    last = np.repeat(np.r_[start[1:], n] - 1, np.diff(np.r_[start, n]))
    fwd = np.maximum.accumulate(np.where(np.isnan(charged), -1, idx)) if n else idx
    fwd = np.where(fwd >= first, fwd, -1)
    bwd = np.minimum.accumulate(np.where(np.isnan(charged), n, idx)[::-1])[::-1] if n else idx
    bwd = np.where(bwd <= last, bwd, -1)
    src = np.where(fwd >= 0, fwd, bwd)
    return np.where(src >= 0, charged[np.maximum(src, 0)], ref)


def _first_to_last(days: PairDays, n_products: int) -> np.ndarray:
    """The starting guess: ON from a pair's first sale to its last, off before and after."""
    n = len(days.units)
    if n == 0:
        return np.zeros(0)
    pair_key = days.m.astype(np.int64) * n_products + days.k
    start = np.flatnonzero(np.r_[True, pair_key[1:] != pair_key[:-1]])
    run = np.repeat(np.arange(len(start)), np.diff(np.r_[start, n]))
    idx = np.arange(n)
    last_sale = np.maximum.reduceat(np.where(days.units > 0, idx, -1), start)
    first_sale = np.minimum.reduceat(np.where(days.units > 0, idx, n), start)
    return ((idx >= first_sale[run]) & (idx <= last_sale[run])).astype(float)


def _m_step_transitions(counts: np.ndarray, initial: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each machine's transition matrix and first-day distribution from expected counts, the pooled ones as prior."""
    counts = counts.copy()
    counts[:, ABSENT, OUT] = 0.0  # a product put on the assortment comes in stock
    pooled = counts.sum(axis=0)
    prior = PRIOR_TRANSITIONS * pooled / np.maximum(pooled.sum(axis=1, keepdims=True), 1e-300)
    T = counts + prior[None]
    T /= np.maximum(T.sum(axis=2, keepdims=True), 1e-300)
    pooled0 = initial.sum(axis=0)
    init = initial + PRIOR_TRANSITIONS * pooled0 / max(float(pooled0.sum()), 1e-300)
    init /= np.maximum(init.sum(axis=1, keepdims=True), 1e-300)
    return T, init


def estimate_availability(panel: Panel, settings: DemandSettings, rounds: int, pseudo_units: float) -> Availability:
    """P(ON) of every pair-day of a sales-only panel, jointly with the product split (module docstring)."""
    days = pair_days(panel, settings)
    M = panel.n_machines
    sites = sorted(set(panel.machines["site_type"].to_numpy()))
    cats1 = sorted(panel.products["category_l1"].unique())
    cats2 = sorted(panel.products["category_l2"].unique())
    site_of_m = pd.Series(np.arange(len(sites)), index=sites).reindex(panel.machines["site_type"]).to_numpy(np.int64)
    g1_of_k = pd.Series(np.arange(len(cats1)), index=cats1).reindex(panel.products["category_l1"]).to_numpy(np.int64)
    g2_of_k = pd.Series(np.arange(len(cats2)), index=cats2).reindex(panel.products["category_l2"]).to_numpy(np.int64)
    pig, g1_of_g2 = split_codes(site_of_m[days.m], g1_of_k[days.k], g2_of_k[days.k], len(cats1), len(cats2))
    n_md = len(days.md_m)
    sold = days.units > 0
    y_md = np.bincount(days.md, weights=days.units, minlength=n_md)
    on = _first_to_last(days, panel.n_products)
    on_loo = on
    T = np.repeat(START_TRANSITION[None], M, axis=0)
    init = np.repeat(START_INITIAL[None], M, axis=0)
    params = Params(np.ones(panel.n_products), np.ones((len(sites), len(cats1))), np.ones(len(cats2)))
    history: list[float] = []
    final = np.zeros((len(days.pair_m), N_STATES))
    for _ in range(rounds):
        keep = (on > KEEP) | sold
        k = days.k[keep]
        pg = pig[keep]
        cells = SplitCells(days.md[keep], (pg // len(cats1)) * panel.n_products + k, k, pg, days.a0[keep] * on[keep],
                           days.units[keep], n_md, panel.n_products, len(sites) * len(cats1))  # fmt: skip
        layout = Layout(panel.n_products, g2_of_k, g1_of_k, g1_of_g2, len(sites))
        problem = SplitProblem(local(cells), layout, (len(sites), len(cats1)), pseudo_units, True)
        params = problem.pin(params)
        for _sweep in range(SWEEPS_PER_ROUND):  # a generalised EM: each round's M-step need only climb
            params = problem.sweep(params)
        del problem, cells
        v = params.omega[days.k] * params.pi.reshape(-1)[pig] * params.gamma[g2_of_k][days.k] * days.a0
        W = np.bincount(days.md, weights=v * on, minlength=n_md)
        s = np.divide(y_md, W, out=np.zeros(n_md), where=W > 0)
        rate = s[days.md] * v
        post = forward_backward(days.chains, sold, rate, T, init, M)
        on, on_loo = post.on, post.on_loo
        final = np.empty_like(post.final)
        final[days.chain_pair] = post.final
        T, init = _m_step_transitions(post.transitions, post.initial)
        lam, y = rate[sold], days.units[sold]
        history.append(post.loglik + float(np.sum(y * np.log(lam) - lam - special.gammaln(y + 1.0))))
    return Availability(days, on, on_loo, final, T, init, params, history, rounds)
