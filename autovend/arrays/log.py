"""The tool calls a day of an array run stands for (`day_calls`), and the record of them (`CallLog`).

Every array step is a day of the simulator's own actions; `day_calls` writes them out as the tool calls that
would make them (discard; then machine after machine in visit order: reduce, delist, discard, restock; then
adjust_price, place_order; in batches of at most `MAX_BATCH_ITEMS` items), so that playing them through a
`ToolSession`, then end_day, repeats the array run exactly (`autovend.agents.array_replay` does, into a
normal run folder).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.arrays.facts import ArrayFacts
from autovend.arrays.moves import DayMoves
from autovend.distinct import distinct
from autovend.tools.schemas import MAX_BATCH_ITEMS

IntArray = npt.NDArray[np.int64]
Call = tuple[str, dict[str, Any]]  # (tool, arguments)


def _pick(parts: tuple[np.ndarray, ...], run: int) -> tuple[np.ndarray, ...]:
    """The entries of one run (the first array is the run of each entry)."""
    if not parts:
        return ()
    sel = parts[0] == run
    return tuple(p[sel] for p in parts[1:])


def _batches(tool: str, items: list[dict[str, Any]]) -> list[Call]:
    return [(tool, {"items": items[i : i + MAX_BATCH_ITEMS]}) for i in range(0, len(items), MAX_BATCH_ITEMS)]


def _shelf_items(
    device: str, sku: tuple[str, ...], k: np.ndarray, q: np.ndarray, slot: np.ndarray
) -> list[dict[str, Any]]:
    order = np.argsort(slot, kind="stable")
    return [{"device_id": device, "sku_id": sku[a], "qty": int(b)} for a, b in zip(k[order], q[order], strict=True)]


def day_calls(facts: ArrayFacts, moves: DayMoves, run: int) -> list[Call]:
    """The tool calls (before end_day) that carry out run `run`'s moves of one day, in order."""
    dev, sku = facts.facts.device_ids, facts.facts.sku_ids
    calls: list[Call] = []
    k, q = _pick(moves.discard, run)
    calls += _batches(
        "discard", [{"sku_id": sku[a], "qty": int(b)} for a, b in zip(k.tolist(), q.tolist(), strict=True)]
    )
    rank = moves.rank[run] if moves.rank.size else np.zeros(facts.n_machines, dtype=np.int64)
    rm, rs, rk, rq, whole = _pick(moves.removal, run) if moves.removal else (np.zeros(0, dtype=np.int64),) * 5
    wm, ws, wk, wq = _pick(moves.waste, run) if moves.waste else (np.zeros(0, dtype=np.int64),) * 4
    tm, ts, tk, tq = _pick(moves.restock, run) if moves.restock else (np.zeros(0, dtype=np.int64),) * 4
    machines = distinct(np.concatenate([rm, wm, tm]))
    for m in machines[np.argsort(rank[machines], kind="stable")].tolist():  # machine after machine
        here = (rm == m) & ~whole
        calls += _batches("reduce", _shelf_items(dev[m], sku, rk[here], rq[here], rs[here]))
        here = (rm == m) & whole
        calls += _batches("delist", [{"device_id": dev[m], "sku_id": sku[b]} for b in rk[here][np.argsort(rs[here])]])
        here = wm == m
        order = np.argsort(ws[here], kind="stable")
        calls += _batches(
            "discard",
            [{"sku_id": sku[b], "qty": int(c)} for b, c in zip(wk[here][order], wq[here][order], strict=True)],
        )
        here = tm == m
        calls += _batches("restock", _shelf_items(dev[m], sku, tk[here], tq[here], ts[here]))
    if moves.price:
        m, k, fen = _pick(moves.price, run)
        calls += _batches(
            "adjust_price",
            [{"device_id": dev[a], "sku_id": sku[b], "price": int(c) / 100} for a, b, c in zip(m, k, fen, strict=True)],
        )
    if moves.order:
        k, q = _pick(moves.order, run)
        calls += _batches(
            "place_order", [{"sku_id": sku[a], "qty": int(b)} for a, b in zip(k.tolist(), q.tolist(), strict=True)]
        )
    return calls


@dataclass
class CallLog:
    """The tool calls of the recorded runs, day by day (`days[i][d - 1]`: run i's calls of day d)."""

    runs: tuple[int, ...]
    days: list[list[list[Call]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.days = [[] for _ in self.runs]

    def add(self, facts: ArrayFacts, moves: DayMoves) -> None:
        """Record one day's moves of every recorded run."""
        for i, run in enumerate(self.runs):
            self.days[i].append(day_calls(facts, moves, run))
