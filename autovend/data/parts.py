"""Partitioned sources: orders and inventory as hive-partitioned Parquet datasets, on any filesystem fsspec reaches.

A partitioned source is a source folder whose orders (and inventory, when it has one) are folders instead of files:

    source.yaml  machines.csv  products.csv  [weather.csv  calendar.csv]
    orders/machine_id=SH0001/month=2024-06/part-0.parquet
    orders/machine_id=SH0001/month=2024-07/part-0.parquet  ...
    inventory/machine_id=SH0001/part-0.parquet  ...

The folders under orders/ and inventory/ are hive partitions (`key=value`, values percent-encoded) by
`machine_id`, `month` (YYYY-MM, the month of the rows' `ts`) or both, in either order; a file holds the table's
other columns (it may hold the partition's columns too, which must then agree with its folders). The source is
a local path or a URL (`file:///data/op`, `s3://bucket/op`, any filesystem fsspec knows); the small tables are
read whole, the partitioned ones one file at a time. Files whose names start with `.` or `_` are ignored, as
Parquet writers' marker files are.
"""

from __future__ import annotations

import hashlib
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from autovend.data.contract import META_FILE, TABLES
from autovend.data.source import TableReadError
from autovend.data.violations import Violation

PARTITIONED = ("orders", "inventory")  # the tables a source may partition
PARTITION_KEYS = ("machine_id", "month")
MONTH_PATTERN = r"\d{4}-(0[1-9]|1[0-2])"
SMALL_FILES = tuple(name for t in TABLES if t.stem not in PARTITIONED for name in t.file_names)
_CHUNK = 1 << 20
_LAYOUT_FIX = (
    "write each partitioned table as hive-partitioned Parquet: {stem}/machine_id=ID/part-0.parquet, "
    "{stem}/month=YYYY-MM/part-0.parquet or both (`autovend adapt ... --partitioned` writes one)"
)


@dataclass(frozen=True, eq=False)
class Location:
    """A source's filesystem (fsspec) and its root path on it; `url` as the user gave it."""

    fs: Any
    root: str
    url: str

    def path(self, name: str) -> str:
        """The path of `name` (a '/'-separated path relative to the source) on the filesystem."""
        return f"{self.root.rstrip('/')}/{name}"

    @property
    def local(self) -> Path | None:
        """The source folder as a local path (None on another filesystem)."""
        from fsspec.implementations.local import LocalFileSystem

        return Path(self.root) if isinstance(self.fs, LocalFileSystem) else None


def locate(source: str | Path) -> Location:
    """The Location of a source given as a local path or an fsspec URL."""
    from fsspec.core import url_to_fs

    text = str(source)
    if "://" not in text:
        text = str(Path(text).absolute())
    fs, root = url_to_fs(text)
    return Location(fs, str(root).rstrip("/") or "/", str(source))


def is_partitioned(source: str | Path) -> bool:
    """Whether the source keeps its orders as a partitioned folder (orders/) rather than one file."""
    if "://" not in str(source):
        return (Path(source) / "orders").is_dir()
    loc = locate(source)
    return bool(loc.fs.isdir(loc.path("orders")))


@dataclass(frozen=True)
class PartFile:
    """One file of a partitioned table: its path in the source ('/'-separated) and its folders' partition keys."""

    stem: str
    name: str  # relative to the source: what a violation names
    keys: tuple[tuple[str, str], ...]

    def key(self, name: str) -> str | None:
        """The value of partition key `name` from the file's folders (None when not partitioned by it)."""
        return dict(self.keys).get(name)


def partition_files(loc: Location, stem: str) -> tuple[list[PartFile], list[Violation]]:
    """The Parquet files of the partitioned table `stem`, in path order, and what is wrong with its layout."""
    base = loc.path(stem)
    found = sorted(loc.fs.find(base, detail=False)) if loc.fs.isdir(base) else []
    parts: list[PartFile] = []
    bad: list[Violation] = []
    fix = _LAYOUT_FIX.format(stem=stem)
    for path in found:
        rel = f"{stem}/{str(path)[len(base) :].lstrip('/')}"
        pieces = rel.split("/")
        if any(p.startswith((".", "_")) for p in pieces[1:]):
            continue
        if not pieces[-1].endswith(".parquet"):
            bad.append(
                Violation(rel, "is not a Parquet file (.parquet)", f"keep only the table's Parquet files; {fix}")
            )
            continue
        keys, problem = _hive_keys(pieces[1:-1])
        if problem is not None:
            bad.append(Violation(rel, problem, fix))
            continue
        parts.append(PartFile(stem, rel, keys))
    if not parts and not bad:
        bad.append(Violation(f"{stem}/", "holds no Parquet file", fix))
    return parts, bad


def _hive_keys(folders: list[str]) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """The (key, value) of each folder, or what is wrong with one."""
    import re

    keys: list[tuple[str, str]] = []
    for folder in folders:
        key, eq, value = folder.partition("=")
        if not eq:
            return (), f"is in the folder {folder!r}, which is not a hive partition (key=value)"
        if key not in PARTITION_KEYS:
            return (), f"is in a folder of the partition key {key!r}, which is not machine_id or month"
        if any(k == key for k, _ in keys):
            return (), f"is in two folders of the partition key {key!r}"
        value = urllib.parse.unquote(value)
        if key == "month" and re.fullmatch(MONTH_PATTERN, value) is None:
            return (), f"is in the folder {folder!r}, whose month is not written YYYY-MM"
        if not value:
            return (), f"is in the folder {folder!r}, whose value is blank"
        keys.append((key, value))
    return tuple(keys), None


def read_part(loc: Location, part: PartFile, columns: tuple[str, ...]) -> pd.DataFrame:
    """The partition file as read, with its machine_id partition key as a column when the file has none.

    Raises TableReadError (what is wrong and what to fix) when it cannot be read as a table; nested columns
    are refused when they are contract columns and turned into text otherwise, as for a whole Parquet table.
    """
    try:
        with loc.fs.open(loc.path(part.name), "rb") as handle:
            table = pq.read_table(handle)
    except (OSError, ValueError, pa.ArrowException) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TableReadError(
            f"cannot be read as a Parquet file: {detail}", "write the partition file again with a Parquet writer"
        ) from None
    for field in table.schema:
        if pa.types.is_nested(field.type) and field.name in columns:
            raise TableReadError(
                f"holds {field.type} values (lists or records), not one value per cell",
                f"store one plain value (number, text, date or time) per cell in {field.name}",
                column=field.name,
            )
    frame = table.to_pandas()
    for field in table.schema:
        if pa.types.is_nested(field.type):
            frame[field.name] = frame[field.name].map(lambda v: None if v is None else str(v))
    machine = part.key("machine_id")
    if machine is not None and "machine_id" not in frame.columns:
        frame.insert(0, "machine_id", pd.Series(machine, index=frame.index, dtype="str"))
    frame.columns = [str(c) for c in frame.columns]
    return frame.reset_index(drop=True)


def file_digest(loc: Location, name: str) -> tuple[int, str]:
    """(size, sha256 hex) of a file of the source."""
    digest = hashlib.sha256()
    size = 0
    with loc.fs.open(loc.path(name), "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def combined_hash(files: list[tuple[str, int, str]]) -> str:
    """The content hash of a partitioned source: sha256 over its files' (path, size, sha256) in path order."""
    digest = hashlib.sha256()
    for name, size, hexdigest in sorted(files):
        digest.update(name.encode("utf-8") + b"\0" + size.to_bytes(8, "big") + bytes.fromhex(hexdigest))
    return digest.hexdigest()


def small_files_folder(loc: Location, work: Path) -> Path:
    """A local folder with the source's small files (source.yaml, machines, products, weather, calendar).

    The source folder itself when it is local; else the files copied into `work` (they are read whole anyway).
    """
    if loc.local is not None:
        return loc.local
    for name in (META_FILE, *SMALL_FILES):
        if loc.fs.isfile(loc.path(name)):
            (work / name).write_bytes(loc.fs.cat_file(loc.path(name)))
    return work


def temporary_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for the small files of a source on another filesystem."""
    return tempfile.TemporaryDirectory(prefix="autovend-source-")
