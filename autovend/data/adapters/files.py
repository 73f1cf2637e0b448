"""The adapters' I/O at the edges: reading an export as text, and writing a source folder atomically.

An export is only ever read. A source folder is written through `autovend.io.atomic_dir` (a temporary
sibling renamed into place, so a failure leaves nothing half-written); a non-empty output folder is
refused unless `force`, and never one that holds an input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import yaml

from autovend.data.adapters.dex import read_audits
from autovend.data.adapters.dex_series import DexSource, adapt_dex
from autovend.data.adapters.dex_write import dex_series
from autovend.data.adapters.mapping import load_mapping
from autovend.data.adapters.reader import read_export
from autovend.data.adapters.result import AdaptResult
from autovend.data.adapters.table import adapt_table
from autovend.data.contract import META_FILE
from autovend.data.partwrite import write_partitioned
from autovend.errors import AdaptError
from autovend.io import OutputKind, check_output_dir, output_dir


def source_files(result: AdaptResult) -> dict[str, str]:
    """The text of each file of the source folder: file name -> content."""
    return {
        META_FILE: yaml.safe_dump(result.source, sort_keys=False, allow_unicode=True, width=100),
        "machines.csv": result.machines.to_csv(index=False, lineterminator="\n"),
        "products.csv": result.products.to_csv(index=False, lineterminator="\n"),
        "orders.csv": result.orders.to_csv(index=False, lineterminator="\n"),
    }


def check_output(out_dir: Path, inputs: Sequence[Path], *, force: bool) -> None:
    """Refuse, before any work, an output folder that holds other files than an earlier source, or an input."""
    check_output_dir(out_dir, OutputKind.SOURCE, force=force, inputs=inputs)


def write_source(
    files: Mapping[str, str],
    out_dir: Path,
    *,
    force: bool = False,
    partitioned: Mapping[str, pd.DataFrame] | None = None,
    by: tuple[str, ...] = (),
) -> None:
    """Write `files` as the folder `out_dir`, replacing it as a whole only once every file is written.

    `partitioned` tables (stem -> frame) are written as hive-partitioned Parquet `by` those keys
    (`autovend.data.partwrite`) instead of a file.
    """
    with output_dir(out_dir, OutputKind.SOURCE, force=force) as tmp:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8", newline="")
        for stem, frame in (partitioned or {}).items():
            write_partitioned(frame, tmp, stem, by)


def write_adapted(result: AdaptResult, out_dir: Path, *, force: bool, partition_by: tuple[str, ...] | None) -> None:
    """Write an adapted source: orders.csv, or with `partition_by` the orders partitioned by those keys."""
    files = source_files(result)
    if partition_by is None:
        write_source(files, out_dir, force=force)
        return
    del files["orders.csv"]
    write_source(files, out_dir, force=force, partitioned={"orders": result.orders}, by=partition_by)


def write_table_source(
    export: str | Path,
    mapping_path: str | Path,
    out_dir: str | Path,
    *,
    force: bool = False,
    partition_by: tuple[str, ...] | None = None,
) -> AdaptResult:
    """Read the export and its mapping, adapt, and write the source folder `out_dir` (the inputs are only read).

    `partition_by`: write the orders as hive-partitioned Parquet by these keys (`autovend.data.partwrite`).
    """
    export, mapping_path, out = Path(export), Path(mapping_path), Path(out_dir)
    check_output(out, [export, mapping_path], force=force)
    mapping = load_mapping(mapping_path)
    result = adapt_table(read_export(export, mapping.file), mapping, export.name)
    write_adapted(result, out, force=force, partition_by=partition_by)
    return result


def write_eva_dts_source(
    audits: Sequence[Path],
    products_csv: Path,
    out_dir: Path,
    meta: dict[str, object],
    *,
    machines_csv: Path | None = None,
    force: bool = False,
) -> DexSource:
    """Read EVA-DTS audit files (and folders of them), adapt them (`dex_series.adapt_dex`), write the source.

    Besides the contract's tables the folder holds visits.csv (machine_id, ts: the reads, i.e. the service visits;
    no stage reads it yet).
    """
    import pandas as pd

    check_output(out_dir, [*audits, products_csv, *([machines_csv] if machines_csv else [])], force=force)
    found = read_audits(list(audits))
    try:
        products = pd.read_csv(products_csv, dtype={"sku_id": str})
        machines = pd.read_csv(machines_csv, dtype=str) if machines_csv else None
    except (OSError, ValueError) as exc:
        raise AdaptError(f"cannot read {products_csv if machines_csv is None else machines_csv}: {exc}") from None
    need = [c for c in ("sku_id", "category_l1", "category_l2") if c not in products]
    if need:
        raise AdaptError(f"{products_csv} lacks the columns {need}; it needs sku_id, category_l1, category_l2")
    res = adapt_dex(found, products, meta, machines)
    files = {
        META_FILE: yaml.safe_dump(res.source, sort_keys=False, allow_unicode=True, width=100),
        "machines.csv": res.machines.to_csv(index=False, lineterminator="\n"),
        "products.csv": res.products.to_csv(index=False, lineterminator="\n"),
        "orders.csv": res.orders.to_csv(index=False, lineterminator="\n"),
        "visits.csv": res.visits.to_csv(index=False, lineterminator="\n"),
    }
    write_source(files, out_dir, force=force)
    return res


def write_dex_audits(source_dir: Path, out_dir: Path, every_days: int = 7, *, force: bool = False) -> int:
    """Write a source's records as EVA-DTS audit series (`dex_write.dex_series`) and its products.csv; the count."""
    files, products = dex_series(source_dir, every_days)
    with output_dir(out_dir, OutputKind.DEX, force=force) as tmp:
        for name, text in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(text.encode("ascii"))
        products.to_csv(tmp / "products.csv", index=False, lineterminator="\n")
    return len(files)
