"""Step 4 for N runs: the crossover price trials of `autovend.agents.baseline.prices`, every price group at once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.book import Book
from autovend.agents.baseline.config import BaselineConfig
from autovend.arrays.kernel import block_row_sums

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _effect(book: Book) -> tuple[FloatArray, BoolArray]:
    """`crossover_effect` of every (run, price group): the mean log ratio and whether any machine counts."""
    N, M, _ = book.gp_sum.shape
    G = book.mult.shape[1]
    gp, n = book.gp_sum, book.gp_n.astype(np.float64)
    ok = (n > 0).all(axis=2)
    mean = np.divide(gp, n, out=np.zeros_like(gp), where=n > 0)
    ok &= (mean > 0).all(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(mean[:, :, 1] / mean[:, :, 0])
    rows = np.arange(N)[:, None] * G + book.price_group[None, :]  # (N, M) -> the row of each machine's group
    r, m = np.nonzero(ok)
    row = rows[r, m]
    count = np.zeros(N * G, dtype=np.int64)
    np.add.at(count, row, 1)
    # a machine's place among its group's counted machines
    key = row * M + m
    order = np.argsort(key, kind="stable")
    first = np.r_[True, row[order][1:] != row[order][:-1]] if len(order) else np.zeros(0, dtype=bool)
    i = np.arange(len(order))
    place = np.empty(len(order), dtype=np.int64)
    place[order] = i - np.maximum.accumulate(np.where(first, i, 0)) if len(order) else i
    total = block_row_sums(row, place, ratio[r, m], count, N * G)
    effect = total / np.maximum(count, 1)
    return effect.reshape(N, G), (count > 0).reshape(N, G)


def _turn(book: Book, mask: BoolArray, d: int, hold_days: int) -> None:
    """A trial direction failed where `mask`: turn around; after two failures in a row, hold a while."""
    book.direction = np.where(mask, -book.direction, book.direction)
    book.fails = book.fails + mask
    two = mask & (book.fails >= 2)
    book.fails = np.where(two, 0, book.fails)
    book.hold_until = np.where(two, d + hold_days, book.hold_until)


def update_trials(book: Book, cfg: BaselineConfig, d: int) -> None:
    """Book yesterday's gross profit to its arm; settle finished trials; start new ones (`update_trials`)."""
    W = cfg.window_days
    if d > 1:
        slot = (d - 1) % W
        arm = book.arm_hist[slot].astype(np.int64)
        gp = book.gp_hist[slot]
        n, m = np.nonzero(arm >= 0)
        book.gp_sum[n, m, arm[n, m]] += gp[n, m]
        book.gp_n[n, m, arm[n, m]] += 1
    ready = np.asarray((book.first_visit > 0).all(axis=1))[:, None] & (d >= cfg.trial_start_day)
    due = (book.trial_start > 0) & (d - book.trial_start >= cfg.trial_days)
    if due.any():
        effect, counted = _effect(book)
        kept = due & counted & (effect > np.log1p(cfg.min_gain))
        book.mult = np.where(kept, book.cand, book.mult)
        book.fails = np.where(kept, 0, book.fails)
        _turn(book, due & ~kept, d, cfg.hold_days)
        book.trial_start = np.where(due, 0, book.trial_start)
    start = (book.trial_start == 0) & ready & (d >= book.hold_until)
    if start.any():
        _start(book, cfg, d, start)


def _start(book: Book, cfg: BaselineConfig, d: int, start: BoolArray) -> None:
    """`_start` where `start`: a candidate one step from the incumbent, unless none is in bounds or it must hold."""
    lo, hi = (round(x * 100) for x in cfg.multiplier_bounds)
    step = round(cfg.price_step * 100)
    cand = np.full(book.mult.shape, -1, dtype=np.int64)
    looking = start.copy()
    for _ in range(2):  # `next_candidate`: the other side when a step leaves the bounds
        c = book.mult + book.direction * step
        found = looking & (c >= lo) & (c <= hi)
        cand = np.where(found, c, cand)
        looking &= ~found
        _turn(book, looking, d, cfg.hold_days)
    go = start & (cand >= 0) & (d >= book.hold_until)
    if not go.any():
        return
    book.cand = np.where(go, cand, book.cand)
    book.trial_start = np.where(go, d, book.trial_start)
    members = go[:, book.price_group]  # (N, M)
    book.gp_sum[members] = 0.0
    book.gp_n[members] = 0


def arms_today(book: Book, cfg: BaselineConfig, d: int) -> IntArray:
    """(N, M) today's multiplier (percent) of each machine: its group's incumbent, or the candidate on its arm."""
    start = book.trial_start[:, book.price_group]
    half = (d - start) // (cfg.trial_days // 2)
    arm = np.where(start > 0, (book.half[None, :] + half) % 2, -1).astype(np.int8)
    book.arm_hist[d % cfg.window_days] = arm
    return np.where(arm == 1, book.cand[:, book.price_group], book.mult[:, book.price_group])
