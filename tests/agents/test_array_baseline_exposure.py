"""`Book.record_exposure` (compiled walks, `exposure_kernel`) moves the window exactly as numpy's fancy operators did."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from autovend.agents.array_baseline.book import LEVELS32, LEVELS64, Book
from autovend.agents.baseline.config import BaselineConfig
from tests.agents.array_played import played_policy

FACING = BaselineConfig().facing_units  # the played policy's (its ring holds levels up to it)


def numpy_record_exposure(book: Book, day: int, W: int, facing: int) -> None:
    """The numpy form the kernels replaced: buffered `a[f] -= x` / `a[f] += x` over flat gathers."""
    j = day % W
    N, M, S = book.pk.shape
    K = book.index.shape[2]
    old_k, old_level = book.ring_k[j].reshape(-1), book.ring_level[j].reshape(-1)
    i = np.flatnonzero(old_k >= 0)
    if len(i):
        row = i // S
        p = book.index.reshape(-1)[row * K + old_k[i]].astype(np.int64)
        f = row * book.ek.shape[2] + p
        book.wu.reshape(-1)[f] -= book.ring_units[j].reshape(-1)[i]
        book.we.reshape(-1)[f] -= LEVELS32[facing][old_level[i]]
    level = np.where(book.pk >= 0, np.minimum(book.shelf, facing), 0).astype(np.int8)
    book.ring_k[j] = book.pk
    book.ring_level[j] = level
    book.ring_units[j] = 0
    book.ring_machine_units[j] = 0
    book.gp_hist[j] = 0.0
    book.ring_stocked[j] = (level > 0).any(axis=2)
    i = np.flatnonzero(level)
    if len(i):
        row = i // S
        n, m = np.divmod(row, M)
        p = book.entries(n, m, book.pk.reshape(-1)[i])
        f = row * book.ek.shape[2] + p
        lv = level.reshape(-1)[i]
        book.we.reshape(-1)[f] += LEVELS32[facing][lv]
        book.ce.reshape(-1)[f] += LEVELS64[facing][lv]


@pytest.fixture(scope="module")
def played():
    return played_policy(30)  # a full window: the ring's oldest day holds slots


def _same(a: Book, b: Book) -> None:
    names = ["index", "used", "ek", "cu", "ce", "wu", "we", "ring_k", "ring_level", "ring_units",
             "ring_machine_units", "ring_stocked", "gp_hist"]  # fmt: skip
    for name in names:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name  # to the bit (floats included)


def _both(book: Book, day: int, W: int) -> tuple[Book, Book]:
    want, got = copy.deepcopy(book), copy.deepcopy(book)
    numpy_record_exposure(want, day, W, FACING)
    got.record_exposure(day, W, FACING)
    return want, got


def test_a_day_of_exposure_is_the_numpy_forms(played):
    book = played.book
    W = book.ring_k.shape[0]
    assert (book.ring_k[31 % W] >= 0).sum() > 100 and (book.shelf > 0).sum() > 100  # both walks have work
    want, got = _both(book, 31, W)
    _same(want, got)
    assert not np.array_equal(want.we, book.we)  # the day moved the window


def test_new_products_get_entries_and_the_table_widens(played):
    book = copy.deepcopy(played.book)
    W = book.ring_k.shape[0]
    N, M, S = book.pk.shape
    P = book.ek.shape[2]
    unused = np.flatnonzero(book.index[0, 0] < 0)
    need = P - int(book.used[0, 0]) + 5  # more new products (with units) than the entry table has room for
    slots = np.arange(need + need // 4)
    assert len(slots) <= S and len(unused) >= len(slots)
    book.pk[0, 0, slots] = unused[: len(slots)]
    book.shelf[0, 0, slots] = np.where(slots % 5 == 4, 0, 1 + slots % 7)  # some at 0 units: no exposure, no entry
    want, got = _both(book, 31, W)
    _same(want, got)
    assert got.ek.shape[2] > P  # widened


def test_a_product_in_two_slots_keeps_numpys_last_write(played):
    book = copy.deepcopy(played.book)
    W = book.ring_k.shape[0]
    held = np.flatnonzero((book.pk[1, 2] >= 0) & (book.shelf[1, 2] > 0))
    spare = np.flatnonzero(book.pk[1, 2] < 0)
    book.pk[1, 2, spare[0]] = book.pk[1, 2, held[0]]  # the same product twice at one machine
    book.shelf[1, 2, spare[0]] = 1
    want, got = _both(book, 31, W)
    _same(want, got)


def test_a_window_slot_without_an_entry_reads_entry_minus_one_as_numpy_does(played):
    book = copy.deepcopy(played.book)
    W = book.ring_k.shape[0]
    j = 31 % W
    cells = np.flatnonzero((book.ring_k[j].reshape(-1) >= 0) & (book.ring_level[j].reshape(-1) == 0))
    cells = cells[book.ring_units[j].reshape(-1)[cells] == 0]
    assert len(cells)  # held slots with nothing on them that day
    S, K = book.pk.shape[2], book.index.shape[2]
    for cell in (int(cells[0]), int(cells[-1])):  # their products' entries forgotten: numpy's -1 gathers
        book.index.reshape(-1)[(cell // S) * K + book.ring_k[j].reshape(-1)[cell]] = -1
        book.ring_p[j].reshape(-1)[cell] = -1
    want, got = _both(book, 31, W)
    _same(want, got)


def test_the_kept_entries_are_the_index_and_reused_day_after_day(played):
    book = copy.deepcopy(played.book)
    W = book.ring_k.shape[0]
    want = copy.deepcopy(book)
    M = book.pk.shape[1]
    for day in range(31, 31 + W + 3):  # more than a window: every ring day read back
        m = day % M  # a product new at a machine each day, another one moved to a new slot
        unused = np.flatnonzero(want.index[0, m] < 0)
        held = np.flatnonzero(want.pk[0, m] >= 0)
        free = np.flatnonzero(want.pk[0, m] < 0)
        for b in (want, book):
            b.pk[0, m, free[0]], b.shelf[0, m, free[0]] = unused[0], 2
            b.pk[0, m, free[1]], b.shelf[0, m, free[1]] = b.pk[0, m, held[0]], 1
            b.pk[0, m, held[0]] = -1
        numpy_record_exposure(want, day, W, FACING)
        book.record_exposure(day, W, FACING)
        _same(want, book)
        j = day % W
        k, p = book.ring_k[j].reshape(-1), book.ring_p[j].reshape(-1).astype(np.int64)
        S, K = book.pk.shape[2], book.index.shape[2]
        known = p >= 0
        assert known.sum() > 0.9 * (k >= 0).sum()
        cell = np.flatnonzero(known)
        assert np.array_equal(p[cell], book.index.reshape(-1)[(cell // S) * K + k[cell]])


def test_a_one_day_window_reuses_no_entries_from_the_slot_it_is_overwriting(played):
    book = copy.deepcopy(played.book)
    want = copy.deepcopy(book)
    for day in (31, 32, 33):  # W = 1: the day before is the ring slot being replaced
        held = np.flatnonzero(want.pk[0, day % 5] >= 0)[0]
        unused = np.flatnonzero(want.index[0, day % 5] < 0)[0]
        for b in (want, book):  # a held slot takes a product new at the machine
            b.pk[0, day % 5, held], b.shelf[0, day % 5, held] = unused, 2
        numpy_record_exposure(want, day, 1, FACING)
        book.record_exposure(day, 1, FACING)
        _same(want, book)
