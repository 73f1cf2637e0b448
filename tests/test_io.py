import json
import os

import pytest

from autovend.errors import OutputExistsError
from autovend.io import (
    MARKER_NOTE,
    OUTPUT_MARKER,
    OutputKind,
    OutputMarker,
    atomic_dir,
    atomic_write_text,
    check_distinct_outputs,
    check_output_dir,
    output_dir,
    read_marker,
)


def test_atomic_outputs_get_the_usual_modes(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_dir(tmp_path / "out") as tmp:
            (tmp / "a.txt").write_text("1")
        atomic_write_text(tmp_path / "f.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "f.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "f.txt").read_text() == "x"


def test_a_failed_block_keeps_the_earlier_folder(tmp_path):
    with atomic_dir(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("first")
    with pytest.raises(RuntimeError), atomic_dir(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("second")
        raise RuntimeError("boom")
    assert (tmp_path / "out" / "a.txt").read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


# ------------------------------------------------------------------------------------------- output folders


def _write(target, kind, files, **kwargs):
    with output_dir(target, kind, **kwargs) as tmp:
        for name, text in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)


def _tree(folder):
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_output_folder_gets_a_marker_naming_its_kind_and_files(tmp_path):
    _write(tmp_path / "out", OutputKind.CALIBRATION, {"b.json": "1", "diagnostics/a.parquet": "2"})
    marker = json.loads((tmp_path / "out" / OUTPUT_MARKER).read_text())
    assert marker == {"kind": "calibration", "files": ["b.json", "diagnostics/a.parquet"], "note": MARKER_NOTE}
    assert read_marker(tmp_path / "out") == OutputMarker("calibration", ("b.json", "diagnostics/a.parquet"))
    first = (tmp_path / "out" / OUTPUT_MARKER).read_bytes()
    _write(tmp_path / "out", OutputKind.CALIBRATION, {"diagnostics/a.parquet": "2", "b.json": "1"})
    assert (tmp_path / "out" / OUTPUT_MARKER).read_bytes() == first  # no timestamp: the same bytes again


def test_its_own_earlier_output_is_replaced_whole(tmp_path):
    out = tmp_path / "out"
    _write(out, OutputKind.CALIBRATION_REPORT, {"old.png": "old", "calibration.md": "first"})
    _write(out, OutputKind.CALIBRATION_REPORT, {"calibration.md": "second"})
    assert sorted(_tree(out)) == [OUTPUT_MARKER, "calibration.md"]
    assert (out / "calibration.md").read_text() == "second"
    assert read_marker(out).files == ("calibration.md",)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary or old folder left


def test_a_foreign_folder_is_refused_and_kept(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputExistsError) as err:
        _write(out, OutputKind.VALIDATION_REPORT, {"metrics.json": "{}"})
    message = str(err.value)
    assert str(out) in message and "not empty" in message and OUTPUT_MARKER in message
    assert "choose another folder, or pass --force to replace it" in message
    assert _tree(out) == {"notes.txt": "mine"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_force_replaces_a_foreign_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    _write(out, OutputKind.VALIDATION_REPORT, {"metrics.json": "{}"}, force=True)
    assert sorted(_tree(out)) == [OUTPUT_MARKER, "metrics.json"]


def test_an_output_of_another_kind_is_refused(tmp_path):
    out = tmp_path / "out"
    _write(out, OutputKind.CALIBRATION, {"calibration.json": "{}"})
    with pytest.raises(OutputExistsError, match=r"holds a calibration output, not a calibration-report output"):
        _write(out, OutputKind.CALIBRATION_REPORT, {"calibration.md": "x"})
    assert _tree(out)["calibration.json"] == "{}"


def test_files_added_to_an_earlier_output_are_refused_and_kept(tmp_path):
    out = tmp_path / "out"
    _write(out, OutputKind.VALIDATION_REPORT, {"metrics.json": "{}", "plots/weekly.csv": "a"})
    (out / "plots" / "mine.csv").write_text("mine")
    (out / "drafts").mkdir()
    with pytest.raises(OutputExistsError, match=r"files autovend did not write there: drafts, plots/mine\.csv"):
        _write(out, OutputKind.VALIDATION_REPORT, {"metrics.json": "{}"})
    assert _tree(out)["plots/mine.csv"] == "mine" and (out / "drafts").is_dir()


def test_an_unreadable_marker_is_refused(tmp_path):
    out = tmp_path / "out"
    _write(out, OutputKind.SOURCE, {"orders.csv": "x"})
    (out / OUTPUT_MARKER).write_text("{not json")
    with pytest.raises(OutputExistsError, match="an unreadable marker"):
        _write(out, OutputKind.SOURCE, {"orders.csv": "y"})
    assert _tree(out)["orders.csv"] == "x"


def test_an_output_whose_files_were_removed_is_replaced(tmp_path):
    """DVC removes the files it tracks before a stage runs: the marker and empty folders stay behind."""
    out = tmp_path / "out"
    _write(out, OutputKind.VALIDATION_REPORT, {"metrics.json": "{}", "plots/weekly.csv": "a"})
    (out / "metrics.json").unlink()
    (out / "plots" / "weekly.csv").unlink()
    _write(out, OutputKind.VALIDATION_REPORT, {"metrics.json": "new"})
    assert _tree(out)["metrics.json"] == "new"
    legacy = tmp_path / "legacy"  # written before markers existed, its files removed: only empty folders
    (legacy / "plots").mkdir(parents=True)
    _write(legacy, OutputKind.VALIDATION_REPORT, {"metrics.json": "new"})
    assert sorted(_tree(legacy)) == [OUTPUT_MARKER, "metrics.json"]


def test_a_file_where_a_folder_is_expected(tmp_path):
    out = tmp_path / "out"
    out.write_text("mine")
    with pytest.raises(OutputExistsError, match=r"out is a file, not a folder; choose another folder, or pass --force"):
        _write(out, OutputKind.TRUTH, {"truth.json": "{}"})
    assert out.read_text() == "mine"
    _write(out, OutputKind.TRUTH, {"truth.json": "{}"}, force=True)
    assert _tree(out)["truth.json"] == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_failure_midway_keeps_the_earlier_output(tmp_path):
    out = tmp_path / "out"
    _write(out, OutputKind.SOURCE, {"orders.csv": "first"})
    before = _tree(out)
    with pytest.raises(RuntimeError), output_dir(out, OutputKind.SOURCE) as tmp:
        (tmp / "orders.csv").write_text("second")
        raise RuntimeError("disk full")
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_an_output_through_a_symlink_replaces_the_folder_it_points_to(tmp_path):
    real = tmp_path / "disk" / "out"
    _write(real, OutputKind.SOURCE, {"orders.csv": "first"})
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    _write(tmp_path / "link", OutputKind.SOURCE, {"orders.csv": "second"})
    assert (tmp_path / "link").is_symlink()
    assert _tree(real)["orders.csv"] == "second"


def test_a_recognised_folder_without_marker(tmp_path):
    """A world bundle has no marker: the function passed as `recognise` names the files it wrote."""

    def recognise(folder):
        return frozenset(["manifest.json", "a.parquet"]) if (folder / "manifest.json").is_file() else None

    out = tmp_path / "w"
    with output_dir(out, OutputKind.WORLD, marker=False, recognise=recognise) as tmp:
        (tmp / "manifest.json").write_text("{}")
        (tmp / "a.parquet").write_text("1")
    assert sorted(_tree(out)) == ["a.parquet", "manifest.json"]
    with output_dir(out, OutputKind.WORLD, marker=False, recognise=recognise) as tmp:
        (tmp / "manifest.json").write_text("{}")
    assert sorted(_tree(out)) == ["manifest.json"]
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match="did not write there: notes.txt"):
        check_output_dir(out, OutputKind.WORLD, recognise=recognise)
    (out / "manifest.json").unlink()
    with pytest.raises(OutputExistsError, match="not empty and holds no world output"):
        check_output_dir(out, OutputKind.WORLD, recognise=recognise)


def test_an_input_is_never_replaced_nor_written_into(tmp_path):
    source = tmp_path / "raw" / "src"
    source.mkdir(parents=True)
    (source / "orders.csv").write_text("raw")
    for out in (source, tmp_path / "raw", tmp_path):
        with pytest.raises(OutputExistsError, match=r"is or contains the input .*src; choose an output folder"):
            check_output_dir(out, OutputKind.CALIBRATION, force=True, inputs=(None, source))
    with pytest.raises(OutputExistsError, match=r"lies inside the input folder .*src"):
        check_output_dir(source / "cal", OutputKind.CALIBRATION, force=True, inputs=(source,))
    check_output_dir(tmp_path / "cal", OutputKind.CALIBRATION, inputs=(source,))
    assert (source / "orders.csv").read_text() == "raw"


def test_the_outputs_of_one_command_must_not_overlap(tmp_path):
    check_distinct_outputs(tmp_path / "cal", None, tmp_path / "report")
    with pytest.raises(OutputExistsError, match=r"output folders .*cal and .*cal overlap"):
        check_distinct_outputs(tmp_path / "cal", tmp_path / "cal")
    with pytest.raises(OutputExistsError, match="overlap"):
        check_distinct_outputs(tmp_path / "cal", tmp_path / "cal" / "report")
