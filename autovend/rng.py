"""Seeded named random streams: every draw comes from (seed, key...), never from global state."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

KeyPart = str | int


def run_seed(value: object, what: str = "seed") -> int:
    """`value` as a run seed (a whole number >= 0, a numpy integer as the same int), or a ValueError saying why not.

    A boolean is no seed (True would quietly run seed 1), nor a float (1.5 would run seed 1), nor text: every
    door that takes a seed (the gym and vector envs, ToolSession, the simulator, a sweep's `seeds`) refuses them
    in these words. `what` names the argument in the message.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} must be a whole number >= 0, got {value!r} (a boolean); pass an integer such as 1")
    if not isinstance(value, (int, np.integer)):
        raise ValueError(
            f"{what} must be a whole number >= 0, got {value!r} (a {type(value).__name__}); pass an integer such as 1"
        )
    if value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, got {int(value)}; pass 0 or more")
    return int(value)


def run_seeds(seed: object, n: int) -> list[int | None]:
    """The seed of each of `n` runs from a vector env's `reset(seed=...)`, or a ValueError naming the bad one.

    None: each run draws its own; one whole number s: run i gets s + i; a list (or 1-d array) of n: each its own
    (None entries draw their own). Every seed is checked by `run_seed` (AutoVend-v0's and AutoVend-Array-v0's
    vector envs take seeds by this one rule).
    """
    if seed is None:
        return [None] * n
    if isinstance(seed, (int, np.integer, bool, np.bool_, float, str, bytes)):
        first = run_seed(seed)
        return [first + i for i in range(n)]
    if not isinstance(seed, (Sequence, np.ndarray)):
        raise ValueError(f"seed must be None, a whole number >= 0 or a list of {n}, got a {type(seed).__name__}")
    seeds = [None if s is None else run_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
    if len(seeds) != n:
        raise ValueError(f"seed lists {len(seeds)} seeds for {n} environments; give one or {n}")
    return seeds


def _key_int(part: KeyPart) -> int:
    """Map one key part to a stable 32-bit integer (Python's hash() is salted per process)."""
    if isinstance(part, (int, np.integer)):
        if part < 0:
            raise ValueError(f"stream key integers must be >= 0, got {part}")
        return int(part)
    digest = hashlib.blake2b(str(part).encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "little")


def _uint32_words(value: int) -> list[int]:
    """A whole number >= 0 as numpy's SeedSequence reads it: 32-bit words, lowest first ([0] for 0)."""
    words = [value & 0xFFFFFFFF]
    value >>= 32
    while value:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
    return words


def _entropy(seed: int, key: tuple[KeyPart, ...]) -> list[int]:
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return [int(seed), len(key), *(_key_int(p) for p in key)]


def key_words(seed: int, key: tuple[KeyPart, ...]) -> list[int]:
    """The 32-bit words SeedSequence hashes for `stream(seed, *key)`, in order (for a compiled copy of the stream)."""
    return [w for part in _entropy(seed, key) for w in _uint32_words(part)]


def stream(seed: int, *key: KeyPart) -> np.random.Generator:
    """Return the generator of the named stream `key` under `seed`.

    The same (seed, key) always gives the same sequence, and streams with different keys are
    statistically independent (numpy's SeedSequence hashing), so the draws of one machine and day
    do not depend on how many draws were made anywhere else.
    """
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(_entropy(seed, key))))
