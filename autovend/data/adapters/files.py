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

from autovend.data.adapters.mapping import FileFormat, load_mapping
from autovend.data.adapters.result import AdaptResult
from autovend.data.adapters.table import adapt_table
from autovend.data.contract import META_FILE
from autovend.errors import AdaptError
from autovend.io import OutputKind, check_output_dir, output_dir

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def read_export(path: str | Path, file_format: FileFormat | None = None) -> pd.DataFrame:
    """Read a one-table CSV export with every cell as text ('' for blank); AdaptError naming the file and fix."""
    path = Path(path)
    fmt = file_format or FileFormat()
    if not path.is_file():
        raise AdaptError(f"input CSV not found: {path}; give the path of the export file")
    encoding = "utf-8-sig" if fmt.encoding.lower().replace("_", "-") in ("utf-8", "utf8") else fmt.encoding
    with path.open("rb") as fh:
        head = fh.read(2)
    if encoding == "utf-8-sig" and head in _UTF16_BOMS:
        raise AdaptError(f"{path} is UTF-16 text, not UTF-8. Fix: set file.encoding: utf-16 in the mapping")
    try:
        return pd.read_csv(path, encoding=encoding, sep=fmt.delimiter, dtype=str, keep_default_na=False)
    except LookupError as exc:
        raise AdaptError(
            f"unknown file.encoding {fmt.encoding!r} in the mapping; use e.g. utf-8, cp1252, latin-1"
        ) from exc
    except UnicodeDecodeError as exc:
        raise AdaptError(
            f"cannot read {path} as {fmt.encoding} text ({exc.reason} at byte {exc.start}). Fix: set file.encoding in "
            "the mapping to the export's encoding (e.g. cp1252, latin-1, utf-16)"
        ) from exc
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise AdaptError(
            f"cannot read {path} as a CSV with a header row and {fmt.delimiter!r} between cells: {exc}. Fix: check "
            "file.delimiter in the mapping"
        ) from exc


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


def write_source(files: Mapping[str, str], out_dir: Path, *, force: bool = False) -> None:
    """Write `files` as the folder `out_dir`, replacing it as a whole only once every file is written."""
    with output_dir(out_dir, OutputKind.SOURCE, force=force) as tmp:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8", newline="")


def write_table_source(
    export: str | Path, mapping_path: str | Path, out_dir: str | Path, *, force: bool = False
) -> AdaptResult:
    """Read the export and its mapping, adapt, and write the source folder `out_dir` (the inputs are only read)."""
    export, mapping_path, out = Path(export), Path(mapping_path), Path(out_dir)
    check_output(out, [export, mapping_path], force=force)
    mapping = load_mapping(mapping_path)
    result = adapt_table(read_export(export, mapping.file), mapping, export.name)
    write_source(source_files(result), out, force=force)
    return result
