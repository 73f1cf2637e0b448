"""The panel's cells, held in blocks of whole machines where the statistics of the calibration are computed.

Every statistic the calibration takes from the panel's cells is a sum over machines: the product split's M-step
(`mm.SplitCells`), its E-step (per machine-day), the shelves' attractions per machine-day, the counts behind the
identification record. So the cells are cut into blocks of whole machines (`cells.machine_blocks`: consecutive
machines, about `cells.BLOCK_ROWS` sales and count rows each), each block computes its part, and the parts come
back to the calibration in block order: sums are added block by block in that order, machine-day arrays are
concatenated. The blocks depend on the records alone, never on where they are held, so the statistics are the
same bits in this process (`local`) and on a Dask cluster's workers (`autovend.parallel`, one group of
consecutive blocks per worker, held there for the whole calibration): one code path for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from autovend.calibration import cells
from autovend.parallel import Executor, Groups, LocalExecutor


def _each(blocks: list[Any], fn: Callable[..., Any], *args: Any) -> list[Any]:
    return [fn(block, *args) for block in blocks]


def _pick(blocks: list[Any], index: int, fn: Callable[..., Any], *args: Any) -> Any:
    """fn on the group's block `index` (None in the groups that do not hold it)."""
    return next((fn(block, *args) for block in blocks if block.index == index), None)


def _on_split(block: Any, fn: Callable[..., Any], *args: Any) -> Any:
    return fn(block.split, *args)


def _held(*blocks: Any) -> list[Any]:
    return list(blocks)


GROUP_BLOCKS = 4  # a held group's blocks, at most (in rows: GROUP_BLOCKS x cells.BLOCK_ROWS), beyond one per worker


def held_layout(weights: Sequence[float], n_workers: int) -> list[list[int]]:
    """Groups of consecutive blocks to hold on `n_workers` workers: one per worker, more where that would be large.

    A group is built in one go from its machines' rows, so each holds about GROUP_BLOCKS blocks' rows at most: a
    worker then builds its groups one after the other (its rows waiting in Dask's memory, spilled to its disk
    beyond the worker's memory target) instead of holding all its machines' rows at once.
    """
    total = float(np.sum(np.asarray(weights, dtype=float))) if len(weights) else 0.0
    n = max(n_workers, int(np.ceil(total / (GROUP_BLOCKS * cells.BLOCK_ROWS))))
    return [g for g in groups_of(weights, n) if g]


def groups_of(weights: Sequence[float], n_groups: int) -> list[list[int]]:
    """Consecutive blocks in `n_groups` groups of about equal weight (some may be empty)."""
    n = len(weights)
    cum = np.cumsum(np.asarray(weights, dtype=float))
    total = float(cum[-1]) if n else 0.0
    out: list[list[int]] = [[] for _ in range(max(n_groups, 1))]
    for i in range(n):
        g = min(int((cum[i] - weights[i] / 2) / total * len(out)) if total > 0 else 0, len(out) - 1)
        out[g].append(i)
    return out


class CellStore:
    """The blocks of the panel (module docstring): `map` runs a function on every block, results in block order."""

    def __init__(self, groups: Groups, layout: list[list[int]], ranges: list[tuple[int, int]], where: str) -> None:
        self.groups = groups
        self.layout = layout  # the blocks of each group, consecutive
        self.ranges = ranges  # the machines [lo, hi) of each block
        self.where = where

    @property
    def n_blocks(self) -> int:
        """Blocks in all."""
        return len(self.ranges)

    def map(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """fn(block, *args) for every block; the results in block order."""
        parts = self.groups.run(_each, fn, *args)
        return [r for group in parts for r in group]

    def each(self, fn: Callable[..., Any], *args: Any) -> Iterator[Any]:
        """fn(block, *args) for every block, one at a time in block order, the next ones computed while one is used.

        Every worker works ahead on its own next blocks (`Groups.depth` of them under way or done and not yet
        used, in block order) while the caller uses the block before them: the caller's work and all the workers'
        overlap, and at most depth x workers results are held. In this process a block is computed when it is due.
        """
        if not self.n_blocks:
            return
        group_of = [0] * self.n_blocks
        for g, blocks in enumerate(self.layout):
            for b in blocks:
                group_of[b] = g
        lanes, depth = self.groups.lanes, self.groups.depth
        queue: dict[int, list[int]] = {}  # each lane's blocks not yet begun, in block order
        for b in range(self.n_blocks):
            queue.setdefault(lanes[group_of[b]], []).append(b)
        held = dict.fromkeys(queue, 0)  # each lane's blocks begun and not yet used
        started: dict[int, Callable[[], Any]] = {}
        for b in range(self.n_blocks):
            for lane, todo in queue.items():  # top up every lane: block b is its lane's first if not yet begun
                while todo and held[lane] < depth:
                    k = todo.pop(0)
                    started[k] = self.groups.start_on(group_of[k], _pick, k, fn, *args)
                    held[lane] += 1
            value = started.pop(b)()
            held[lanes[group_of[b]]] -= 1
            yield value

    def over_split(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """fn(block.split, *args) for every block (`mm.Over`)."""
        return self.map(_on_split, fn, *args)

    def close(self) -> None:
        """Release the blocks."""
        self.groups.close()


def local_store(blocks: list[Any], ranges: list[tuple[int, int]]) -> CellStore:
    """A store of blocks held in this process."""
    return CellStore(LocalExecutor().groups(_held, [blocks]), [list(range(len(blocks)))], ranges, "in process")


def remote_store(
    executor: Executor,
    build: Callable[..., list[Any]],
    inputs: list[tuple[Any, ...]],
    layout: list[list[int]],
    ranges: list[tuple[int, int]],
) -> CellStore:
    """A store whose groups of blocks (`layout`) are built and held by the executor: group g is `build(*inputs[g])`."""
    return CellStore(executor.groups(build, inputs), layout, ranges, executor.description)
