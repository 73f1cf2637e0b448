"""Build an N-times larger operator from a source folder: its records copied onto N machine sets.

Copy i of machine `SH0001` is `SH0001` for i = 0 and `SH0001-x02` for i = 2 (order ids get the same
suffix); products, weather and calendar are shared. Every copy sells exactly what the original sold,
so the result is a valid source whose panel has N times the cells of the original. Run as

    .venv/bin/python benchmarks/scaled_source.py data/raw/synthetic-cn /tmp/cn-x10 --copies 10
    .venv/bin/python benchmarks/scaled_source.py data/raw/synthetic-cn /tmp/cn-x200 --copies 200 --partitioned

`--partitioned` writes orders and inventory as hive-partitioned Parquet by month (`autovend.data.parts`), each
month's rows in files of `--copies-per-file` copies (orders/month=2024-06/part-00003.parquet: copies 30-39), the
values parsed as the check parses the CSV's; the generated sources are benchmark inputs, never committed.

The source folder is only read; the output folder must not exist yet.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import yaml

SHARED = ("products", "weather", "calendar")  # tables copied once, as they are
PER_MACHINE = {"machines": ("machine_id",), "orders": ("machine_id", "order_id"), "inventory": ("machine_id",)}


def _read(path: Path) -> pa.Table:
    """A CSV table with every column as text (so values are copied exactly as written)."""
    names = pacsv.read_csv(path, read_options=pacsv.ReadOptions(block_size=1 << 16)).column_names
    convert = pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False)
    return pacsv.read_csv(path, convert_options=convert)


def _copy(table: pa.Table, columns: tuple[str, ...], i: int) -> pa.Table:
    if i == 0:
        return table
    suffix = f"-x{i:02d}"
    for name in columns:
        col = pc.binary_join_element_wise(table[name], pa.scalar(suffix), "")
        table = table.set_column(table.column_names.index(name), name, col)
    return table


def build_scaled_source(src: Path, out: Path, copies: int, fmt: str = "csv") -> Path:
    """Write `copies` machine sets of the source folder `src` to the new folder `out` (CSV or Parquet tables)."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    out.mkdir(parents=True, exist_ok=False)
    meta = yaml.safe_load((src / "source.yaml").read_text(encoding="utf-8"))
    name = meta["name"]
    meta["name"] = f"{name}-x{copies}"
    meta["description"] = f"{copies} copies of the machines of {name} (benchmark source)"
    (out / "source.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True), encoding="utf-8")
    for stem in (*SHARED, *PER_MACHINE):
        path = src / f"{stem}.csv"
        if not path.is_file():
            continue
        if stem in SHARED:
            shutil.copyfile(path, out / path.name)
            continue
        table = _read(path)
        target = out / f"{stem}.{'csv' if fmt == 'csv' else 'parquet'}"
        if fmt == "csv":
            options = pacsv.WriteOptions(quoting_style="none")  # ids, times and numbers hold no comma or quote
            with pacsv.CSVWriter(target, table.schema, write_options=options) as writer:
                for i in range(copies):
                    writer.write_table(_copy(table, PER_MACHINE[stem], i))
        else:
            with pq.ParquetWriter(target, table.schema) as writer:
                for i in range(copies):
                    writer.write_table(_copy(table, PER_MACHINE[stem], i))
    return out


def build_partitioned_source(src: Path, out: Path, copies: int, copies_per_file: int = 10) -> Path:
    """Write `copies` machine sets of the flat source `src` to the new folder `out`, orders and inventory partitioned.

    Each month's rows of `copies_per_file` consecutive copies go to one file (module docstring).
    """
    import pandas as pd

    from autovend.data.contract import TABLES_BY_STEM
    from autovend.data.partwrite import typed_table
    from autovend.data.source import read_table_file

    if copies < 1 or copies_per_file < 1:
        raise ValueError("copies and copies_per_file must be at least 1")
    out.mkdir(parents=True, exist_ok=False)
    meta = yaml.safe_load((src / "source.yaml").read_text(encoding="utf-8"))
    name = meta["name"]
    meta["name"] = f"{name}-x{copies}"
    meta["description"] = f"{copies} copies of the machines of {name} (benchmark source, partitioned by month)"
    (out / "source.yaml").write_text(yaml.safe_dump(meta, allow_unicode=True), encoding="utf-8")
    for stem in SHARED:
        if (src / f"{stem}.csv").is_file():
            shutil.copyfile(src / f"{stem}.csv", out / f"{stem}.csv")
    machines = _read(src / "machines.csv")
    options = pacsv.WriteOptions(quoting_style="none")
    with pacsv.CSVWriter(out / "machines.csv", machines.schema, write_options=options) as writer:
        for i in range(copies):
            writer.write_table(_copy(machines, PER_MACHINE["machines"], i))
    for stem in ("orders", "inventory"):
        if not (src / f"{stem}.csv").is_file():
            continue
        typed = typed_table(stem, read_table_file(src / f"{stem}.csv", TABLES_BY_STEM[stem].column_names))
        month = typed["ts"].dt.strftime("%Y-%m")
        for m in sorted(month.unique()):
            rows = typed[(month == m).to_numpy()].reset_index(drop=True)
            folder = out / stem / f"month={m}"
            folder.mkdir(parents=True)
            for g, first in enumerate(range(0, copies, copies_per_file)):
                frames = []
                for i in range(first, min(first + copies_per_file, copies)):
                    frame = rows.copy()
                    if i:
                        for col in PER_MACHINE[stem]:
                            frame[col] = frame[col].astype("string") + f"-x{i:02d}"  # a missing id stays missing
                    frames.append(frame)
                table = pa.Table.from_pandas(pd.concat(frames, ignore_index=True), preserve_index=False)
                pq.write_table(table, folder / f"part-{g:05d}.parquet")
    return out


def main() -> None:
    """Command line: SRC OUT --copies N [--format csv|parquet] [--partitioned [--copies-per-file C]]."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--copies", type=int, required=True)
    parser.add_argument("--format", choices=["csv", "parquet"], default="csv")
    parser.add_argument("--partitioned", action="store_true", help="orders and inventory partitioned by month")
    parser.add_argument("--copies-per-file", type=int, default=10)
    args = parser.parse_args()
    if args.partitioned:
        build_partitioned_source(args.src, args.out, args.copies, args.copies_per_file)
    else:
        build_scaled_source(args.src, args.out, args.copies, args.format)
    print(f"wrote {args.out} ({args.copies} machine sets)")


if __name__ == "__main__":
    main()
