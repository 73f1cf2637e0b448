"""The day's demand uniforms of the stocked cells only: numpy's draws, to the bit, without drawing the rest.

The simulator draws each day a whole machine x product matrix of uniforms from the run's stream ("demand", day)
(`autovend.rng.stream`: numpy's SeedSequence, PCG64, `Generator.random`) and uses the stocked block; the array
env needs the same numbers at the stocked cells only, a few hundred of 28,000. Making the generator costs about
40 us and drawing the matrix about 100 us a run and day in numpy: at 1,024 runs x 180 days, 25 s.

`cell_uniforms` does the same arithmetic compiled: SeedSequence's hash of the entropy words into its pool and the
pool into PCG64's 128-bit state and increment, then, for each run's cells in the order of their place in the
matrix, PCG64's LCG jumped ahead to that place (Brown's jump: the LCG's step 2^i precomputed for the run, then one
multiply-add per set bit of the gap), one step and the XSL-RR output, and `random`'s 53-bit double. The 128-bit
products are two 64-bit halves (numba has no 128-bit integer). Held to numpy's own generator value for value by
tests/arrays/test_uniforms.py.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled
from autovend.rng import KeyPart, key_words

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
WordArray = npt.NDArray[np.uint64]

_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_S16, _S32, _S11, _S58, _S63, _S64 = _U(16), _U(32), _U(11), _U(58), _U(63), _U(64)
_ONE, _ZERO = _U(1), _U(0)
# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A, _INIT_B, _MULT_B = _U(0x43B0D7E5), _U(0x931E8875), _U(0x8B51F9DD), _U(0x58F38DED)
_MIX_L, _MIX_R = _U(0xCA01F9DD), _U(0x4973F715)
# PCG64's 128-bit multiplier (PCG_DEFAULT_MULTIPLIER_128), high and low halves
_MUL_HI, _MUL_LO = _U(0x2360ED051FC65DA4), _U(0x4385DF649FCCF645)
_POOL = 4
_JUMP_BITS = 48  # gaps up to 2^48 outputs


@compiled(nogil=True, boundscheck=False)
def _mulhi(a: np.uint64, b: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    """The high 64 bits of the 128-bit product a * b."""
    a0, a1 = a & _M32, a >> _S32
    b0, b1 = b & _M32, b >> _S32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _S32) + (p01 & _M32) + (p10 & _M32)
    return p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32)


@compiled(nogil=True, boundscheck=False)
def _mul(ah: np.uint64, al: np.uint64, bh: np.uint64, bl: np.uint64) -> tuple[np.uint64, np.uint64]:  # pragma: no cover
    """(a * b) mod 2^128 as (high, low) halves."""
    return _mulhi(al, bl) + ah * bl + al * bh, al * bl


@compiled(nogil=True, boundscheck=False)
def _add(ah: np.uint64, al: np.uint64, bh: np.uint64, bl: np.uint64) -> tuple[np.uint64, np.uint64]:  # pragma: no cover
    """(a + b) mod 2^128 as (high, low) halves."""
    lo = al + bl
    return ah + bh + (_ONE if lo < al else _ZERO), lo


@compiled(nogil=True, boundscheck=False)
def _hashmix(value: np.uint64, hash_const: np.uint64) -> tuple[np.uint64, np.uint64]:  # pragma: no cover
    """SeedSequence's hashmix in 32-bit words: (mixed value, the next hash constant)."""
    value = (value ^ hash_const) & _M32
    hash_const = (hash_const * _MULT_A) & _M32
    value = (value * hash_const) & _M32
    return value ^ (value >> _S16), hash_const


@compiled(nogil=True, boundscheck=False)
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    result = (_MIX_L * x - _MIX_R * y) & _M32
    return result ^ (result >> _S16)


@compiled(nogil=True, boundscheck=False)
def _seeded(words: WordArray, n_words: int) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:  # pragma: no cover
    """PCG64's (state high, state low, increment high, increment low) from SeedSequence(entropy words)."""
    pool = np.zeros(_POOL, dtype=np.uint64)
    hc = _INIT_A
    for i in range(_POOL):
        pool[i], hc = _hashmix(words[i] if i < n_words else _ZERO, hc)
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                h, hc = _hashmix(pool[src], hc)
                pool[dst] = _mix(pool[dst], h)
    for src in range(_POOL, n_words):
        for dst in range(_POOL):
            h, hc = _hashmix(words[src], hc)
            pool[dst] = _mix(pool[dst], h)
    # generate_state(4, uint64): eight 32-bit words from the pool in turn, paired little-end first
    out = np.zeros(8, dtype=np.uint64)
    hb = _INIT_B
    for i in range(8):
        v = pool[i % _POOL] ^ hb
        hb = (hb * _MULT_B) & _M32
        v = (v * hb) & _M32
        out[i] = v ^ (v >> _S16)
    seed_hi, seed_lo = out[0] | (out[1] << _S32), out[2] | (out[3] << _S32)
    inc_hi, inc_lo = out[4] | (out[5] << _S32), out[6] | (out[7] << _S32)
    # pcg_setseq_128_srandom_r: inc = (initseq << 1) | 1; step; state += initstate; step
    inc_hi, inc_lo = (inc_hi << _ONE) | (inc_lo >> _S63), (inc_lo << _ONE) | _ONE
    s_hi, s_lo = inc_hi, inc_lo  # 0 * MULT + inc
    s_hi, s_lo = _add(s_hi, s_lo, seed_hi, seed_lo)
    s_hi, s_lo = _mul(s_hi, s_lo, _MUL_HI, _MUL_LO)
    s_hi, s_lo = _add(s_hi, s_lo, inc_hi, inc_lo)
    return s_hi, s_lo, inc_hi, inc_lo


@compiled(nogil=True, boundscheck=False)
def _cell_uniforms(
    words: WordArray, n_words: IntArray, lo: IntArray, pos: IntArray, out: FloatArray
) -> None:  # pragma: no cover - compiled
    """out[c] = the pos[c]-th double of run r's stream, for the cells lo[r]:lo[r+1] (pos ascending in a run)."""
    jump = np.zeros((_JUMP_BITS, 4), dtype=np.uint64)  # the LCG's step 2^i: multiplier and increment halves
    for r in range(len(n_words)):
        if lo[r + 1] <= lo[r]:
            continue
        s_hi, s_lo, inc_hi, inc_lo = _seeded(words[r], n_words[r])
        m_hi, m_lo, p_hi, p_lo = _MUL_HI, _MUL_LO, inc_hi, inc_lo
        for i in range(_JUMP_BITS):
            jump[i, 0], jump[i, 1], jump[i, 2], jump[i, 3] = m_hi, m_lo, p_hi, p_lo
            q_hi, q_lo = _add(m_hi, m_lo, _ZERO, _ONE)
            p_hi, p_lo = _mul(q_hi, q_lo, p_hi, p_lo)  # plus <- (mult + 1) * plus
            m_hi, m_lo = _mul(m_hi, m_lo, m_hi, m_lo)
        done = 0  # outputs drawn so far
        for c in range(lo[r], lo[r + 1]):
            if pos[c] < done:  # the same place as the cell before
                out[c] = out[c - 1]
                continue
            gap = pos[c] - done
            bit = 0
            while gap > 0:
                if gap & 1:
                    s_hi, s_lo = _mul(jump[bit, 0], jump[bit, 1], s_hi, s_lo)
                    s_hi, s_lo = _add(s_hi, s_lo, jump[bit, 2], jump[bit, 3])
                gap >>= 1
                bit += 1
            s_hi, s_lo = _mul(s_hi, s_lo, _MUL_HI, _MUL_LO)  # one step, then the output of the new state
            s_hi, s_lo = _add(s_hi, s_lo, inc_hi, inc_lo)
            x = s_hi ^ s_lo
            rot = s_hi >> _S58
            x = (x >> rot) | (x << ((_S64 - rot) & _S63))
            out[c] = np.float64(x >> _S11) * (1.0 / 9007199254740992.0)
            done = pos[c] + 1


def entropy_words(seeds: IntArray, key: tuple[KeyPart, ...]) -> tuple[WordArray, IntArray]:
    """(R, L) the 32-bit entropy words of each run's stream `key` (as `stream(seed, *key)` hashes them), lengths."""
    seeds = np.asarray(seeds, dtype=np.int64)
    tail = key_words(0, key)[1:]  # the key's words (the same for every run) after the seed's
    wide = np.flatnonzero(seeds >= 2**32)  # seeds of more than one word (rare): numpy's rule, one by one
    rows = {int(i): key_words(int(seeds[i]), key) for i in wide.tolist()}
    width = max([len(tail) + 1, *map(len, rows.values())])
    words = np.zeros((len(seeds), width), dtype=np.uint64)
    words[:, 0] = seeds.astype(np.uint64)
    words[:, 1 : 1 + len(tail)] = np.array(tail, dtype=np.uint64)
    n = np.full(len(seeds), len(tail) + 1, dtype=np.int64)
    for i, w in rows.items():
        words[i] = 0
        words[i, : len(w)] = w
        n[i] = len(w)
    return words, n


def cell_uniforms(seeds: IntArray, key: tuple[KeyPart, ...], run: IntArray, pos: IntArray) -> FloatArray:
    """`stream(seeds[run[c]], *key).random(size).ravel()[pos[c]]` for every cell c, drawing only those.

    run: each cell's run (0..R-1, in any order); pos: its place in the run's flat draw (>= 0, below 2^48).
    """
    out = np.empty(len(run), dtype=np.float64)
    if not len(run):
        return out
    if pos.min() < 0 or pos.max() >= 2**_JUMP_BITS:
        raise ValueError(f"a cell's place in its draw must be in [0, 2^{_JUMP_BITS}), got {pos.min()}..{pos.max()}")
    span = int(pos.max()) + 1
    if len(seeds) * span < 2**62:  # one int64 key: a stable sort of it is 20x faster than lexsort
        order = np.argsort(run.astype(np.int64) * span + pos, kind="stable")
    else:
        order = np.lexsort((pos, run))
    lo = np.searchsorted(run[order], np.arange(len(seeds) + 1))
    words, n_words = entropy_words(seeds, key)
    got = np.empty(len(run), dtype=np.float64)
    _cell_uniforms(words, n_words, lo.astype(np.int64), pos[order].astype(np.int64), got)
    out[order] = got
    return out
