"""Reading an export as text cells: streamed, bounded, and every problem named by file, line, row and column.

An export is a CSV file, plain or compressed (gzip, bzip2, xz or a zip holding one file, recognised by their
first bytes whatever the file is called). It is read as a stream and never inflated whole first: reading stops
with an AdaptError as soon as the text passes `file.max_text_mb` of the mapping (1,024 MB by default), a line
passes `MAX_LINE_CHARS` characters or a cell `MAX_CELL_CHARS`, so a compressed file that inflates to
gigabytes, or a file with no line breaks, is refused in seconds with bounded memory.

The header must name each column once. A row whose number of cells differs from the header's is kept as a
*ragged* row (its cells are not trusted): `adapt_table` treats it as a bad row, refused or left out as
`bad_rows` says. Blank lines, and rows of blank cells only, are read as blank rows. A quote that opens a cell
and never closes, or text after a closing quote, stops reading with the line and column where it starts.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import gzip
import io
import lzma
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final, Protocol

import pandas as pd

from autovend.data.adapters.mapping import DOC, FileFormat
from autovend.errors import AdaptError

MEGABYTE: Final = 1_000_000
MAX_LINE_CHARS: Final = 1_048_576  # characters on one line of the export
MAX_CELL_CHARS: Final = 131_072  # characters in one cell (Python's csv limit, never raised here)
RAGGED_ATTR: Final = "autovend.ragged_rows"  # DataFrame.attrs key: {row index (0-based): number of cells}
_MAGIC: Final = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PAR1", "parquet"),
)
_UTF16_BOMS: Final = (b"\xff\xfe", b"\xfe\xff")
ENCODING_FIX: Final = "set file.encoding in the mapping to the export's encoding (e.g. cp1252, latin-1, utf-16)"
SIZE_FIX: Final = (
    "export only the rows and columns the mapping needs, or raise file.max_text_mb in the mapping if the machine "
    "has the memory (about ten times the text)"
)
_COMPRESSED_ERRORS = (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile, zlib.error)
_UNDECODED: Final = re.compile("[\udc80-\udcff]")  # bytes surrogateescape kept: not text in the encoding


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _TooLarge(Exception):
    """The decompressed text passed the limit (internal: turned into an AdaptError with the file's name)."""


class _Capped(io.RawIOBase):
    """A binary stream that raises `_TooLarge` once more than `limit` bytes have been read from it."""

    def __init__(self, inner: _Readable, limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer)
        chunk = self._inner.read(min(len(view), self._limit + 1 - self.read_bytes) or 1)
        n = len(chunk)
        view[:n] = chunk
        self.read_bytes += n
        if self.read_bytes > self._limit:
            raise _TooLarge
        return n


def compression(path: Path) -> str | None:
    """The compression (or other binary format) of `path` by its first bytes, or None for plain text."""
    with path.open("rb") as fh:
        head = fh.read(8)
    return next((name for magic, name in _MAGIC if head.startswith(magic)), None)


def _open_binary(path: Path, kind: str | None, stack: contextlib.ExitStack[bool | None]) -> _Readable:
    """The export's bytes, decompressed on the fly."""
    if kind is None:
        return stack.enter_context(path.open("rb"))
    if kind == "gzip":
        return stack.enter_context(gzip.open(path, "rb"))
    if kind == "bzip2":
        return stack.enter_context(bz2.open(path, "rb"))
    if kind == "xz":
        return stack.enter_context(lzma.open(path, "rb"))
    if kind == "zip":
        archive = stack.enter_context(zipfile.ZipFile(path))
        members = [i for i in archive.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")]
        if len(members) != 1:
            names = ", ".join(i.filename for i in members[:5]) or "no file"
            raise AdaptError(
                f"{path} is a zip archive holding {len(members)} files ({names}), not one export. "
                "Fix: unzip it and give the export's CSV file itself"
            )
        return stack.enter_context(archive.open(members[0]))
    what = "a Parquet file" if kind == "parquet" else f"{kind}-compressed"
    raise AdaptError(
        f"{path} is {what}, which the adapter does not read. Fix: give the export as a CSV file, plain or "
        "compressed with gzip, bzip2, xz or zip"
    )


class _Lines:
    """The text's lines, each at most `MAX_LINE_CHARS` characters (a longer one is refused, not read whole).

    Bytes the encoding cannot read are refused naming their line. `first` is the first line given since the
    last `mark()` and `first_number` its number: where the record being read starts.
    """

    def __init__(self, text: IO[str], where: str, encoding: str, encoding_fix: str) -> None:
        self._text = text
        self._where = where
        self._encoding = encoding
        self._encoding_fix = encoding_fix
        self.number = 0
        self.first = ""
        self.first_number = 1

    def mark(self) -> None:
        self.first, self.first_number = "", self.number + 1

    def __iter__(self) -> Iterator[str]:
        while True:
            line = self._text.readline(MAX_LINE_CHARS + 1)
            if not line:
                return
            self.number += 1
            if len(line) > MAX_LINE_CHARS:
                raise AdaptError(
                    f"{self._where}, line {self.number}: the line is longer than {MAX_LINE_CHARS:,} characters, so "
                    "the file is not a table of one row per line. Fix: give the export as a CSV file with one order "
                    f"line per line (see {DOC})"
                )
            if "\x00" in line:
                raise AdaptError(
                    f"{self._where}, line {self.number}: the line holds a NUL byte, as binary files and UTF-16 text "
                    f"do, not CSV text. Fix: {self._encoding_fix}, or remove the NUL bytes"
                )
            if (bad := _UNDECODED.search(line)) is not None:
                byte = ord(bad.group()) - 0xDC00
                raise AdaptError(
                    f"{self._where}, line {self.number}: the byte 0x{byte:02x} cannot be read as {self._encoding} "
                    f"text. Fix: {self._encoding_fix}"
                )
            if not self.first:
                self.first = line
            yield line


def _quote_cell(line: str, delimiter: str) -> int:
    """The index of the cell of `line` where a quote goes wrong: text follows its closing quote, or it stays open."""
    cell, quoted, at_start, i = 0, False, True, 0
    while i < len(line):
        char = line[i]
        if quoted:
            if char == '"':
                if line[i + 1 : i + 2] == '"':
                    i += 2
                    continue
                quoted = False
                if line[i + 1 : i + 2] not in ("", delimiter, "\r", "\n"):
                    return cell
        elif char == delimiter:
            cell, at_start = cell + 1, True
            i += 1
            continue
        elif char == '"' and at_start:
            quoted = True
        at_start = False
        i += 1
    return cell


def _column_name(header: list[str], index: int) -> str:
    if not header:
        return f"{index + 1}"
    if index < len(header):
        return f"{header[index] or '(unnamed)'} (column {index + 1})"
    return f"{index + 1} (after the last column, {header[-1] or '(unnamed)'})"


def _csv_problem(exc: csv.Error, where: str, lines: _Lines, fmt: FileFormat, header: list[str], row: int) -> AdaptError:
    """An AdaptError for a CSV syntax error in the record starting at `lines.first`, naming its cell."""
    message = str(exc)
    at = f"row {row} (line {lines.first_number})" if header else f"line {lines.first_number} (the header)"
    column = _column_name(header, _quote_cell(lines.first, fmt.delimiter))
    if "field larger than field limit" in message:
        return AdaptError(
            f"{where}, {at}, column {column}: a cell is longer than {MAX_CELL_CHARS:,} characters; usually a quote "
            '(") opens the cell and never closes, so the following lines were read into it. Fix: remove the stray '
            'quote, or write a quote inside a quoted cell as two ("")'
        )
    if "unexpected end of data" in message:
        return AdaptError(
            f'{where}, {at}, column {column}: a quote (") opens the cell and never closes before the end of the '
            'file. Fix: remove the stray quote, or write a quote inside a quoted cell as two ("")'
        )
    return AdaptError(
        f"{where}, {at}, column {column}: {message} (text follows a closing quote). Fix: quote the whole cell and "
        'write a quote inside it as two (""), or remove the stray quote'
    )


def _decoded(binary: _Capped, path: Path, fmt: FileFormat, encoding_fix: str) -> tuple[IO[str], str]:
    """The export as text in the mapping's encoding (a UTF-8 byte-order mark is skipped), and the encoding."""
    encoding = "utf-8-sig" if fmt.encoding.lower().replace("_", "-") in ("utf-8", "utf8") else fmt.encoding
    try:
        codecs.lookup(encoding)
    except LookupError as exc:
        raise AdaptError(
            f"unknown file.encoding {fmt.encoding!r} in the mapping; use e.g. utf-8, cp1252, latin-1"
        ) from exc
    buffered = io.BufferedReader(binary)
    if encoding == "utf-8-sig" and buffered.peek(2)[:2] in _UTF16_BOMS:
        fix = "set file.encoding: utf-16 in the mapping" if encoding_fix == ENCODING_FIX else encoding_fix
        raise AdaptError(f"{path} is UTF-16 text, not UTF-8. Fix: {fix}")
    return io.TextIOWrapper(buffered, encoding=encoding, errors="surrogateescape", newline=""), encoding


def _rows(text: IO[str], path: Path, fmt: FileFormat, encoding_fix: str) -> tuple[list[str], list[list[str]]]:
    """The header and the data rows (blank lines skipped), as `csv` reads them."""
    where = path.name
    lines = _Lines(text, where, fmt.encoding, encoding_fix)
    reader = csv.reader(lines, delimiter=fmt.delimiter, strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    seen: list[dict[str, str]] = []  # per column, each distinct cell once: repeated cells share one string
    try:
        for record in reader:
            if not record:
                pass
            elif header is None:
                header = record
                seen = [{} for _ in header]
            elif len(record) == len(seen):
                rows.append([known.setdefault(cell, cell) for known, cell in zip(seen, record, strict=True)])
            else:
                rows.append(record)
            lines.mark()
    except csv.Error as exc:
        raise _csv_problem(exc, where, lines, fmt, header or [], len(rows) + 1) from None
    return header or [], rows


def _check_header(header: list[str], where: str) -> None:
    if not header:
        raise AdaptError(
            f"{where} is empty: it has no header row. Fix: export the table with a header row naming its columns"
        )
    seen: dict[str, int] = {}
    for index, name in enumerate(header):
        if name in seen:
            label = repr(name) if name else "(blank)"
            raise AdaptError(
                f"{where}, line 1 (the header), column {index + 1}: the header repeats the column name {label} "
                f"(columns {seen[name] + 1} and {index + 1}), so they cannot be told apart. Fix: give each "
                "column its own name in the export (delete empty columns at the end of a spreadsheet)"
            )
        seen[name] = index


def _frame(header: list[str], rows: list[list[str]]) -> pd.DataFrame:
    """The rows as a DataFrame of text; ragged rows (other than all-blank ones) listed in `attrs[RAGGED_ATTR]`."""
    width = len(header)
    ragged: dict[int, int] = {}
    for i, row in enumerate(rows):
        if len(row) != width:
            if any(cell.strip() for cell in row):
                ragged[i] = len(row)
            rows[i] = (row + [""] * width)[:width]
    frame = pd.DataFrame(rows, columns=header, dtype=object) if rows else pd.DataFrame(columns=header, dtype=object)
    frame.attrs[RAGGED_ATTR] = ragged
    return frame


def read_export(
    path: str | Path,
    file_format: FileFormat | None = None,
    *,
    encoding_fix: str = ENCODING_FIX,
    size_fix: str = SIZE_FIX,
) -> pd.DataFrame:
    """Read a one-table CSV export (plain or compressed) with every cell as text ('' for blank).

    The rows whose number of cells differs from the header's are listed in `frame.attrs[RAGGED_ATTR]`
    (0-based index -> cells found); their cells are padded or cut to the header. AdaptError names the file,
    line, column and fix of anything that cannot be read (`encoding_fix` and `size_fix` say what to do about
    text in another encoding and too much text: by default, what to change in the mapping); nothing is written.
    """
    path = Path(path)
    fmt = file_format or FileFormat()
    if path.is_dir():
        raise AdaptError(f"{path} is a folder; give the path of the export file")
    if path.exists() and not path.is_file():
        raise AdaptError(f"{path} is not a regular file (a device or a pipe); give the path of the export file")
    if not path.is_file():
        raise AdaptError(f"input CSV not found: {path}; give the path of the export file")
    limit = fmt.max_text_mb * MEGABYTE
    kind = compression(path)
    try:
        with contextlib.ExitStack() as stack:
            text, _ = _decoded(_Capped(_open_binary(path, kind, stack), limit), path, fmt, encoding_fix)
            header, rows = _rows(text, path, fmt, encoding_fix)
    except _TooLarge:
        inflated = f" (it is {kind}-compressed)" if kind is not None and kind != "zip" else ""
        inflated = " (it is a zip archive)" if kind == "zip" else inflated
        raise AdaptError(
            f"{path} holds more than {fmt.max_text_mb:,} MB of text{inflated}; reading stopped there. Fix: {size_fix}"
        ) from None
    except UnicodeDecodeError as exc:
        raise AdaptError(f"cannot read {path} as {fmt.encoding} text ({exc.reason}). Fix: {encoding_fix}") from exc
    except _COMPRESSED_ERRORS as exc:
        what = f"{kind} data" if kind is not None else "a file"
        raise AdaptError(
            f"cannot read {path} as {what}: {exc}. Fix: give a complete export (compress it again, or give the "
            "uncompressed CSV)"
        ) from exc
    _check_header(header, path.name)
    return _frame(header, rows)
