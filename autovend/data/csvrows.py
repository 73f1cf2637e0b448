"""Naming the row of a CSV that the fast reader cannot read, or loses, so that the message says where and why.

The CSV reader (pyarrow, through pandas) reads a file in blocks of `BLOCK_BYTES`. It stops at a row longer than
a block with "straddling object straddles two block boundaries (try to increase block size?)", and at a row of
another number of cells with "Expected 3 columns, got 1: ...": neither names the row, and the first suggests a
fix that is not the user's. Worse, a double quote that opens a cell and is never closed in a large file makes it
drop the rest of that block without a word (200,000 lines read as 137,016). Such a quote is the usual cause of
all three: the rest of the file reads as one cell.

`bad_row` walks the file with the standard library's reader (only when something is wrong) and returns the
first row that explains it; `lost_rows` is the cheap check after every read: the file's line count against the
rows read, with the careful count only when they differ (blank lines, cells holding line breaks).
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

BLOCK_BYTES = 1 << 20  # pyarrow's CSV block size: a row longer than this cannot be read
_CHUNK = 1 << 24  # bytes read at a time when counting lines


@dataclass(frozen=True)
class BadRow:
    """The row of a CSV to blame: 1-based row (header excluded), the column, what is wrong and the fix."""

    row: int
    column: str | None
    problem: str
    fix: str


def _column(header: list[str], i: int) -> str:
    return header[i] if i < len(header) else f"number {i + 1} (beyond the header)"


def _unclosed(row: int, line: int, header: list[str], cells: list[str]) -> BadRow:
    i = max(range(len(cells)), key=lambda j: len(cells[j]))
    return BadRow(
        row,
        _column(header, i),
        f"a double quote opens this cell on line {line:,} of the file and is never closed, so the rest of the file "
        f"({cells[i].rstrip(chr(13) + chr(10)).count(chr(10)) + 1:,} lines) reads as one cell of {len(cells[i]):,} "
        "characters",
        'close the quote, or double a quote meant as text ("")',
    )


def _judge(row: int, line: int, cells: list[str], header: list[str], limit: int, last: bool) -> BadRow | None:
    """What is wrong with one row read by the standard library's reader (`bad_row`), or None."""
    spans = max((c.count("\n") for c in cells), default=0)
    if last and spans and len(cells) < len(header):  # a quote that runs to the end of the file
        return _unclosed(row, line, header, cells)
    if sum(len(c) for c in cells) > limit:
        i = max(range(len(cells)), key=lambda j: len(cells[j]))
        return BadRow(
            row,
            _column(header, i),
            f"a cell of {len(cells[i]):,} characters (starting on line {line:,} of the file): rows of over "
            f"{limit:,} bytes cannot be read",
            "shorten the cell (a record needs no text of this size), or leave the column out of the export",
        )
    if len(cells) != len(header):
        quote = f"; a quoted cell there runs over {spans + 1:,} lines" if spans else ""
        return BadRow(
            row,
            None,
            f"has {len(cells)} cell{'s' if len(cells) != 1 else ''} (from line {line:,} of the file), the header "
            f"{len(header)}{quote}",
            "give every row one cell per column of the header (quote a cell that holds a comma, and close every "
            "quote you open)",
        )
    return None


def bad_row(path: Path, limit: int = BLOCK_BYTES) -> BadRow | None:
    """The first row of the CSV at `path` that cannot be read as one row of the table, or None.

    A cell opened by a quote that runs to the end of the file, a row whose cells hold more than `limit`
    characters in all, or a row of another number of cells than the header (`_judge`).
    """
    old = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with path.open(encoding="utf-8-sig", newline="", errors="replace") as handle:
            reader = csv.reader(handle)
            header = next(reader, [])
            line = reader.line_num + 1
            held: tuple[int, int, list[str]] | None = None  # the row before: only the last can run to the end
            for row, cells in enumerate(reader, start=1):
                if cells:  # a blank line is skipped by every reader
                    if held is not None and (found := _judge(*held, header, limit, last=False)) is not None:
                        return found
                    held = (row, line, cells)
                line = reader.line_num + 1
            return None if held is None else _judge(*held, header, limit, last=True)
    except csv.Error:
        return None
    finally:
        csv.field_size_limit(old)


def _lines(path: Path) -> int:
    """Line breaks in the file, plus one for a last line without one."""
    n, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def _rows(path: Path) -> int:
    """Rows after the header as the standard library's reader sees them (quoted line breaks, no blank lines)."""
    old = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        with path.open(encoding="utf-8-sig", newline="", errors="replace") as handle:
            return max(sum(1 for cells in csv.reader(handle) if cells) - 1, 0)
    except csv.Error:
        return -1
    finally:
        csv.field_size_limit(old)


def lost_rows(path: Path, rows_read: int) -> BadRow | None:
    """Why the CSV at `path` holds other rows than the `rows_read` the fast reader returned, or None if it does not.

    Counting the file's lines costs one pass over its bytes; only when they differ from the rows read (blank
    lines, cells holding line breaks, or rows lost) are the rows counted the careful way.
    """
    if _lines(path) - 1 == rows_read:
        return None
    rows = _rows(path)
    if rows == rows_read:
        return None
    found = bad_row(path)
    if found is not None:
        return found
    return BadRow(
        0,
        None,
        f"holds {rows:,} rows, of which the reader returned {rows_read:,}",
        "look for a double quote that is never closed, and export the table again as a UTF-8 CSV",
    )
