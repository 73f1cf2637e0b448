"""64-bit hashes of many strings at once, in numpy: the check's keys for order ids compared across files.

pandas hashes text one Python object at a time (`pd.util.hash_array` on an object array: about 0.8 us a string,
with the objects made first); at operator scale that was half of a partition file's scan. Here the strings' UTF-8
bytes are taken from one Arrow buffer and read eight at a time as little-endian words, each word mixed into the
hash by splitmix64's finaliser (a bijection of 64-bit words) for all strings at once: the length of the longest
string in numpy passes, whatever their number.

Each seed gives its own hash of a string, which depends on its bytes alone: the same on any machine and in any
process (no per-process salt), so values hashed in different files or on different workers can be compared. The
hashes are not cryptographic: two strings meet under every seed of `SEEDS` with probability about 2^-64 per seed
for strings that are not built to collide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

SEEDS = (0x243F6A8885A308D3, 0x13198A2E03707344)  # the check's two hashes of an order id (128 bits together)
_LENGTH = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)  # the word's r bytes


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place (uint64 arithmetic wraps)."""
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


def _arrow(values: Any) -> pa.Array:
    if isinstance(values, (pd.Index, pd.Series)):
        values = values.array  # Arrow-backed text passes its buffers on without a copy
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.large_string())


def text_hashes(values: Any, seeds: Sequence[int] = SEEDS) -> np.ndarray:
    """An (n, len(seeds)) uint64 array: each string's hash under each seed.

    `values`: strings without missing values (a sequence, an object array, a pandas Index or Series, an Arrow array).
    """
    arr = _arrow(values)
    if arr.null_count:
        raise ValueError("text_hashes takes strings without missing values")
    n = len(arr)
    out = np.empty((n, len(seeds)), dtype=np.uint64)
    if n == 0:
        return out
    offsets = np.frombuffer(arr.buffers()[1], dtype="<i8")[arr.offset : arr.offset + n + 1]
    data = arr.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    padded = np.zeros(len(raw) + 8, dtype=np.uint8)  # every word read starts before the end: 8 more bytes to read
    padded[: len(raw)] = raw
    # the little-endian 64-bit word starting at each byte (a view: consecutive words overlap by 7 bytes)
    words = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    start, length = offsets[:-1], np.diff(offsets)
    hashes = [np.uint64(seed) ^ (length.astype(np.uint64) * _LENGTH) for seed in seeds]
    for w in range(int(-(-length.max() // 8))):  # a string of L bytes mixes in its ceil(L / 8) words, no more
        live = np.flatnonzero(length > 8 * w)
        left = np.minimum(length[live] - 8 * w, 8)
        word = words[start[live] + 8 * w] & _MASKS[left]
        for h in hashes:
            h[live] = _mix(h[live] ^ word)
    for j, h in enumerate(hashes):
        out[:, j] = _mix(h)
    return out
