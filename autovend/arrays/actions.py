"""An array action read into what the day will carry out (`Plan`), and the codes of what is refused.

An action is a dict of arrays with a leading run axis (see `autovend.arrays.env` for the spaces):

    visit (N, M)          0/1: serve the machine today (working days only)
    visit_order (N, M)    served in increasing order, ties by machine (who gets scarce stock first)
    slot_product (N, M, S) the product the slot should hold, -1 = empty
    slot_target (N, M, S)  units it should hold after the visit
    slot_remove (N, M, S)  units to take off first (earliest-expiring first), before it is filled to its target
    slot_waste (N, M, S)   of the units that come off the slot, how many to throw away at once
    slot_price (N, M, S)   the slot's price as a multiple of the product's reference price
    order (N, K)          units to order of each product
    discard (N, K)        warehouse units to throw away (earliest-expiring first), before the visits

At a visit a slot gives up max(slot_remove, units - slot_target) units (all of them when its product changes),
the wasted part of those is thrown away, and it is filled up to its target: taking off stale units and putting
fresh ones on is slot_remove = slot_waste = the stale units, slot_target = the units it should hold.
A missing key leaves that part as it is (no visits, slots as they are, prices as they are, nothing ordered or
thrown away). A value that breaks a rule is refused with a code (`CODES`); the part it asked for stays as it
was, and the rest of the action goes ahead. Quantities beyond what the warehouse or a machine can take are cut
down to what fits, with the code of the limit that cut them (`insufficient_stock`, `capacity_exceeded`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.arrays.facts import ArrayFacts
from autovend.arrays.state import ArrayState
from autovend.calibration.kernels import compiled
from autovend.sim.items import MAX_ITEM_QTY
from autovend.sim.results import REJECTION_CODES

IntArray = npt.NDArray[np.int64]
Int8 = npt.NDArray[np.int8]
Int32 = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

# refusal codes: index 0 = nothing refused; the simulator's codes keep their names and meanings
CODES: tuple[str, ...] = (
    "",
    "unknown_sku",
    "invalid_qty",
    "qty_too_large",
    "invalid_price",
    "price_out_of_band",
    "not_workday",
    "insufficient_stock",
    "capacity_exceeded",
    "insufficient_shelf_stock",
    "duplicate_product",
    "no_visit",
)
CODE = {name: np.int8(i) for i, name in enumerate(CODES)}
MEANING: dict[str, str] = {
    **{c: REJECTION_CODES[c] for c in CODES if c in REJECTION_CODES},
    "insufficient_stock": "the warehouse held fewer units than asked: the restock or discard was cut to what it held",
    "capacity_exceeded": "the machine had less room than asked: the restock was cut to fit its capacity",
    "insufficient_shelf_stock": "slot_remove asked for more units than the slot held, or slot_waste for more than came"
    " off it: cut to those",
    "duplicate_product": "the product is asked for in another slot of the same machine: this slot stays as it was",
    "no_visit": "the slot was asked to change at a machine not visited today: it stays as it was",
}
PRICE_ROUNDING = 1e-7  # fen: a multiplier that lands this close below a half fen rounds up (float noise)


@dataclass(eq=False)
class Plan:
    """What a day's action asks for, checked: refused parts are back to the state they would have changed."""

    visit: BoolArray  # (N, M) machines served today
    rank: IntArray  # (N, M) their order (0 first)
    product: npt.NDArray[np.int32]  # (N, M, S) each slot's product after the visit
    target: IntArray  # (N, M, S) units asked for in each slot after the visit
    remove: IntArray  # (N, M, S) units to take off first
    waste: IntArray  # (N, M, S) units of what comes off to throw away
    price: IntArray  # (N, M, S) the price asked for the slot's product (fen), -1: none
    order: IntArray  # (N, K)
    discard: IntArray  # (N, K)
    visit_code: Int8  # (N, M)
    slot_code: Int8  # (N, M, S)
    price_code: Int8  # (N, M, S)
    order_code: Int8  # (N, K)
    discard_code: Int8  # (N, K)


def _field(action: Mapping[str, Any], name: str, shape: tuple[int, ...], default: Any) -> np.ndarray:
    """The action's array `name` of `shape`, or `default` when the key is missing; ValueError for another shape."""
    if name not in action:
        return np.broadcast_to(np.asarray(default), shape).copy()
    value = np.asarray(action[name])
    if value.shape != shape:
        raise ValueError(f"action[{name!r}] has shape {value.shape}; it must be {shape}")
    if value.dtype.kind not in "biuf":
        raise ValueError(f"action[{name!r}] holds {value.dtype} values; it must hold numbers")
    return value


def _whole(value: np.ndarray) -> tuple[IntArray, BoolArray]:
    """Integer values and where the input was a whole number (floats with a fraction or non-finite are not)."""
    if value.dtype.kind == "f":
        ok = np.isfinite(value) & (value == np.floor(value)) & (np.abs(value) < 2.0**62)
        return np.where(ok, value, 0).astype(np.int64), ok
    return value.astype(np.int64), np.ones(value.shape, dtype=bool)  # a copy: the cuts below work in place


def read_action(facts: ArrayFacts, state: ArrayState, action: Mapping[str, Any]) -> Plan:
    """Check a day's action against the rules (see the module docstring)."""
    N, M, S = state.slot_k.shape
    K = facts.n_products
    unknown = set(action) - {
        "visit",
        "visit_order",
        "slot_product",
        "slot_target",
        "slot_remove",
        "slot_waste",
        "slot_price",
        "order",
        "discard",
    }
    if unknown:
        raise ValueError(f"unknown action keys {sorted(unknown)}; see autovend.arrays.actions for the keys")
    visit_code = np.zeros((N, M), dtype=np.int8)
    asked = _field(action, "visit", (N, M), 0) != 0
    workday = bool(facts.workday[state.day])
    visit = asked & workday
    visit_code[asked & ~visit] = CODE["not_workday"]
    order_key, ok = _whole(_field(action, "visit_order", (N, M), 0))
    key = np.where(ok, order_key, 0) * M + np.arange(M)
    rank = np.argsort(np.argsort(key, axis=1, kind="stable"), axis=1, kind="stable")

    cur_k, cur_q = state.slot_k, state.slot_q
    slot_code = np.zeros((N, M, S), dtype=np.int8)
    ask_k, k_ok = _whole(_field(action, "slot_product", (N, M, S), cur_k))
    ask_t, t_ok = _whole(_field(action, "slot_target", (N, M, S), cur_q))
    product = np.empty((N, M, S), dtype=np.int32)
    target = np.empty((N, M, S), dtype=np.int64)
    codes = np.array([CODE[c] for c in ("unknown_sku", "invalid_qty", "not_workday", "no_visit")], dtype=np.int8)
    _slot_asks(cur_k, cur_q, visit, asked, ask_k, k_ok, ask_t, t_ok, K, codes, slot_code, product, target)
    product, target = _one_slot_each(product, target, cur_k, cur_q, slot_code)
    waste, w_ok = _whole(_field(action, "slot_waste", (N, M, S), 0))
    remove, r_ok = _whole(_field(action, "slot_remove", (N, M, S), 0))
    codes = np.array([CODE[c] for c in ("invalid_qty", "insufficient_shelf_stock")], dtype=np.int8)
    _slot_takes(cur_q, visit, waste, w_ok, remove, r_ok, codes, slot_code)  # waste, remove: cut in place

    price, price_code = _prices(facts, state, action, product)
    order, o_ok = _whole(_field(action, "order", (N, K), 0))
    order_code = np.zeros((N, K), dtype=np.int8)
    order_code[~o_ok | (order < 0)] = CODE["invalid_qty"]
    order_code[o_ok & (order > MAX_ITEM_QTY)] = CODE["qty_too_large"]
    order = np.where(order_code == 0, order, 0)
    discard, d_ok = _whole(_field(action, "discard", (N, K), 0))
    discard_code = np.zeros((N, K), dtype=np.int8)
    discard_code[~d_ok | (discard < 0)] = CODE["invalid_qty"]
    discard = np.where(discard_code == 0, discard, 0)
    return Plan(
        visit=visit,
        rank=rank,
        product=product,
        target=target,
        remove=remove,
        waste=waste,
        price=price,
        order=order,
        discard=discard,
        visit_code=visit_code,
        slot_code=slot_code,
        price_code=price_code,
        order_code=order_code,
        discard_code=discard_code,
    )


def _one_slot_each(
    product: npt.NDArray[np.int32], target: IntArray, cur_k: npt.NDArray[np.int32], cur_q: IntArray, code: Int8
) -> tuple[npt.NDArray[np.int32], IntArray]:
    """Keep every product in at most one slot of a machine.

    Of the slots asking for one product, the slot that holds it now (else the first) gets it; the others stay
    as they were (`duplicate_product`). Repeated until no product is asked twice (a slot that stays keeps its
    own product, which may have been asked elsewhere).
    """
    N, M, S = product.shape
    slots = np.arange(S)
    while True:
        p = np.sort(product, axis=-1)  # any product asked twice in a machine? (most days none)
        if not ((p[..., 1:] == p[..., :-1]) & (p[..., 1:] >= 0)).any():
            return product, target
        holder = product == cur_k
        order = np.lexsort((slots[None, None, :] + np.zeros_like(product), ~holder, product), axis=-1)
        p = np.take_along_axis(product, order, axis=-1)
        dup_sorted = np.zeros(product.shape, dtype=bool)
        dup_sorted[..., 1:] = (p[..., 1:] == p[..., :-1]) & (p[..., 1:] >= 0)
        if not dup_sorted.any():
            return product, target
        dup = np.zeros(product.shape, dtype=bool)
        np.put_along_axis(dup, order, dup_sorted, axis=-1)
        code[dup & (code == 0)] = CODE["duplicate_product"]
        product = np.where(dup, cur_k, product).astype(np.int32)
        target = np.where(dup, cur_q, target)


def price_fen(ref_fen: npt.ArrayLike, multiplier: npt.ArrayLike) -> IntArray:
    """The price in fen of a multiple of the reference price, rounded half up (non-finite multipliers give 0)."""
    m = np.asarray(multiplier, dtype=np.float64)
    raw = np.asarray(ref_fen, dtype=np.float64) * np.where(np.isfinite(m), m, 0.0)
    return np.floor(np.clip(raw, -1e15, 1e15) + 0.5 + PRICE_ROUNDING).astype(np.int64)


def _prices(
    facts: ArrayFacts, state: ArrayState, action: Mapping[str, Any], product: npt.NDArray[np.int32]
) -> tuple[IntArray, Int8]:
    """The price asked for each held slot's product (fen; -1 where none is asked or it is refused) and the codes."""
    N, M, S = product.shape
    code = np.zeros((N, M, S), dtype=np.int8)
    out = np.full((N, M, S), -1, dtype=np.int64)
    if "slot_price" not in action:
        return out, code
    mult = np.ascontiguousarray(_field(action, "slot_price", (N, M, S), 1.0), dtype=np.float64)
    _slot_fen(  # `price_fen` of each held slot's product and multiplier, checked, in one compiled pass
        np.ascontiguousarray(product).reshape(-1), mult.reshape(-1), facts.ref_fen, facts.lo_fen, facts.hi_fen,
        PRICE_ROUNDING, CODE["invalid_price"], CODE["price_out_of_band"], out.reshape(-1), code.reshape(-1),
    )  # fmt: skip
    return out, code


@compiled(nogil=True, boundscheck=False)
def _slot_fen(
    product: npt.NDArray[np.int32], mult: FloatArray, ref_fen: IntArray, lo_fen: IntArray, hi_fen: IntArray,
    rounding: float, invalid: int, out_of_band: int, out: IntArray, code: Int8,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """`price_fen(ref_fen[k], mult)` of each held slot (product k >= 0), arithmetic for arithmetic.

    Into `out` when the multiplier is finite and the price within [lo_fen[k], hi_fen[k]]; otherwise `code` says
    why. Empty slots are left as they are.
    """
    for i in range(len(product)):
        k = product[i]
        if k < 0:
            continue
        x = mult[i]
        if not np.isfinite(x):
            code[i] = invalid
            continue
        fen = np.int64(np.floor(min(max(np.float64(ref_fen[k]) * x, -1e15), 1e15) + 0.5 + rounding))
        if lo_fen[k] <= fen <= hi_fen[k]:
            out[i] = fen
        else:
            code[i] = out_of_band


@compiled(nogil=True, boundscheck=False)
def _slot_asks(
    cur_k: Int32, cur_q: IntArray, visit: BoolArray, asked: BoolArray, ask_k: IntArray, k_ok: BoolArray,
    ask_t: IntArray, t_ok: BoolArray, K: int, codes: Int8, code: Int8, product: Int32, target: IntArray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Each slot's asked product and target, checked.

    Unknown products, invalid targets and changes asked of a machine not visited today keep the slot as it is,
    with the first reason (codes: unknown_sku, invalid_qty, not_workday, no_visit).
    """
    N, M, S = cur_k.shape
    for n in range(N):
        for m in range(M):
            here = visit[n, m]
            for s in range(S):
                k0, q0 = cur_k[n, m, s], cur_q[n, m, s]
                c = 0
                kok = k_ok[n, m, s] and -1 <= ask_k[n, m, s] < K
                if not kok:
                    c = codes[0]
                tok = t_ok[n, m, s] and ask_t[n, m, s] >= 0
                if kok and not tok:
                    c = codes[1]
                good = kok and tok
                k = ask_k[n, m, s] if good else k0
                q = (ask_t[n, m, s] if k >= 0 else 0) if good else q0
                if (k != k0 or q != q0) and not here and c == 0:
                    c = codes[2] if asked[n, m] else codes[3]
                code[n, m, s] = c
                product[n, m, s] = k if here else k0
                target[n, m, s] = q if here and good else q0


@compiled(nogil=True, boundscheck=False)
def _slot_takes(
    cur_q: IntArray, visit: BoolArray, waste: IntArray, w_ok: BoolArray, remove: IntArray, r_ok: BoolArray,
    codes: Int8, code: Int8,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """Each slot's units to throw away and to take off, checked and cut in place.

    0 where invalid or the machine is not visited; removals cut to the units there. The first reason (codes:
    invalid_qty, insufficient_shelf_stock) goes where the slot has none yet.
    """
    N, M, S = cur_q.shape
    for n in range(N):
        for m in range(M):
            here = visit[n, m]
            for s in range(S):
                wok = w_ok[n, m, s] and waste[n, m, s] >= 0
                if not wok and code[n, m, s] == 0:
                    code[n, m, s] = codes[0]
                if not (wok and here):
                    waste[n, m, s] = 0
                x = remove[n, m, s]
                rok = r_ok[n, m, s] and x >= 0
                if not rok and code[n, m, s] == 0:
                    code[n, m, s] = codes[0]
                if rok and here and x > cur_q[n, m, s] and code[n, m, s] == 0:
                    code[n, m, s] = codes[1]
                remove[n, m, s] = min(x, cur_q[n, m, s]) if rok and here else 0
