"""Hostile exports fed to `autovend adapt table`: each ends in an AdaptError naming file, line or row, column and
fix (or a reported bad row), exit 2 on the command line, and nothing written."""

from __future__ import annotations

import bz2
import gzip
import lzma
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from autovend.cli import main
from autovend.data.adapters.files import write_table_source
from autovend.data.adapters.mapping import parse_mapping
from autovend.data.adapters.reader import MAX_LINE_CHARS, read_export
from autovend.data.adapters.table import adapt_table
from autovend.errors import AdaptError, ConfigError
from autovend.io import OUTPUT_MARKER

HEADER = "Ticket;Machine;Article;Date;Qty;Price;Pay"
GOOD = ["T1;M1;eau;13/02/2025;1;1,20;cash", "T2;M1;eau;14/02/2025;2;1,20;card", "T3;M2;chips;14/02/2025;1;1,80;card"]
MAPPING: dict[str, Any] = {
    "source": {"name": "shop", "currency": "EUR", "timezone": "Europe/Paris", "country": "FR", "description": "x"},
    "file": {"delimiter": ";"},
    "money": {"decimal": ","},
    "orders": {
        "order_id": "Ticket",
        "machine_id": "Machine",
        "sku_id": "Article",
        "ts": {"column": "Date", "formats": ["%d/%m/%Y"]},
        "qty": "Qty",
        "unit_price": "Price",
        "extra": {"payment": "Pay"},
    },
    "products": {"category_l1": {"value": "drinks"}, "category_l2": {"value": "all"}},
}


def _map(tmp_path: Path, **changes: Any) -> Path:
    raw = {**MAPPING, **changes}
    path = tmp_path / "map.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def _export(tmp_path: Path, lines: list[str], name: str = "shop.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _refused(tmp_path: Path, export: Path, match: str, **changes: Any) -> None:
    """The adapter refuses `export` with `match`, and the output folder (holding a file of the user) is untouched."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / OUTPUT_MARKER).write_text('{"kind": "source", "files": ["orders.csv"]}', encoding="utf-8")
    (out / "orders.csv").write_text("earlier\n", encoding="utf-8")
    with pytest.raises(AdaptError, match=match):
        write_table_source(export, _map(tmp_path, **changes), out)
    assert (out / "orders.csv").read_text(encoding="utf-8") == "earlier\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary folder left


def test_the_small_export_adapts(tmp_path: Path) -> None:
    result = write_table_source(_export(tmp_path, [HEADER, *GOOD]), _map(tmp_path), tmp_path / "out")
    assert result.rows_written == 3


def test_a_year_9999_stamp_is_a_bad_row_not_an_overflow(tmp_path: Path) -> None:
    lines = [HEADER, *GOOD, "T4;M1;eau;31/12/9999;1;1,20;cash", "T5;M1;eau;01/01/1600;1;1,20;cash"]
    _refused(
        tmp_path, _export(tmp_path, lines), r"shop\.csv, rows 4, 5, column Date: Date is outside the years 1900-2200"
    )
    result = write_table_source(_export(tmp_path, lines), _map(tmp_path, bad_rows="drop"), tmp_path / "dropped")
    assert [(g.reason, g.rows) for g in result.dropped] == [("Date is outside the years 1900-2200", (4, 5))]


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ('T4;M1;"eau;14/02/2025;1;1,20;cash', r"row 4 \(line 5\), column Article \(column 3\): a quote"),
        ('T4;M1;"eau"x;14/02/2025;1;1,20;cash', r"row 4 \(line 5\), column Article \(column 3\): .*closing quote"),
    ],
)
def test_a_stray_quote_names_its_row_line_and_column(tmp_path: Path, bad: str, match: str) -> None:
    _refused(tmp_path, _export(tmp_path, [HEADER, *GOOD, bad]), match + r".*Fix: .*the stray quote")


def test_a_stray_quote_that_swallows_the_file_stops_at_the_cell_limit(tmp_path: Path) -> None:
    rows = [HEADER, 'T0;M1;"eau;14/02/2025;1;1,20;cash', *(GOOD * 5000)]
    _refused(tmp_path, _export(tmp_path, rows), r"row 1 \(line 2\), column Article .*longer than 131,072 characters")


def test_ragged_rows_are_bad_rows(tmp_path: Path) -> None:
    lines = [HEADER, *GOOD, "T4;M1;eau;14/02/2025;1;1,20;cash;oops", "T5;M1;eau", ";;", ""]
    _refused(tmp_path, _export(tmp_path, lines), r"row 4: the row has 8 cells, the header 7\. Fix: quote each cell")
    result = write_table_source(_export(tmp_path, lines), _map(tmp_path, bad_rows="drop"), tmp_path / "dropped")
    assert [(g.reason, g.rows, g.bad) for g in result.dropped] == [
        ("the row has 3 cells, the header 7", (5,), True),
        ("the row has 8 cells, the header 7", (4,), True),
        ("every cell the mapping reads is blank", (6,), False),  # ';;' is a blank row, the empty line is skipped
    ]


def test_a_repeated_header_is_refused_not_silently_the_first(tmp_path: Path) -> None:
    export = _export(tmp_path, [HEADER.replace("Pay", "Price"), *GOOD])
    _refused(
        tmp_path, export, r"shop\.csv, line 1 \(the header\), column 7: the header repeats the column name 'Price'"
    )


def test_a_header_only_or_empty_export_writes_nothing(tmp_path: Path) -> None:
    _refused(tmp_path, _export(tmp_path, [HEADER]), r"shop\.csv has a header but no data rows")
    (tmp_path / "empty.csv").write_bytes(b"")
    _refused(tmp_path, tmp_path / "empty.csv", r"empty\.csv is empty: it has no header row")
    drop_all = {"column": "Pay", "values": ["cash", "card"]}
    _refused(tmp_path, _export(tmp_path, [HEADER, *GOOD]), r"every row is left out .*drop_rows", drop_rows=[drop_all])


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zip"])
def test_compressed_exports_read_as_the_plain_one(tmp_path: Path, kind: str) -> None:
    data = ("\n".join([HEADER, *GOOD]) + "\n").encode("utf-8")
    path = tmp_path / "shop.bin"  # recognised by its first bytes, not its name
    if kind == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("shop.csv", data)
    else:
        path.write_bytes({"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[kind](data))
    fmt = parse_mapping(MAPPING, "m").file
    assert read_export(path, fmt).equals(read_export(_export(tmp_path, [HEADER, *GOOD]), fmt))


def test_an_export_that_inflates_past_the_limit_is_stopped(tmp_path: Path) -> None:
    body = ("\n".join(GOOD) + "\n").encode("utf-8") * 40_000  # ~1.4 MB of text, a few kB compressed
    (tmp_path / "bomb.csv.gz").write_bytes(gzip.compress(HEADER.encode() + b"\n" + body))
    _refused(
        tmp_path,
        tmp_path / "bomb.csv.gz",
        r"bomb\.csv\.gz holds more than 1 MB of text \(it is gzip-compressed\); reading stopped there\. Fix:",
        file={"delimiter": ";", "max_text_mb": 1},
    )


def test_a_line_without_end_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    (tmp_path / "line.csv.gz").write_bytes(gzip.compress(HEADER.encode() + b"\n" + b"x" * (MAX_LINE_CHARS + 10)))
    _refused(tmp_path, tmp_path / "line.csv.gz", r"line\.csv\.gz, line 2: the line is longer than 1,048,576 characters")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (gzip.compress(b"Ticket;Machine\nT1;M1\n", mtime=0)[:-12], r"cannot read .*shop\.csv as gzip data"),
        (b"\x28\xb5\x2f\xfd" + b"\0" * 20, r"is zstd-compressed, which the adapter does not read"),
        (b"PAR1" + b"\0" * 20, r"is a Parquet file, which the adapter does not read"),
        (b"Ticket;Machine\nT1;M\xe9\n", r"shop\.csv, line 2: the byte 0xe9 cannot be read as utf-8 text"),
        ("Ticket;Machine\n".encode("utf-16"), r"is UTF-16 text, not UTF-8"),
    ],
)
def test_unreadable_bytes_name_the_file_and_fix(tmp_path: Path, content: bytes, match: str) -> None:
    (tmp_path / "shop.csv").write_bytes(content)
    _refused(tmp_path, tmp_path / "shop.csv", match + r".*Fix:")


def test_a_zip_of_several_files_is_refused(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as archive:
        archive.writestr("a.csv", HEADER + "\n")
        archive.writestr("b.csv", HEADER + "\n")
    _refused(tmp_path, tmp_path / "two.zip", r"zip archive holding 2 files \(a\.csv, b\.csv\), not one export")


@pytest.mark.parametrize("delimiter", ['"', "\n", "a"])
def test_a_delimiter_that_cannot_separate_cells_is_a_mapping_error(delimiter: str) -> None:
    with pytest.raises(ConfigError, match=r"file\.delimiter"):
        parse_mapping({**MAPPING, "file": {"delimiter": delimiter}}, "m.yaml")


def test_ragged_rows_of_a_frame_given_in_python_are_bad_rows_too(tmp_path: Path) -> None:
    frame = read_export(_export(tmp_path, [HEADER, *GOOD, "T4;M1"]), parse_mapping(MAPPING, "m").file)
    with pytest.raises(AdaptError, match=r"x\.csv, row 4: the row has 2 cells, the header 7"):
        adapt_table(frame, parse_mapping(MAPPING, "m"), "x.csv")


def test_the_command_exits_2_with_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    export = _export(tmp_path, [HEADER, *GOOD, "T4;M1;eau;31/12/9999;1;1,20;cash"])
    args = ["autovend", "adapt", "table", str(export), "--map", str(_map(tmp_path)), "-o", str(tmp_path / "o")]
    monkeypatch.setattr(sys, "argv", args)
    with pytest.raises(SystemExit) as exc:
        main()
    err = " ".join(capsys.readouterr().err.split())
    assert exc.value.code == 2
    assert "shop.csv, row 4, column Date: Date is outside the years 1900-2200" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_the_report_prints_cells_as_text_not_markup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [HEADER, *GOOD, "T4;M1;eau;14/02/2025;1;1,20;[/x]:a:"]
    mapping = {"column": "Pay", "values": {"cash": "cash"}, "otherwise": "keep"}
    orders = {**MAPPING["orders"], "extra": {"payment": mapping}}
    args = ["adapt", "table", str(_export(tmp_path, rows)), "--map", str(_map(tmp_path, orders=orders))]
    monkeypatch.setattr(sys, "argv", ["autovend", *args, "-o", str(tmp_path / "o"), "--force"])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()  # no MarkupError after the source is written
    assert exc.value.code == 0
    assert "Pay [/x]:a:: 1 rows, kept as is" in capsys.readouterr().out
    assert (tmp_path / "o" / "orders.csv").is_file()


def test_a_nul_byte_a_folder_or_a_device_is_refused_as_an_export(tmp_path: Path) -> None:
    (tmp_path / "nul.csv").write_bytes(("\n".join([HEADER, *GOOD]) + "\n").replace("T2", "T\x002").encode())
    _refused(tmp_path, tmp_path / "nul.csv", r"nul\.csv, line 3: the line holds a NUL byte")
    (tmp_path / "folder.csv").mkdir()
    _refused(tmp_path, tmp_path / "folder.csv", r"folder\.csv is a folder; give the path of the export file")
    _refused(tmp_path, Path("/dev/zero"), r"/dev/zero is not a regular file")


def test_an_output_folder_that_cannot_be_made_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    from autovend.errors import OutputWriteError

    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(OutputWriteError, match=r"cannot write the output folder .*file/sub/out: .*choose a folder"):
        write_table_source(_export(tmp_path, [HEADER, *GOOD]), _map(tmp_path), tmp_path / "file" / "sub" / "out")
