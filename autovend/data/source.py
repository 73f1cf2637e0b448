"""Reading a source folder: find its tables, read them as text, coerce the text to typed columns.

CSV files are read with every column as text so that a bad cell is reported on its own row; the
coercion functions then parse text (or an already typed Parquet column) into the types the rest of
the pipeline uses and return, next to the values, a boolean mask per problem found. Nothing here
writes to the source folder. The checks (`autovend.data.check`) build on these readers;
`autovend.data.load.load_source` is the pipeline's entry point.
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml
from pydantic import ValidationError

from autovend.data.contract import (
    BOOL_WORDS,
    DEFAULT_STATUS,
    META_FILE,
    META_FIXES,
    ColumnSpec,
    Kind,
    SourceMeta,
    TableSpec,
)
from autovend.data.csvrows import bad_row, lost_rows
from autovend.errors import SourceError

_INTEGER = r"[+-]?\d+"
_DECIMAL = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_DATE = r"\d{4}-\d{2}-\d{2}"
_DATETIME = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?"
_OFFSET = _DATETIME + r"(?:Z|[+-]\d{2}(?::?\d{2})?)"
_TIME_UNIT = "datetime64[ns]"
# Type limits, not plausibility limits (those are in autovend.data.plausibility): a whole number must be
# exact in float64 and fit int64; a decimal must be finite and small enough to keep cents exact; a
# timestamp must fall in the years a nanosecond timestamp can hold, narrowed to a window real records use.
MAX_INTEGER = 2**53
MAX_DECIMAL = 1e12
YEARS: tuple[int, int] = (1900, 2200)
_SNIFF_BYTES = 4096
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def resave_utf8(encoding: str) -> str:
    """How to re-save a table written in `encoding` as UTF-8."""
    return (
        "re-save it as UTF-8: in Excel choose Save As > 'CSV UTF-8 (Comma delimited)'; in LibreOffice tick "
        f"'Edit filter settings' and pick 'Unicode (UTF-8)'; or run `iconv -f {encoding} -t UTF-8 old.csv > new.csv`"
    )


class TableReadError(SourceError):
    """A table file cannot be read as a table: what is wrong, what to fix, and the column if one is to blame."""

    def __init__(self, problem: str, fix: str, column: str | None = None, rows: tuple[int, ...] = ()) -> None:
        where = ", ".join([*(f"row {r}" for r in rows), *([f"column {column}"] if column else [])])
        super().__init__(f"{where}: {problem}. Fix: {fix}" if where else problem)
        self.problem = problem
        self.fix = fix
        self.column = column
        self.rows = rows  # 1-based, header excluded


@dataclass(frozen=True)
class ColumnIssue:
    """Rows of one column that share one problem: a boolean mask over the table's rows."""

    mask: np.ndarray
    problem: str
    fix: str


@dataclass(frozen=True)
class Coerced:
    """A column parsed to its type (NaN/NaT/NA where blank or bad) and the problems found."""

    values: pd.Series
    issues: tuple[ColumnIssue, ...]
    has_time: bool = False


def table_files(folder: Path, table: TableSpec) -> list[Path]:
    """The files of `table` present in `folder` (none, one, or both formats)."""
    return [folder / name for name in table.file_names if (folder / name).is_file()]


def entry_problem(folder: Path, path: Path) -> tuple[str, str] | None:
    """Why the entry `path` of the source folder cannot be read as a contract file (problem, fix), or None.

    A folder where a file belongs, a link to nothing, and a link that leads outside the source folder
    (whose target is never opened, so none of its content can be echoed) are refused.
    """
    if path.is_symlink():
        if not path.exists():
            return "is a link to nothing (its target does not exist)", f"put the file itself at {path.name}"
        if not path.resolve().is_relative_to(folder.resolve()):
            return (
                "is a link to a file outside the source folder (not read)",
                f"copy the file into the source folder as {path.name} instead of linking to it",
            )
    if path.is_dir():
        return "is a folder, not a file", f"put the table's file at {path.name} (move the folder's content out)"
    if path.exists() and not path.is_file():
        return "is not a regular file", f"put the table's file at {path.name}"
    return None


def read_table_file(path: Path, columns: Collection[str] | None = None) -> pd.DataFrame:
    """Read one table file; CSV columns come back as text ('' for a blank cell), Parquet as stored.

    Parquet columns of lists, structs or maps are refused when named in `columns` (the contract's
    columns of the table) and turned into text otherwise, so extra columns stay ignorable. Raises
    TableReadError (a SourceError saying why and what to fix) when the file cannot be read as a table.
    """
    export_again = "export the table again as a UTF-8 CSV with a header row"
    try:
        if path.suffix == ".csv":
            _refuse_non_utf8(path)
            frame = pd.read_csv(path, engine="pyarrow", dtype=str, keep_default_na=False, encoding="utf-8")
        else:
            frame = _read_parquet(path, columns)
    except pd.errors.EmptyDataError as exc:
        raise TableReadError("the file is empty (not even a header row)", export_again) from exc
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        bad = bad_row(path) if path.suffix == ".csv" and "CSV parse error" in detail or "straddl" in detail else None
        if bad is not None:  # the row to blame, in words (pyarrow names none, and suggests a larger block size)
            raise TableReadError(bad.problem, bad.fix, column=bad.column, rows=(bad.row,)) from None
        if "UTF8" in detail or "utf-8" in detail.lower():
            fix = resave_utf8("GB18030") + " (-f CP1252 for Western European text)"
            raise TableReadError(f"cannot be read as a table: {detail} (save the file as UTF-8)", fix) from exc
        raise TableReadError(f"cannot be read as a table: {detail}", export_again) from exc
    lost = lost_rows(path, len(frame)) if path.suffix == ".csv" else None
    if lost is not None:  # the reader dropped rows without a word (a quote never closed, in a large file)
        raise TableReadError(lost.problem, lost.fix, column=lost.column, rows=(lost.row,) if lost.row else ())
    names = [str(c) for c in frame.columns]
    header = _csv_header(path) if path.suffix == ".csv" else names
    repeated = sorted({n for n in header if header.count(n) > 1})
    if repeated:
        raise TableReadError(f"the header repeats column names {repeated}", "give each column one name")
    frame.columns = names
    return frame.reset_index(drop=True)


def _refuse_non_utf8(path: Path) -> None:
    """Refuse a CSV in UTF-16 or UTF-32 (a byte-order mark or NUL bytes near the start) before parsing it."""
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if head.startswith(_UTF16_BOMS) or head.startswith(b"\x00\x00\xfe\xff"):
        raise TableReadError(
            "is not UTF-8 text: it is UTF-16 or UTF-32 (it starts with that byte-order mark)", resave_utf8("UTF-16")
        )
    if b"\x00" in head:
        raise TableReadError(
            "is not UTF-8 text: it holds NUL bytes, as UTF-16 or binary files do", resave_utf8("UTF-16")
        )


def _read_parquet(path: Path, columns: Collection[str] | None) -> pd.DataFrame:
    """A Parquet file as a DataFrame; nested columns are refused (contract columns) or turned into text."""
    nested = [field for field in pq.read_schema(path) if pa.types.is_nested(field.type)]
    for field in nested:
        if columns is not None and field.name in columns:
            raise TableReadError(
                f"holds {field.type} values (lists or records), not one value per cell",
                f"store one plain value (number, text, date or time) per cell in {field.name}",
                column=field.name,
            )
    frame = pd.read_parquet(path)
    for field in nested:
        frame[field.name] = frame[field.name].map(lambda v: None if v is None else str(v))
    return frame


def _csv_header(path: Path) -> list[str]:
    """The column names as written on the first line (pandas renames repeated ones to `x.1`)."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return next(csv.reader(handle), [])


def read_meta(folder: Path) -> tuple[SourceMeta | None, list[tuple[str | None, str, str]]]:
    """Parse source.yaml: (meta or None, problems as (key or None, what is wrong, what to fix))."""
    path = folder / META_FILE
    problem = entry_problem(folder, path)
    if problem is not None:
        return None, [(None, *problem)]
    if not path.is_file():
        return None, [(None, "file not found", f"add {META_FILE} with name, currency, timezone, country, description")]
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        return None, [(None, "is not UTF-8 text", "save it as UTF-8 text (e.g. `iconv -f UTF-16 -t UTF-8`)")]
    except OSError as exc:
        return None, [(None, f"cannot be read: {exc.strerror or type(exc).__name__}", "make the file readable")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, [(None, f"YAML syntax error{where}: {reason}", "fix the YAML syntax (key: value, one per line)")]
    if not isinstance(data, dict):
        return None, [(None, "is not a mapping of keys to values", "write one `key: value` per line")]
    try:
        return SourceMeta.model_validate(data), []
    except ValidationError as exc:
        problems: list[tuple[str | None, str, str]] = []
        for err in exc.errors():
            key = str(err["loc"][0]) if err["loc"] else None
            if err["type"] == "missing":
                problems.append((key, "missing key", f"add `{key}:` ({META_FIXES.get(key or '', '')})"))
            else:
                message = err["msg"].removeprefix("Value error, ")
                problems.append((key, f"bad value {err.get('input')!r}: {message}", META_FIXES.get(key or "", "")))
        return None, problems


def _text(series: pd.Series, strip: bool) -> tuple[pd.Series, np.ndarray]:
    """The column as text ('' where missing), stripped if asked, and the blank mask."""
    if not (pd.api.types.is_string_dtype(series) or series.dtype == object):
        series = series.astype("str")
    text = series.fillna("").astype("str")
    stripped = text.str.strip()
    blank = (stripped == "").to_numpy(dtype=bool)
    return (stripped if strip else text), blank


def _blank_issue(column: ColumnSpec, blank: np.ndarray) -> list[ColumnIssue]:
    if column.required and blank.any():
        return [ColumnIssue(blank, "is blank", f"fill in {column.name}: the contract requires a value on every row")]
    return []


def _matches(text: pd.Series, pattern: str) -> np.ndarray:
    return text.str.fullmatch(pattern).fillna(False).to_numpy(dtype=bool)


def _matches_where(text: pd.Series, pattern: str, where: np.ndarray) -> np.ndarray:
    """`_matches` on the rows of `where` (False elsewhere): a pass over the few rows left by another pattern."""
    found = np.zeros(len(text), dtype=bool)
    if where.any():
        found[where] = _matches(text[where], pattern)
    return found


def _coerce_string(column: ColumnSpec, series: pd.Series) -> Coerced:
    text, blank = _text(series, strip=column.kind is Kind.CHOICE)
    values = text.where(~blank, pd.NA).astype("str")
    return Coerced(values, tuple(_blank_issue(column, blank)))


def _text_to_float(text: pd.Series, ok: np.ndarray) -> np.ndarray:
    """Parse the cells where `ok` (already matched as numbers) with Arrow's cast; NaN elsewhere."""
    arrow = pa.array(text)
    kept = pc.if_else(pa.array(ok), arrow, pa.scalar(None, arrow.type))
    return pc.cast(kept, pa.float64()).to_numpy(zero_copy_only=False)


def _coerce_number(column: ColumnSpec, series: pd.Series) -> Coerced:
    integer = column.kind is Kind.INTEGER
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.astype("float64")
        blank = values.isna().to_numpy()
        finite = np.isfinite(values.to_numpy())
        bad = ~blank & ~finite
        if integer:
            bad |= finite & (np.mod(np.where(finite, values.to_numpy(), 0.0), 1.0) != 0.0)
    else:
        text, blank = _text(series, strip=True)
        ok = _matches(text, _INTEGER if integer else _DECIMAL)
        bad = ~blank & ~ok
        values = pd.Series(_text_to_float(text, ok), index=series.index, dtype="float64")
    limit = MAX_INTEGER if integer else MAX_DECIMAL
    magnitude = np.abs(values.to_numpy(dtype="float64"))
    too_large = ~bad & ~blank & ~(magnitude <= limit)  # also catches text such as 1e999 that parses to inf
    values = values.where(~bad & ~too_large)
    issues = _blank_issue(column, blank)
    if too_large.any():
        bound = "2^53 = 9007199254740992" if integer else "10^12"
        issues.append(
            ColumnIssue(
                too_large,
                f"is out of range (larger than {bound} in magnitude)",
                "correct the number: no real count or amount is this large (look for a shifted column or a "
                "scientific-notation export)",
            )
        )
    if bad.any():
        if integer:
            issues.append(ColumnIssue(bad, "is not a whole number", "write the number with digits only, e.g. 3"))
        else:
            issues.append(
                ColumnIssue(
                    bad,
                    "is not a decimal number",
                    "write a plain number with '.' as decimal point, e.g. 3.50",
                )
            )
    return Coerced(values, tuple(issues))


def _coerce_time(column: ColumnSpec, series: pd.Series) -> Coerced:
    """Parse ISO 8601 dates / date-times (local time, no offset); Kind.DATE accepts dates only."""
    date_only = column.kind is Kind.DATE
    if pd.api.types.is_datetime64_any_dtype(series):
        return _coerce_typed_time(column, series)
    text, blank = _text(series, strip=True)
    is_datetime = _matches(text, _DATETIME)  # the forms exclude each other: the others only where this fails
    is_date, has_offset = _matches_where(text, _DATE, ~is_datetime), _matches_where(text, _OFFSET, ~is_datetime)
    other = ~blank & ~is_date & ~is_datetime & ~has_offset
    issues = _blank_issue(column, blank)
    if has_offset.any():
        issues.append(
            ColumnIssue(
                has_offset,
                "carries a UTC offset",
                "give local time of source.yaml's timezone without an offset (no Z, no +08:00)",
            )
        )
    example = "2025-03-04" if date_only else "2025-03-04 or 2025-03-04T12:31:05"
    if other.any():
        kind = "date" if date_only else "date or date-time"
        issues.append(ColumnIssue(other, f"is not an ISO 8601 {kind}", f"write it as {example}"))
    n_date, n_datetime = int(is_date.sum()), int(is_datetime.sum())
    has_time = False
    if date_only and n_datetime:
        issues.append(ColumnIssue(is_datetime, "is a date-time where a date is expected", f"write {example}"))
        is_datetime = np.zeros_like(is_datetime)
    elif n_date and n_datetime:
        minority, label = (is_date, "a date without time") if n_date <= n_datetime else (is_datetime, "a date-time")
        others = "date-times" if minority is is_date else "dates without time"
        issues.append(
            ColumnIssue(
                minority,
                f"is {label} in a column of {others} (mixed forms)",
                "use one form for the whole column: all dates or all date-times",
            )
        )
        if minority is is_date:
            is_date = np.zeros_like(is_date)
        else:
            is_datetime = np.zeros_like(is_datetime)
    year = _years(text, is_date | is_datetime)
    out_of_years = (is_date | is_datetime) & ~((year >= YEARS[0]) & (year <= YEARS[1]))
    if out_of_years.any():
        issues.append(_years_issue(out_of_years))
        is_date, is_datetime = is_date & ~out_of_years, is_datetime & ~out_of_years
    has_time = bool(is_datetime.any())
    values = pd.Series(pd.NaT, index=series.index, dtype=_TIME_UNIT)
    if is_date.any():
        values[is_date] = _parse_iso(text[is_date], date_only=True)
    if is_datetime.any():
        values[is_datetime] = _parse_iso(text[is_datetime], date_only=False)
    unreal = (is_date | is_datetime) & values.isna().to_numpy()
    if unreal.any():
        issues.append(
            ColumnIssue(unreal, "is not a real calendar date or time of day", "check the day, month and hour")
        )
    return Coerced(values, tuple(issues), has_time)


def _years(text: pd.Series, matched: np.ndarray) -> np.ndarray:
    """The year (first four characters) of the values matched as dates or date-times; NaN elsewhere.

    Parsed with Arrow on the matched rows only (pandas' to_numeric turns text into Python strings first).
    """
    year = np.full(len(text), np.nan)
    if matched.any():
        head = pc.utf8_slice_codeunits(pa.array(text[matched]), 0, 4)
        try:
            year[matched] = pc.cast(head, pa.float64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:  # a digit Arrow does not read as one: pandas, NaN where not a number
            year[matched] = pd.to_numeric(pd.Series(head.to_pylist()), errors="coerce").to_numpy(dtype="float64")
    return year


def _parse_iso(text: pd.Series, *, date_only: bool) -> np.ndarray:
    """Text already matched as ISO 8601 dates (or date-times) as datetime64[ns]; NaT where not a real one.

    Arrow's ISO 8601 cast parses in place (pandas would first turn the text into Python strings, about
    70 bytes a row); it refuses the whole array if one value is not a real date or time (2024-02-30,
    24:00), and then pandas parses it with NaT for those.
    """
    try:
        return pc.cast(pa.array(text), pa.timestamp("ns")).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if date_only:
            parsed = pd.to_datetime(text, format="%Y-%m-%d", errors="coerce")
        else:
            parsed = pd.to_datetime(text.str.replace("T", " ", n=1), format="ISO8601", errors="coerce")
        return parsed.astype(_TIME_UNIT).to_numpy()


def _years_issue(mask: np.ndarray) -> ColumnIssue:
    return ColumnIssue(
        mask,
        f"is outside the years {YEARS[0]}-{YEARS[1]}",
        "give the real date; a placeholder such as 9999-12-31 or 1900-01-01 is not one (drop the row if unknown)",
    )


def _coerce_typed_time(column: ColumnSpec, series: pd.Series) -> Coerced:
    """A Parquet timestamp column: refuse time-zone-aware values; DATE columns must be at midnight."""
    blank = series.isna().to_numpy()
    issues = _blank_issue(column, blank)
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        bad = ~blank
        issues.append(
            ColumnIssue(bad, "carries a time zone", "store local time of source.yaml's timezone without a time zone")
        )
        return Coerced(pd.Series(pd.NaT, index=series.index, dtype=_TIME_UNIT), tuple(issues))
    year = series.dt.year.to_numpy(dtype="float64", na_value=np.nan)
    out_of_years = ~blank & ~((year >= YEARS[0]) & (year <= YEARS[1]))
    if out_of_years.any():
        issues.append(_years_issue(out_of_years))
        blank = blank | out_of_years
    values = series.where(~out_of_years).astype(_TIME_UNIT)
    off_midnight = (values != values.dt.normalize()).to_numpy() & ~blank
    if column.kind is Kind.DATE and off_midnight.any():
        issues.append(ColumnIssue(off_midnight, "is a date-time where a date is expected", "store the date only"))
        values = values.where(~off_midnight)
    return Coerced(values, tuple(issues), has_time=bool(off_midnight.any()) and column.kind is not Kind.DATE)


def _coerce_boolean(column: ColumnSpec, series: pd.Series) -> Coerced:
    if pd.api.types.is_bool_dtype(series):
        blank = series.isna().to_numpy()
        values = series.astype("boolean")
        return Coerced(values, tuple(_blank_issue(column, blank)))
    text, blank = _text(series, strip=True)
    lower = text.str.lower()
    ok = lower.isin(BOOL_WORDS).to_numpy(dtype=bool)
    bad = ~blank & ~ok
    values = pd.Series(pd.NA, index=series.index, dtype="boolean")
    values[ok] = (lower[ok] == "true").to_numpy()
    issues = _blank_issue(column, blank)
    if bad.any():
        issues.append(ColumnIssue(bad, "is not true or false", "write true or false"))
    return Coerced(values, tuple(issues))


def coerce_column(column: ColumnSpec, series: pd.Series) -> Coerced:
    """Parse one column (text or Parquet-typed) to the contract's type, collecting per-row problems."""
    if column.kind in (Kind.STRING, Kind.CHOICE):
        return _coerce_string(column, series)
    if column.kind in (Kind.INTEGER, Kind.DECIMAL):
        return _coerce_number(column, series)
    if column.kind in (Kind.TIMESTAMP, Kind.DATE):
        return _coerce_time(column, series)
    return _coerce_boolean(column, series)


def finalise_table(table: TableSpec, typed: pd.DataFrame) -> pd.DataFrame:
    """The typed table the pipeline sees: contract columns only, final dtypes, status filled.

    Call only on a table that passed its checks (no missing values in required columns).
    """
    out = {}
    for col in table.columns:
        values = typed[col.name]
        if col.kind is Kind.INTEGER and col.required:
            values = values.astype("int64")
        elif col.kind is Kind.BOOLEAN:
            values = values.astype(bool)
        elif col.name == "status":
            values = values.fillna(DEFAULT_STATUS).astype("str")
        out[col.name] = values
    return pd.DataFrame(out, index=typed.index, copy=False)
