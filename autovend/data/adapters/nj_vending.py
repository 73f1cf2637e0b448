"""The public New Jersey vending export (Kaggle "Vending Machine Sales", 2022): its mapping and entry points.

The export has one row per order line with 18 columns (where it comes from: ``docs/real-data.md``). Its
whole conversion is the mapping ``nj_vending.yaml`` next to this module, run by the generic adapter
(:mod:`autovend.data.adapters.table`): the export needs no code of its own. ``autovend adapt nj-vending
CSV -o DIR`` is ``autovend adapt table CSV --map autovend/data/adapters/nj_vending.yaml -o DIR``.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

from autovend.data.adapters.files import check_output, read_export, source_files, write_adapted, write_source
from autovend.data.adapters.mapping import TableMapping, load_mapping
from autovend.data.adapters.result import AdaptResult
from autovend.data.adapters.table import adapt_table

MAPPING_PATH = Path(__file__).with_name("nj_vending.yaml")
EXPORT_NAME = "vending_machine_sales.csv"


@cache
def nj_mapping() -> TableMapping:
    """The packaged mapping of the NJ export."""
    return load_mapping(MAPPING_PATH)


def read_nj_vending_csv(csv_path: Path) -> pd.DataFrame:
    """Read the export as text (UTF-8 with or without BOM, any line endings); the file is only read."""
    return read_export(csv_path, nj_mapping().file)


def adapt_nj_vending(df_raw: pd.DataFrame, file: str = EXPORT_NAME) -> AdaptResult:
    """Map the raw NJ export (every column read as text, file order) onto the raw-records contract."""
    return adapt_table(df_raw, nj_mapping(), file)


def write_nj_vending(
    csv_path: Path, out_dir: Path, *, force: bool = False, partition_by: tuple[str, ...] | None = None
) -> AdaptResult:
    """Read the export at ``csv_path``, adapt it and write the source folder ``out_dir`` atomically.

    `partition_by`: the orders as hive-partitioned Parquet by these keys (`autovend.data.partwrite`).
    """
    csv_path, out_dir = Path(csv_path), Path(out_dir)
    check_output(out_dir, [csv_path], force=force)
    result = adapt_nj_vending(read_nj_vending_csv(csv_path), csv_path.name)
    if partition_by is None:
        write_source(source_files(result), out_dir, force=force)
    else:
        write_adapted(result, out_dir, force=force, partition_by=partition_by)
    return result
