"""Absurd network files and export settings are refused naming file, row, column and fix, never a traceback."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from pydantic import ValidationError

from autovend.errors import ExportError
from autovend.export.network import MAX_CAPACITY, Device, read_network
from autovend.export.params import ExportParams

GOOD = "device_id,location,capacity\nA1,worksite/canteen,200\n"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "device_id,location,capacity\nA1,worksite,1000000000000000\n",
            r"row 1, column capacity: .* from 1 to 100,000",
        ),
        ("device_id,location,capacity\nA1,worksite,-5\n", r"row 1, column capacity"),
        ("device_id,location,capacity\nA1,worksite,nan\n", r"row 1, column capacity"),
        ("device_id,location,capacity\nA1,worksite,²\n", r"row 1, column capacity"),
        ("device_id,location,capacity\nA1,worksite,١٢٣\n", r"row 1, column capacity"),
        ("device_id,location,capacity\nA1,worksite,5,7\n", r"row 1: the row has 4 cells, the header 3"),
        ("device_id,location,capacity\nA1\n", r"row 1: the row has 1 cells, the header 3"),
        ("device_id,location,capacity,capacity\nA1,worksite,5,99\n", r"the header repeats the column name 'capacity'"),
        ("device_id,location\nA1,worksite\na1,campus\n", r"row 2, column device_id: a1 appears twice .*ignoring case"),
        ('device_id,location\n"A1,worksite\n', r"a quote \(\"\) opens the cell and never closes"),
        ("", r"is empty: it has no header row"),
    ],
)
def test_absurd_network_files_are_refused(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "net.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ExportError, match=match):
        read_network(path)


@pytest.mark.slow
def test_a_compressed_network_file_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "net.csv"
    path.write_bytes(gzip.compress(GOOD.encode() + b"B1,worksite,200\n" * 2_000_000))
    with pytest.raises(ExportError, match=r"holds more than 16 MB of text .*at most 10,000"):
        read_network(path)


def test_a_good_network_file_still_reads(tmp_path: Path) -> None:
    (tmp_path / "net.csv").write_text(GOOD, encoding="utf-8")
    assert read_network(tmp_path / "net.csv") == (Device("A1", "worksite/canteen", 200),)


def test_the_export_capacity_setting_is_bounded() -> None:
    assert ExportParams(capacity=MAX_CAPACITY).capacity == MAX_CAPACITY
    with pytest.raises(ValidationError):
        ExportParams(capacity=10**15)


def test_a_source_machine_of_absurd_capacity_stops_the_export() -> None:
    from autovend.export.network import _capacity

    assert _capacity(None, 360.0, None, "D1") == 360
    with pytest.raises(ExportError, match=r"device D1 would hold 1,000,000,000,000,000 units.*at most 100,000"):
        _capacity(None, 1e15, None, "D1")
