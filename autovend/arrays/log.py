"""The tool calls a day of an array run stands for (`day_calls`), and the record of them (`CallLog`).

Every array step is a day of the simulator's own actions; `day_calls` writes them out as the tool calls that
would make them (discard, reduce, delist, discard, restock, adjust_price, place_order, in that order, in
batches of at most `MAX_BATCH_ITEMS` items), so that playing them through a `ToolSession`, then end_day,
repeats the array run exactly (`autovend.agents.array_replay` does, into a normal run folder).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.arrays.facts import ArrayFacts
from autovend.arrays.moves import DayMoves
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


def day_calls(facts: ArrayFacts, moves: DayMoves, run: int) -> list[Call]:
    """The tool calls (before end_day) that carry out run `run`'s moves of one day, in order."""
    dev, sku = facts.facts.device_ids, facts.facts.sku_ids
    calls: list[Call] = []
    k, q = _pick(moves.discard, run)
    calls += _batches(
        "discard", [{"sku_id": sku[a], "qty": int(b)} for a, b in zip(k.tolist(), q.tolist(), strict=True)]
    )
    rank = moves.rank[run] if moves.rank.size else np.zeros(facts.n_machines, dtype=np.int64)
    if moves.removal:
        m, s, k, q, whole = _pick(moves.removal, run)
        order = np.lexsort((s, rank[m]))
        m, k, q, whole = m[order], k[order], q[order], whole[order]
        calls += _batches(
            "reduce",
            [
                {"device_id": dev[a], "sku_id": sku[b], "qty": int(c)}
                for a, b, c in zip(m[~whole], k[~whole], q[~whole], strict=True)
            ],
        )
        calls += _batches(
            "delist", [{"device_id": dev[a], "sku_id": sku[b]} for a, b in zip(m[whole], k[whole], strict=True)]
        )
    if moves.waste:
        m, s, k, q = _pick(moves.waste, run)
        order = np.lexsort((s, rank[m]))
        calls += _batches(
            "discard", [{"sku_id": sku[b], "qty": int(c)} for b, c in zip(k[order], q[order], strict=True)]
        )
    if moves.restock:
        m, s, k, q = _pick(moves.restock, run)
        order = np.lexsort((s, rank[m]))
        calls += _batches(
            "restock",
            [
                {"device_id": dev[a], "sku_id": sku[b], "qty": int(c)}
                for a, b, c in zip(m[order], k[order], q[order], strict=True)
            ],
        )
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
