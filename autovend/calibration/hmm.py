"""Forward-backward for the availability chains of `availability`: three hidden states per machine-product-day.

Each chain is one machine-product pair over consecutive days. Its hidden state is ON (on the shelf and in stock),
OUT (on the assortment but sold out: short spells, ended by the next restock) or ABSENT (not on the assortment:
long spells, ended when the product is put on). Only ON sells: a day with a sale is ON for certain, and a day
without one has likelihood exp(-lambda) when ON (lambda the day's demand rate of the product) and 1 otherwise.
So a run of zero-sales days is evidence that the product was off the shelf only as far as its rate says it
should have sold (Montoya & Gonzalez 2019 model zero-sales runs in point-of-sale data the same way), and the
two off states differ only in how long their spells last, learned from the data through the transitions.

Chains are laid out pair after pair in flat arrays (`Chains`): chain c's day t is at `offset[c] + t`, chains
sorted by length, longest first, so the chains still running at step t are a prefix. The passes loop over the
steps and are vectorised over the chains (scaled forward-backward, Rabiner 1989). Transition matrices and initial
distributions are per group (a machine), gathered per chain. Everything is float64 and summed in a fixed order,
so the same inputs give the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

ON, OUT, ABSENT = 0, 1, 2
N_STATES = 3


@dataclass(frozen=True)
class Chains:
    """The chains' layout: `offset` (C,) where each chain starts in the flat arrays, `length` (C,) non-increasing."""

    offset: np.ndarray
    length: np.ndarray
    group: np.ndarray  # (C,) the group (machine) code of each chain

    @property
    def size(self) -> int:
        """Chain-days in all."""
        return int(self.length.sum())

    @cached_property
    def running(self) -> np.ndarray:
        """(steps,) how many chains are still running at each step (a prefix: lengths are sorted, longest first)."""
        steps = int(self.length[0]) if len(self.length) else 0
        return np.searchsorted(-self.length, -np.arange(steps), side="left")

    @cached_property
    def step_major(self) -> tuple[np.ndarray, np.ndarray]:
        """(order, start): the flat index of step t's c-th running chain is order[start[t] + c].

        Reading the inputs in this order once makes every step of the passes a contiguous slice.
        """
        n_run = self.running
        start = np.cumsum(n_run) - n_run
        t = np.repeat(np.arange(len(n_run)), n_run)
        c = np.arange(int(n_run.sum())) - start[t]
        return self.offset[c] + t, start


@dataclass(frozen=True)
class Posterior:
    """What one forward-backward pass gives, per chain-day and per group."""

    on: np.ndarray  # P(ON | all the chain's days)
    on_loo: np.ndarray  # P(ON | all the chain's days but that day): the day's own sales left out
    transitions: np.ndarray  # (groups, 3, 3) expected transition counts
    initial: np.ndarray  # (groups, 3) expected first states
    final: np.ndarray  # (chains, 3) each chain's state distribution on its last day, in chain order
    loglik: float  # log P(every chain's days without a sale, given the days with one), see `forward_backward`


def forward_backward(
    chains: Chains,
    sold: np.ndarray,
    rate: np.ndarray,
    transition: np.ndarray,
    initial: np.ndarray,
    n_groups: int,
) -> Posterior:
    """Posterior availability of every chain-day (module docstring).

    `sold` (chain-days,) whether the day had a sale; `rate` the day's demand rate when ON; `transition`
    (groups, 3, 3) row-stochastic; `initial` (groups, 3) the first day's state distribution. The emission of a
    day with a sale is taken as 1 for ON (its Poisson probability is the same factor in every path through
    the day), so `loglik` leaves out the sum of log Poisson(units; rate) over the days with a sale. The three
    states are held as three arrays (structure of arrays) and the 3 x 3 products written out, which is several
    times faster than a batched matrix product on arrays this narrow.
    """
    order, start = chains.step_major
    n_run = chains.running.tolist()
    n = len(order)
    sold_s = sold[order]
    e_on = np.where(sold_s, 1.0, np.exp(-np.maximum(rate[order], 0.0)))
    e_off = (~sold_s).astype(float)  # OUT and ABSENT emit alike
    group = chains.group
    T = [[transition[group, i, j] for j in range(N_STATES)] for i in range(N_STATES)]  # (chains,) each
    init = [initial[group, i] for i in range(N_STATES)]
    a = [np.empty(n) for _ in range(N_STATES)]  # scaled forward probabilities
    scale = np.empty(n)
    for t, c in enumerate(n_run):
        lo, hi = start[t], start[t] + c
        if t == 0:
            p = [init[j][:c] for j in range(N_STATES)]
        else:
            q = start[t - 1]
            prev = [a[i][q : q + c] for i in range(N_STATES)]
            p = [prev[0] * T[0][j][:c] + prev[1] * T[1][j][:c] + prev[2] * T[2][j][:c] for j in range(N_STATES)]
        x0, x1, x2 = p[0] * e_on[lo:hi], p[1] * e_off[lo:hi], p[2] * e_off[lo:hi]
        sc = x0 + x1 + x2
        scale[lo:hi] = sc
        a[0][lo:hi], a[1][lo:hi], a[2][lo:hi] = x0 / sc, x1 / sc, x2 / sc
    last = start[chains.length - 1] + np.arange(len(chains.length)) if n else np.zeros(0, np.int64)
    final = np.column_stack([a[i][last] for i in range(N_STATES)]) if n else np.zeros((0, N_STATES))
    on = np.empty(n)
    on_loo = np.empty(n)
    counts = [[np.zeros(len(group)) for _ in range(N_STATES)] for _ in range(N_STATES)]
    b_next: list[np.ndarray] = []
    first = [np.zeros(0) for _ in range(N_STATES)]
    for t in range(len(n_run) - 1, -1, -1):
        c, lo = n_run[t], start[t]
        hi = lo + c
        b = [np.ones(c) for _ in range(N_STATES)]
        cn = len(b_next[0]) if b_next else 0  # chains running at t + 1 (a prefix of those running at t)
        if cn:
            nx = start[t + 1]
            inv = 1.0 / scale[nx : nx + cn]
            eb = [e_on[nx : nx + cn] * b_next[0] * inv, e_off[nx : nx + cn] * b_next[1] * inv]
            eb.append(e_off[nx : nx + cn] * b_next[2] * inv)
            for i in range(N_STATES):
                terms = [T[i][j][:cn] * eb[j] for j in range(N_STATES)]
                b[i][:cn] = terms[0] + terms[1] + terms[2]
                ai = a[i][lo : lo + cn]
                for j in range(N_STATES):
                    counts[i][j][:cn] += ai * terms[j]
        g = [a[i][lo:hi] * b[i] for i in range(N_STATES)]
        on[lo:hi] = g[0] / (g[0] + g[1] + g[2])
        if t == 0:
            p = [init[j][:c] for j in range(N_STATES)]
            tot = g[0] + g[1] + g[2]
            first = [g[i] / tot for i in range(N_STATES)]
        else:
            q = start[t - 1]
            prev = [a[i][q : q + c] for i in range(N_STATES)]
            p = [prev[0] * T[0][j][:c] + prev[1] * T[1][j][:c] + prev[2] * T[2][j][:c] for j in range(N_STATES)]
        l0, l1, l2 = p[0] * b[0], p[1] * b[1], p[2] * b[2]
        on_loo[lo:hi] = l0 / (l0 + l1 + l2)
        b_next = b
    out_on, out_loo = np.empty(n), np.empty(n)
    out_on[order] = on
    out_loo[order] = on_loo
    transitions = np.zeros((n_groups, N_STATES, N_STATES))
    starts = np.zeros((n_groups, N_STATES))
    c0 = len(first[0])
    for i in range(N_STATES):
        starts[:, i] = np.bincount(group[:c0], weights=first[i], minlength=n_groups)
        for j in range(N_STATES):
            transitions[:, i, j] = np.bincount(group, weights=counts[i][j], minlength=n_groups)
    return Posterior(out_on, out_loo, transitions, starts, final, float(np.sum(np.log(scale))) if n else 0.0)
