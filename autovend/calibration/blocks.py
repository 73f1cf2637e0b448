"""One block of the panel's machines (`store`): its cells, its machine-days, and its parts of the statistics.

A block is built from its machines' daily sales and shelf counts (`sales.Pieces`, cut from every part of the
source), or taken from a panel already in memory. Functions of a block (`block_*`) return its part of a statistic;
`store.CellStore.map` runs them on every block and hands the parts back in block order. The panel's frame a block
needs (machines, products, days: no cells) travels as a `panel.Panel` without its cells (`lean`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.cells import Keys, Records, block_cells, machine_days
from autovend.calibration.sales import join
from autovend.calibration.store import CellStore, local_store


@dataclass(eq=False)
class Block:
    """A block of consecutive machines [lo, hi): its cells, its machine-days, and the product split's state."""

    lo: int
    hi: int
    cells: pd.DataFrame  # the panel's cells of these machines, in (m, k, d) order
    machine_days: pd.DataFrame  # m, d, units, known, fill, active
    cap_est: dict[int, float] = field(default_factory=dict)  # largest count of each machine with inventory
    index: int = 0  # the block's place among the panel's blocks
    data: Any = None  # choice.ChoiceData: the split's cells of these machines (`choice.block_choice`)
    md_lo: int = 0  # where the block's machine-days start among the split's
    dhat: np.ndarray | None = None  # the split's demand per cell (imputed where censored)
    cens: np.ndarray | None = None  # the cells whose demand is imputed
    share: np.ndarray | None = None  # each cell's share of its machine-day's attraction (the last E-step's)
    y_unc: np.ndarray | None = None
    split: Any = None  # mm.SplitCells: the M-step's cells


def lean(panel: Any) -> Any:
    """The panel (`panel.Panel`) without its cells and machine-days: what a block needs of the panel's frame."""
    return dataclasses.replace(panel, cells=panel.cells.iloc[:0], machine_days=panel.machine_days.iloc[:0])


def build_block(
    index: int,
    lo: int,
    hi: int,
    sales: pd.DataFrame,
    inv: pd.DataFrame | None,
    visits: pd.DataFrame | None,
    frame: Any,
) -> Block:
    """The block of machines [lo, hi) from their sales and counts (`frame`: `panel.BlockFrame`)."""
    rec = Records(sales, inv, visits, frame.has_inv, frame.start_ts)
    cells, cap = block_cells(rec, Keys(frame.n_products, frame.n_days), frame.gap, frame.products)
    capacity = frame.capacity.copy()
    for m in range(lo, hi):  # as the panel sets them: a machine with inventory and no capacity gets its largest count
        if frame.has_inv[m] and np.isnan(capacity[m]):
            capacity[m] = cap.get(m, 0.0)
    md = machine_days(cells, capacity, frame.has_inv, frame.n_days)
    return Block(lo, hi, cells, md, cap, index=index)


def build_group(specs: list[tuple[int, int, int]], pieces: list[Any], frame: Any) -> list[Block]:
    """The blocks (index, lo, hi) of a group from every part's pieces of the group's machines (`sales.cut`)."""
    out = []
    for index, lo, hi in specs:
        joined = join([piece.of(lo, hi) for piece in pieces] if len(specs) > 1 else pieces)
        inv, visits = (joined.inv, joined.visits) if frame.any_inventory else (None, None)
        out.append(build_block(index, lo, hi, joined.sales, inv, visits, frame))
    return out


def set_md_lo(block: Block, bounds: np.ndarray) -> None:
    """Set where the block's machine-days start among the split's (`bounds`: each block's first)."""
    block.md_lo = int(bounds[block.index])


def block_cells_of(block: Block) -> pd.DataFrame:
    """The block's cells (to gather a panel in memory)."""
    return block.cells


def block_machine_days(block: Block) -> tuple[pd.DataFrame, dict[int, float]]:
    """The block's machine-days and its machines' largest counts."""
    return block.machine_days, block.cap_est


def block_sold(block: Block, n_products: int) -> np.ndarray:
    """Units sold per product in the block's cells (any machine)."""
    c = block.cells
    return np.bincount(c["k"], weights=c["units"], minlength=n_products)


def panel_store(panel: Any) -> CellStore:
    """The blocks of a panel in memory (`panel.Panel.blocks`), their cells views of the panel's."""
    cells, md = panel.cells, panel.machine_days
    m, md_m = cells["m"].to_numpy(), md["m"].to_numpy()
    blocks: list[Block] = []
    ranges = list(panel.blocks) or [(0, panel.n_machines)]
    for lo, hi in ranges:
        a, b = np.searchsorted(m, [lo, hi])
        c, d = np.searchsorted(md_m, [lo, hi])
        part = cells.iloc[a:b] if len(ranges) > 1 else cells
        days = md.iloc[c:d] if len(ranges) > 1 else md
        blocks.append(Block(lo, hi, part, days, index=len(blocks)))
    return local_store(blocks, ranges)
