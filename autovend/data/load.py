"""The pipeline's entry point to a source folder: `load_source` runs every check and returns the typed tables.

A source that breaks the contract is refused with the check's formatted report. The readers and
coercers live in `autovend.data.source`, the checks in `autovend.data.check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from autovend.data.check import inspect_source
from autovend.data.contract import SourceMeta
from autovend.data.plausibility import CheckSettings
from autovend.errors import SourceError


@dataclass(frozen=True, eq=False)
class Source:
    """A source folder that passed every check, as typed tables (extra columns dropped).

    Ids are str; `ts` is naive datetime64[ns] in the local time of `meta.timezone` (date-only
    values are midnight, see `orders_have_time` / `inventory_have_time`); `qty`, `shelf_qty` int64;
    prices float64; `status` filled with 'completed'; weather and calendar `date` datetime64[ns];
    `is_workday` bool; optional numeric columns float64 with NaN for unknown; optional text columns
    NA for unknown. Optional columns absent from a file are present here, all unknown.
    """

    path: Path
    meta: SourceMeta
    machines: pd.DataFrame
    products: pd.DataFrame
    orders: pd.DataFrame
    inventory: pd.DataFrame | None
    weather: pd.DataFrame | None
    calendar: pd.DataFrame | None
    content_hash: str
    orders_have_time: bool
    inventory_have_time: bool


def load_source(path: str | Path, settings: CheckSettings | None = None) -> Source:
    """Check the source folder at `path` and return its typed tables.

    `settings` holds the plausibility limits (params section `check`, see `load_check_settings`); None
    means the defaults. Raises SourceError carrying the formatted report when the folder breaks the contract.
    """
    from autovend.data.parts import is_partitioned

    if is_partitioned(path):
        return _load_partitioned(path, settings)
    inspection = inspect_source(Path(path), settings)
    report = inspection.report
    if not report.ok or inspection.meta is None or report.summary is None:
        raise SourceError(report.format())
    tables = inspection.tables
    return _source(path, inspection, tables)


def _keep(stem: str, table: pd.DataFrame) -> pd.DataFrame:
    """A clean partition's typed table, kept whole (`load_source` of a partitioned source)."""
    return table


def _load_partitioned(path: str | Path, settings: CheckSettings | None) -> Source:
    """A partitioned source's tables in memory: its partition files' typed tables one after the other."""
    from autovend.data.partcheck import inspect_partitioned
    from autovend.data.parts import locate

    inspection = inspect_partitioned(locate(path), settings, _keep)
    report = inspection.report
    if not report.ok or inspection.meta is None or report.summary is None:
        raise SourceError(report.format())
    tables = dict(inspection.tables)
    for stem in ("orders", "inventory"):
        frames = [r for p, r in zip(inspection.parts, inspection.reduced, strict=True) if p.stem == stem]
        if frames:
            tables[stem] = pd.concat(frames, ignore_index=True)
    return _source(path, inspection, tables)


def _source(path: str | Path, inspection: Any, tables: Mapping[str, pd.DataFrame]) -> Source:
    """The Source of a clean inspection (`report.ok`, with its meta and summary) and its typed tables."""
    return Source(
        path=Path(path),
        meta=inspection.meta,
        machines=tables["machines"],
        products=tables["products"],
        orders=tables["orders"],
        inventory=tables.get("inventory"),
        weather=tables.get("weather"),
        calendar=tables.get("calendar"),
        content_hash=inspection.report.summary.content_hash,
        orders_have_time=inspection.has_time.get("orders", False),
        inventory_have_time=inspection.has_time.get("inventory", False),
    )
