"""`ArrayKnobs`: a small parametric policy for `AutoVend-Array-v0`, five knobs per run (for training examples).

Every run has its own knobs (a row of `knobs`, each in [0, 1], mapped to the ranges of `KNOB_RANGES`), so one
vector env can score a whole population at once (`examples/array_es.py`):

    products     how many products each machine carries (the highest reference margins, spread over machines)
    depth        units each carried product is filled to at a visit (cut so that the machine's capacity holds)
    trigger      a machine is visited on a working day when its shelf holds less than this share of capacity
    price        one price multiplier for everything
    cover        products are ordered up to 2 x cover x what the shelves carrying them hold, when the warehouse
                 and the orders on the way hold less than cover x that

At every visit expired units and units expiring within the week come off and are thrown away; expired units
in the warehouse are thrown away every day. It reads only the public catalog and the observations.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.facts import PublicFacts

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

KNOB_NAMES = ("products", "depth", "trigger", "price", "cover")
KNOB_RANGES = ((8.0, 48.0), (2.0, 14.0), (0.1, 0.9), (0.8, 2.0), (0.5, 4.0))


def knob_values(knobs: npt.ArrayLike) -> FloatArray:
    """(N, 5) knobs in [0, 1] (clipped) -> their values in `KNOB_RANGES`."""
    u = np.clip(np.asarray(knobs, dtype=np.float64), 0.0, 1.0)
    lo = np.array([r[0] for r in KNOB_RANGES])
    hi = np.array([r[1] for r in KNOB_RANGES])
    return lo + u * (hi - lo)


class ArrayKnobs:
    """The knob policy for N runs (see the module docstring); `knobs` (N, 5) in [0, 1]."""

    def __init__(self, facts: PublicFacts, knobs: npt.ArrayLike, slots: int) -> None:
        v = knob_values(np.atleast_2d(knobs))
        M, K = facts.n_machines, facts.n_products
        self.facts = facts
        self.n = np.minimum(np.round(v[:, 0]).astype(np.int64), slots)
        cap = int(facts.capacity.min())
        self.depth = np.maximum(np.minimum(np.round(v[:, 1]), cap // np.maximum(self.n, 1)), 1).astype(np.int64)
        self.trigger, self.price, self.cover = v[:, 2], v[:, 3], v[:, 4]
        # each machine's list of products: highest reference margin first, machine j starting j * 7 further down
        margin = (facts.ref_fen - facts.cost_fen).astype(np.float64)
        ranked = np.argsort(-margin, kind="stable")
        offset = (np.arange(M)[:, None] * 7 + np.arange(slots)[None, :]) % K
        lists = ranked[offset]  # (M, S)
        keep = np.arange(slots)[None, None, :] < self.n[:, None, None]
        self.wanted = np.where(keep, lists[None], -1)  # (N, M, S)

    def act(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The day's action of every run."""
        f = self.facts
        N, M, S = obs["slot_product"].shape
        K = f.n_products
        units = obs["slot_units"].astype(np.int64)
        stale = (obs["slot_expired"] + obs["slot_expiring"]).astype(np.int64)
        held = units.sum(axis=2)
        wrong = (obs["slot_product"] != self.wanted).any(axis=2)
        low = held < self.trigger[:, None] * f.capacity[None, :]
        visit = (obs["visit_mask"] > 0) & (low | wrong | (stale.sum(axis=2) > 0))
        target = np.where(self.wanted >= 0, self.depth[:, None, None], 0)
        same = obs["slot_product"] == self.wanted
        take_off = np.where(same, np.minimum(stale, units), 0)
        product = np.where(visit[:, :, None], self.wanted, obs["slot_product"])
        k = np.where(product >= 0, product, 0)
        need = np.zeros((N, K))
        n_idx = np.broadcast_to(np.arange(N)[:, None, None], self.wanted.shape)
        w = self.wanted >= 0
        np.add.at(need, (n_idx[w], self.wanted[w]), np.broadcast_to(target, self.wanted.shape)[w])
        position = obs["warehouse_units"] - obs["warehouse_expired"] + obs["in_transit"]
        low_stock = position < self.cover[:, None] * need
        order = np.where(low_stock, np.ceil(2 * self.cover[:, None] * need - position), 0).astype(np.int64)
        return {
            "visit": visit.astype(np.int8),
            "visit_order": np.zeros((N, M), dtype=np.int64),
            "slot_product": product.astype(np.int64),
            "slot_target": np.where(visit[:, :, None], target, units),
            "slot_remove": np.where(visit[:, :, None], take_off, 0),
            "slot_waste": np.where(visit[:, :, None], take_off, 0),
            "slot_price": np.where(product >= 0, _multiplier(f, k, self.price), 1.0),
            "order": np.maximum(order, 0),
            "discard": obs["warehouse_expired"].astype(np.int64),
        }


def _multiplier(f: PublicFacts, k: IntArray, price: FloatArray) -> FloatArray:
    """Each slot's multiplier: the run's, kept inside the price band to the fen."""
    ref = f.ref_fen[k]
    fen = np.clip(np.floor(ref * price[:, None, None] + 0.5), f.lo_fen[k], f.hi_fen[k])
    return fen / ref
