"""What an export reads of a source: its metadata, machines and products, typed as the contract says."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from autovend.data.contract import MACHINES, PRODUCTS, WEATHER, Kind, SourceMeta, TableSpec
from autovend.data.hashing import source_hash
from autovend.data.source import coerce_column, entry_problem, finalise_table, read_meta, read_table_file, table_files
from autovend.errors import SourceError


@dataclass(frozen=True, eq=False)
class SourceTables:
    """The source's metadata (currency, time zone, country), machines, products, weather (if any) and identity."""

    meta: SourceMeta
    machines: pd.DataFrame
    products: pd.DataFrame
    content_hash: str
    weather: pd.DataFrame | None = None  # the optional weather table (date, t_max_c, precip_mm), None without one


def _read_typed(folder: Path, spec: TableSpec) -> pd.DataFrame:
    files = table_files(folder, spec)
    if len(files) != 1:
        raise SourceError(
            f"{folder} needs exactly one of {' or '.join(spec.file_names)}; run `autovend check {folder}`"
        )
    problem = entry_problem(folder, files[0])
    if problem is not None:
        raise SourceError(f"{files[0]} {problem[0]}; {problem[1]}")
    raw = read_table_file(files[0])
    typed: dict[str, pd.Series] = {}
    for col in spec.columns:
        if col.name not in raw.columns:
            if col.required:
                raise SourceError(f"{files[0]} lacks column {col.name}; run `autovend check {folder}`")
            typed[col.name] = pd.Series(np.nan if col.kind in (Kind.INTEGER, Kind.DECIMAL) else pd.NA, index=raw.index)
            continue
        coerced = coerce_column(col, raw[col.name])
        if coerced.issues:
            raise SourceError(
                f"{files[0]} column {col.name} {coerced.issues[0].problem}; run `autovend check {folder}`"
            )
        typed[col.name] = coerced.values
    out = finalise_table(spec, pd.DataFrame(typed, index=raw.index))
    for col in spec.columns:
        if col.kind in (Kind.INTEGER, Kind.DECIMAL) and not col.required:
            out[col.name] = out[col.name].astype("float64")
    return out


def read_source_tables(source_dir: str | Path) -> SourceTables:
    """The metadata, machines and products of a source folder, and its content hash (nothing is written)."""
    folder = Path(source_dir)
    if not folder.is_dir():
        raise SourceError(f"source folder {folder} does not exist; pass the folder the calibration was made from")
    meta, problems = read_meta(folder)
    if meta is None or problems:
        what = "; ".join(p[1] for p in problems) or "cannot be read"
        raise SourceError(f"{folder}/source.yaml {what}; run `autovend check {folder}`")
    return SourceTables(
        meta=meta,
        machines=_read_typed(folder, MACHINES),
        products=_read_typed(folder, PRODUCTS),
        content_hash=source_hash(folder),
        weather=_read_typed(folder, WEATHER) if table_files(folder, WEATHER) else None,
    )
