"""Writing a table of a source as a hive-partitioned Parquet dataset (`autovend.data.parts`).

The table's columns are parsed to the contract's types first (as `autovend check` parses them), so a partition
holds the values the check reads from the flat table: the same source, whether flat or partitioned. Rows keep
their order within a partition; partitions are written in the order of their keys.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from autovend.data.contract import TABLES_BY_STEM, Kind
from autovend.data.parts import PARTITION_KEYS
from autovend.data.source import coerce_column
from autovend.errors import ConfigError, SourceError

PART_FILE = "part-0.parquet"


def partition_keys(text: str) -> tuple[str, ...]:
    """The partition keys named in `text` ("machine_id", "month", "machine_id,month", ...); ConfigError if unknown."""
    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in keys if k not in PARTITION_KEYS]
    if not keys or bad or len(set(keys)) != len(keys):
        raise ConfigError(
            f"partition by {text!r}: give machine_id, month or both (comma-separated, e.g. machine_id,month)"
        )
    return keys


def typed_table(stem: str, frame: pd.DataFrame) -> pd.DataFrame:
    """The contract's columns of `frame` (text or typed) parsed to their types; SourceError if a value is bad."""
    spec = TABLES_BY_STEM[stem]
    out: dict[str, pd.Series] = {}
    for col in spec.columns:
        if col.name not in frame.columns:
            continue
        coerced = coerce_column(col, frame[col.name].reset_index(drop=True))
        if coerced.issues:
            issue = coerced.issues[0]
            row = int(np.flatnonzero(issue.mask)[0]) + 1
            raise SourceError(f"{stem}, row {row}, column {col.name}: {issue.problem}. Fix: {issue.fix}")
        values = coerced.values
        if col.kind is Kind.INTEGER and col.required:
            values = values.astype("int64")
        out[col.name] = values
    return pd.DataFrame(out)


def write_partitioned(frame: pd.DataFrame, folder: Path, stem: str, by: tuple[str, ...]) -> int:
    """Write the table `stem` as `folder`/`stem`/key=value/.../part-0.parquet partitioned `by`; the files written."""
    typed = typed_table(stem, frame)
    labels = []
    for key in by:
        if key == "machine_id":
            labels.append(typed["machine_id"].astype(str).to_numpy(dtype=object))
        else:
            labels.append(typed["ts"].dt.strftime("%Y-%m").to_numpy(dtype=object))
    group = pd.MultiIndex.from_arrays(labels) if len(labels) > 1 else pd.Index(labels[0])
    codes, uniques = pd.factorize(group, sort=True)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    kept = typed.drop(columns=[k for k in by if k in typed.columns])
    schema = pa.Schema.from_pandas(kept, preserve_index=False)
    for g in range(len(uniques)):
        values = uniques[g] if isinstance(uniques[g], tuple) else (uniques[g],)
        sub = folder / stem
        for key, value in zip(by, values, strict=True):
            sub = sub / f"{key}={urllib.parse.quote(str(value), safe='')}"
        sub.mkdir(parents=True, exist_ok=True)
        rows = order[bounds[g] : bounds[g + 1]]
        table = pa.Table.from_pandas(kept.iloc[rows], schema=schema, preserve_index=False)
        pq.write_table(table, sub / PART_FILE)
    return len(uniques)


def partition_source(src: Path, out: Path, by: tuple[str, ...], *, force: bool = False) -> int:
    """Write the flat source folder `src` as the source folder `out` with orders and inventory partitioned `by`.

    The small files are copied as they are; `src` is only read. `out` must be absent, empty or an earlier source
    written by autovend unless `force` (`autovend.io.output_dir`). Returns the partition files written.
    """
    import shutil

    from autovend.data.contract import CONTRACT_FILES
    from autovend.data.source import read_table_file
    from autovend.io import OutputKind, check_output_dir, output_dir

    check_output_dir(out, OutputKind.SOURCE, force=force, inputs=(src,))
    files = 0
    with output_dir(out, OutputKind.SOURCE, force=force) as tmp:
        for name in CONTRACT_FILES:
            path = src / name
            if not path.is_file():
                continue
            stem = name.split(".")[0]
            if stem in ("orders", "inventory"):
                files += write_partitioned(read_table_file(path, TABLES_BY_STEM[stem].column_names), tmp, stem, by)
            else:
                shutil.copyfile(path, tmp / name)
    return files
