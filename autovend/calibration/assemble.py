"""Where a calibration's panel is built and its blocks held: in this process, or on a Dask cluster's workers.

Three ways in, one construction (`sales` -> `panel.head` -> `blocks.build_group`):

- `in_memory(source)`: a checked source in memory, its panel and blocks in this process (`panel.build_panel`);
- `on_executor(source, ...)`: the same source reduced here, its blocks built and held by the executor's groups;
- `from_parts(location, ...)`: a partitioned source (`autovend.data.parts`) checked and reduced one partition
  file per task where the executor runs them (`autovend.data.partcheck.inspect_partitioned` with `sales.part_sales`
  as its reduction), the parts' rows cut per group of machines and joined into blocks where the group is held.

Each returns a `Prepared`: the panel (with its cells when they are in this process, else without), its machine-days
(gathered: one row per machine-day), and the `store.CellStore` of its blocks.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.blocks import Block, block_machine_days, build_held_group, panel_store
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.panel import Head, Panel, build_panel, finish, head, kept_products, sales_codes, source_head
from autovend.calibration.sales import combine, cut, facts, part_sales
from autovend.calibration.store import CellStore, groups_of, held_layout, remote_store
from autovend.data.load import Source
from autovend.errors import SourceError
from autovend.parallel import Executor


@dataclass(frozen=True, eq=False)
class Prepared:
    """A calibration's panel and the store of its blocks (module docstring)."""

    panel: Panel
    store: CellStore
    source_name: str
    executor: Executor | None = None  # where the blocks are held (None: in this process)


def in_memory(source: Source, config: CalibrationConfig) -> Prepared:
    """The panel of a source in memory, its blocks views of its cells."""
    panel = build_panel(source, config)
    return Prepared(panel, panel_store(panel), getattr(source.meta, "name", ""))


def _held(hd: Head, parts: list[Any], executor: Executor, source_hash: str) -> tuple[Panel, CellStore]:
    """The blocks built and held by the executor's groups from the parts (Refs), and the panel without cells.

    The parts are released here (their Refs are the caller's no more): each step's Refs go as soon as the next
    step's tasks are submitted (Dask keeps a value until the tasks that need it have run), and each group's
    pieces once its blocks are built, so the cluster holds one copy of the reduced records at a time.
    """
    ranges = hd.blocks
    weights = [int(hd.frame.weight[lo:hi].sum()) for lo, hi in ranges]
    layout = held_layout(weights, executor.n_groups)
    bounds = [(ranges[g[0]][0], ranges[g[-1]][1]) for g in layout]
    cuts = executor.submit(cut, parts, hd.frame.keep, hd.start_day, bounds)
    executor.release(parts)
    inputs = []
    for g, blocks in enumerate(layout):
        specs = [(b, *ranges[b]) for b in blocks]
        inputs.append((specs, executor.pick(cuts, g), hd.block_frame))
    executor.release(cuts)
    store = remote_store(executor, build_held_group, inputs, layout, ranges)  # each group's pieces go once built
    found = store.map(block_machine_days)
    cap_est: dict[int, float] = {}
    for _, cap in found:
        cap_est.update(cap)
    md = pd.concat([f[0] for f in found], ignore_index=True)
    empty = pd.DataFrame({"m": np.zeros(0, np.int32)})
    return finish(hd, cap_est, md, empty, source_hash), store


def on_executor(source: Source, config: CalibrationConfig, executor: Executor) -> Prepared:
    """The panel of a source in memory, its blocks built and held by the executor's groups."""
    hd, parts = source_head(source, config)
    refs = executor.scatter(parts)
    del parts
    panel, store = _held(hd, refs, executor, source.content_hash)
    return Prepared(panel, store, getattr(source.meta, "name", ""), executor)


def _reduce(stem: str, table: pd.DataFrame, codes: Any) -> Any:
    return part_sales(stem, table, codes)


def from_parts(location: Any, check_settings: Any, config: CalibrationConfig, executor: Executor) -> Prepared:
    """A partitioned source checked and reduced partition file by partition file on the executor (module docstring).

    Raises SourceError with the check's report when the source breaks the contract.
    """
    from autovend.data.partcheck import inspect_partitioned, small_tables

    notes: list[str] = []
    machines, products_all = small_tables(location)
    reduce = None
    if machines is not None and products_all is not None:
        products = kept_products(products_all, config, notes)
        reduce = functools.partial(_reduce, codes=sales_codes(machines, products, config))
    inspection = inspect_partitioned(location, check_settings, reduce, executor)
    report = inspection.report
    if not report.ok or inspection.meta is None or report.summary is None:
        raise SourceError(report.format())
    tables = inspection.tables
    small = SimpleNamespace(
        meta=inspection.meta,
        machines=tables["machines"],
        products=tables["products"],
        weather=tables.get("weather"),
        calendar=tables.get("calendar"),
    )
    products = kept_products(small.products, config, [])  # the notes were taken above
    parts = inspection.reduced
    found = executor.gather(executor.submit(facts, parts))
    hd = head(small, products, combine(found, len(small.machines)), config, notes)
    panel, store = _held(hd, parts, executor, report.summary.content_hash)
    return Prepared(panel, store, inspection.meta.name, executor)


def gathered(prepared: Prepared) -> Panel:
    """The panel with its cells in this process (its blocks' cells gathered in order)."""
    import dataclasses

    from autovend.calibration.blocks import block_cells_of

    if len(prepared.panel.cells):
        return prepared.panel
    cells = pd.concat(prepared.store.map(block_cells_of), ignore_index=True)
    return dataclasses.replace(prepared.panel, cells=cells)


def rescattered(prepared: Prepared, panel: Panel) -> Prepared:
    """The panel's new cells (in this process) held in blocks where the prepared ones were (`availability`)."""
    prepared.store.close()
    if prepared.executor is None:
        return Prepared(panel, panel_store(panel), prepared.source_name)
    executor = prepared.executor
    local = panel_store(panel)
    blocks: list[Block] = local.map(_own)
    ranges = local.ranges
    weights = [len(b.cells) for b in blocks]
    layout = [g for g in groups_of(weights, executor.n_groups) if g]
    refs = executor.scatter([[blocks[b] for b in g] for g in layout])
    store = remote_store(executor, _as_group, [(r,) for r in refs], layout, ranges)
    executor.release(refs)
    lean = Panel(**{**panel.__dict__, "cells": panel.cells.iloc[:0].copy()})
    return Prepared(lean, store, prepared.source_name, executor)


def _own(block: Block) -> Block:
    return Block(block.lo, block.hi, block.cells.copy(), block.machine_days, block.cap_est, index=block.index)


def _as_group(blocks: list[Block]) -> list[Block]:
    return blocks
