"""One block of the panel's machines (`store`): its cells, its machine-days, and its parts of the statistics.

A block is built from its machines' daily sales and shelf counts (`sales.Pieces`, cut from every part of the
source), or taken from a panel already in memory. Functions of a block (`block_*`) return its part of a statistic;
`store.CellStore.map` runs them on every block and hands the parts back in block order. The panel's frame a block
needs (machines, products, days: no cells) travels as a `panel.Panel` without its cells (`lean`).
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.cells import Keys, Records, block_cells, machine_days
from autovend.calibration.sales import join
from autovend.calibration.store import CellStore, local_store
from autovend.memory import lean_allocation, release_freed


@dataclass(eq=False)
class Block:
    """A block of consecutive machines [lo, hi): its cells, its machine-days, and the product split's state."""

    lo: int
    hi: int
    cells: pd.DataFrame  # the panel's cells of these machines, in (m, k, d) order
    machine_days: pd.DataFrame  # m, d, units, known, fill, active
    cap_est: dict[int, float] = field(default_factory=dict)  # largest count of each machine with inventory
    index: int = 0  # the block's place among the panel's blocks
    cold: bytes | None = None  # the cells, compressed, once only their occasional readers need them (`freeze`)
    spill: Spill | None = None  # where the split's cells are kept when the worker's memory would not hold them
    resident: int = 0  # bytes of split cells this block holds in memory (counted against the worker's budget)
    leases: list[list[int]] = field(default_factory=list, repr=False)  # its reservations (`reserve`)
    data: Any = None  # choice.ChoiceData: the split's cells of these machines (`choice.block_choice`)
    md_lo: int = 0  # where the block's machine-days start among the split's
    dhat: np.ndarray | None = None  # the split's demand per cell (imputed where censored)
    cens: np.ndarray | None = None  # the cells whose demand is imputed
    share: np.ndarray | None = None  # each cell's share of its machine-day's attraction (the last E-step's)
    y_unc: np.ndarray | None = None
    split: Any = None  # mm.SplitCells: the M-step's cells


class Spill:
    """A block's arrays kept as .npy files in a folder of the worker's local disk, read back for each use.

    A worker whose memory limit (`dask worker --memory-limit`) would not hold its blocks' split cells keeps the
    cells of the blocks beyond its budget here (`spill_budget`): its memory then holds one block's cells at a time,
    whatever the number of machines, and each use maps the files back (from the page cache, usually).

    An array comes back mapped copy-on-write (`np.load(mmap_mode="c")`): its pages are the page cache's, read
    where they are instead of copied into freshly mapped memory (on a worker, whose large arrays each get pages of
    their own (`memory.lean_allocation`), the copy took 8 times as long as the pass that reads it), and writing to
    it changes the process's copy only. A new value goes to a new file that replaces the old one, so an array
    still mapped keeps the values it was read with.
    """

    def __init__(self) -> None:
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="autovend-block-", dir=_local_directory()))
        weakref.finalize(self, shutil.rmtree, str(self.folder), True)

    def put(self, name: str, value: np.ndarray | None) -> None:
        """Keep `value` as `name` (None: forget it)."""
        path = self.folder / f"{name}.npy"
        if value is None:
            path.unlink(missing_ok=True)
            return
        fresh = self.folder / f"{name}.new.npy"  # written aside, then renamed over: a mapped old file stays whole
        np.save(fresh, value, allow_pickle=False)
        fresh.replace(path)

    def get(self, name: str) -> np.ndarray | None:
        """The array kept as `name` (None if none is), mapped copy-on-write from its file."""
        path = self.folder / f"{name}.npy"
        if not path.exists():
            return None
        return np.load(path, mmap_mode="c", allow_pickle=False).view(np.ndarray)  # a plain array over the map


def _local_directory() -> str | None:
    """The Dask worker's local directory when running on one (else the system's temporary folder)."""
    try:
        from distributed import get_worker

        return str(get_worker().local_directory)
    except (ImportError, ValueError):
        return None


_HELD = {"bytes": 0}  # split cells held in memory by this process's blocks


CELL_SHARE = 0.4  # of a worker's memory limit, for split cells held in memory (`spill_budget`)
COMPILED_ALLOWANCE = 160 << 20  # bytes: numba and LLVM in a worker (the split's passes, `mm`; E-steps, `split`)


def spill_budget() -> float:
    """Bytes of split cells a worker holds in memory (no limit: no budget).

    CELL_SHARE of its Dask memory limit, less what the compiled passes of a large split take when numba is
    imported (about 150 MiB resident, `mm.COMPILED_FROM_CELLS`, and the E-steps', `split.COMPILED_FROM_CENSORED`):
    counted whether they run or not, since a split too small for them is small enough to stay in memory anyway.
    """
    if "distributed" not in sys.modules:  # a Dask worker has it imported: this process is none (and saves 0.9 s)
        return float("inf")
    try:
        from distributed import get_worker

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError):
        return float("inf")
    return max(CELL_SHARE * limit - COMPILED_ALLOWANCE, 0.0) if limit else float("inf")


def _give_back(lease: list[int]) -> None:
    _HELD["bytes"] -= lease[0]
    lease[0] = 0


def reserve(block: Block, nbytes: int) -> bool:
    """Count `nbytes` of the block's split cells against this worker's budget; False (nothing counted) if over.

    The bytes come back with `release`, or when the block is collected (a calibration that stopped half-way).
    """
    if _HELD["bytes"] + nbytes > spill_budget():
        return False
    _HELD["bytes"] += nbytes
    block.resident += nbytes
    lease = [nbytes]
    block.leases.append(lease)
    weakref.finalize(block, _give_back, lease)
    return True


def release(block: Block) -> None:
    """Forget the block's split cells: its memory back to the budget, its files removed."""
    for lease in block.leases:
        _give_back(lease)
    block.leases.clear()
    block.resident = 0
    block.data = block.dhat = block.cens = block.share = block.y_unc = block.split = None
    if block.spill is not None:
        shutil.rmtree(block.spill.folder, ignore_errors=True)
        block.spill = None


EM_ARRAYS = ("dhat", "cens", "share", "y_unc")  # the split's per-cell state between its steps


def held(block: Block, name: str) -> np.ndarray | None:
    """One of the block's EM arrays (`EM_ARRAYS`), from memory or from its spill."""
    return getattr(block, name) if block.spill is None else block.spill.get(name)


def keep(block: Block, name: str, value: np.ndarray | None) -> None:
    """Set one of the block's EM arrays, in memory or in its spill."""
    if block.spill is None:
        setattr(block, name, value)
    else:
        block.spill.put(name, value)


def lean(panel: Any) -> Any:
    """The panel (`panel.Panel`) without its cells and machine-days: what a block needs of the panel's frame."""
    return dataclasses.replace(
        panel, cells=panel.cells.iloc[:0].copy(), machine_days=panel.machine_days.iloc[:0].copy()
    )


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


def _built(specs: list[tuple[int, int, int]], pieces: list[Any], frame: Any) -> Iterator[Block]:
    for index, lo, hi in specs:
        joined = join([piece.of(lo, hi) for piece in pieces] if len(specs) > 1 else pieces)
        inv, visits = (joined.inv, joined.visits) if frame.any_inventory else (None, None)
        block = build_block(index, lo, hi, joined.sales, inv, visits, frame)
        del joined, inv, visits
        yield block


def build_group(specs: list[tuple[int, int, int]], pieces: list[Any], frame: Any) -> list[Block]:
    """The blocks (index, lo, hi) of a group from every part's pieces of the group's machines (`sales.cut`)."""
    return list(_built(specs, pieces, frame))


def build_held_group(specs: list[tuple[int, int, int]], pieces: list[Any], frame: Any) -> list[Block]:
    """`build_group` for a group held for the whole calibration: each block's cells compressed once built (`freeze`).

    A worker holding many groups then holds their cells at about 6 KB a machine; their readers (the split's cells,
    the sales rule, the panel table) take them back a block at a time. A Dask worker allocates as the pipeline's
    processes do (`memory.lean_allocation`), and the build's freed pages go back to the system once it is done.
    """
    if _local_directory() is not None:  # on a Dask worker
        lean_allocation()
    out = []
    for block in _built(specs, pieces, frame):
        freeze(block)
        out.append(block)
    release_freed()
    return out


def set_md_lo(block: Block, bounds: np.ndarray) -> None:
    """Set where the block's machine-days start among the split's (`bounds`: each block's first)."""
    block.md_lo = int(bounds[block.index])


def block_cells_of(block: Block) -> pd.DataFrame:
    """The block's cells (to gather a panel in memory, or for their occasional readers once frozen)."""
    if block.cold is None:
        return block.cells
    import pyarrow as pa

    with pa.ipc.open_stream(pa.BufferReader(block.cold)) as reader:
        return reader.read_all().to_pandas()


def freeze(block: Block) -> int:
    """Keep the block's cells compressed (zstd Arrow IPC); their bytes. The split's cells are built by then.

    What reads them afterwards (the sales rule's attractions, the panel's diagnostic table) takes them back with
    `block_cells_of`, a block at a time.
    """
    if block.cold is None:
        import pyarrow as pa

        table = pa.Table.from_pandas(block.cells, preserve_index=False)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
            writer.write_table(table)
        block.cold = sink.getvalue().to_pybytes()
        block.cells = block.cells.iloc[:0].copy()
    return len(block.cold)


def block_machine_days(block: Block) -> tuple[pd.DataFrame, dict[int, float]]:
    """The block's machine-days and its machines' largest counts."""
    return block.machine_days, block.cap_est


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
