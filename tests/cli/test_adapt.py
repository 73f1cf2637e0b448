"""Tests of `autovend adapt table`: it writes a checked source and prints its report; bad input exits 2 with the fix."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.cli import app, main
from autovend.data.check import check_source

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_CSV = ROOT / "examples" / "mappings" / "kiosk-eur.csv"
EXAMPLE_MAP = ROOT / "examples" / "mappings" / "kiosk-eur.yaml"


def test_adapt_table_writes_a_source_and_prints_the_report(tmp_path: Path) -> None:
    out = tmp_path / "kiosk"
    args = ["adapt", "table", str(EXAMPLE_CSV), "--map", str(EXAMPLE_MAP), "-o", str(out)]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "adapted kiosk-eur-2025-02" in result.output
    assert "Buchungsart is 'Befüllung' (drop_rows)" in result.output
    assert "Hauptbahnhof Gleis 1" in result.output
    assert check_source(out).ok
    forced = CliRunner().invoke(app, [*args, "--force"])
    assert forced.exit_code == 0, forced.output


def _exit_code_and_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["autovend", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code), " ".join(capsys.readouterr().err.split())


def test_bad_mapping_exits_2_naming_file_key_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mapping = tmp_path / "m.yaml"
    mapping.write_text(EXAMPLE_MAP.read_text(encoding="utf-8").replace("delimiter:", "delimter:"), encoding="utf-8")
    code, err = _exit_code_and_stderr(
        monkeypatch, capsys, ["adapt", "table", str(EXAMPLE_CSV), "--map", str(mapping), "-o", str(tmp_path / "o")]
    )
    assert code == 2
    assert "m.yaml: invalid mapping: key file.delimter: Extra inputs are not permitted" in err
    assert not (tmp_path / "o").exists()


def test_bad_row_exits_2_naming_file_row_column_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "kiosk.csv"
    export.write_text(
        EXAMPLE_CSV.read_text(encoding="utf-8").replace("04.02.2025 09:05", "2025-02-04 09:05"), encoding="utf-8"
    )
    code, err = _exit_code_and_stderr(
        monkeypatch, capsys, ["adapt", "table", str(export), "--map", str(EXAMPLE_MAP), "-o", str(tmp_path / "o")]
    )
    assert code == 2
    assert (
        "kiosk.csv, row 4, column Zeitpunkt: Zeitpunkt is not a date in the form %d.%m.%Y %H:%M "
        "(value '2025-02-04 09:05'). Fix: write it as %d.%m.%Y %H:%M" in err
    )
    assert not (tmp_path / "o").exists()
