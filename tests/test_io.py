import os
import pickle

import pytest

from autovend.io import atomic_dir, atomic_write_bytes, atomic_write_text, write_pickle


def test_atomic_outputs_get_the_usual_modes(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_dir(tmp_path / "out") as tmp:
            (tmp / "a.txt").write_text("1")
        atomic_write_text(tmp_path / "f.txt", "x")
        write_pickle(tmp_path / "p.pkl", [1])
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "f.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "f.txt").read_text() == "x"
    assert (tmp_path / "p.pkl").stat().st_mode & 0o777 == 0o644


def test_a_failed_block_keeps_the_earlier_folder(tmp_path):
    with atomic_dir(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("first")
    with pytest.raises(RuntimeError), atomic_dir(tmp_path / "out") as tmp:
        (tmp / "a.txt").write_text("second")
        raise RuntimeError("boom")
    assert (tmp_path / "out" / "a.txt").read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_atomic_write_bytes_replaces_a_file_whole_and_makes_its_folder(tmp_path):
    target = tmp_path / "new" / "data.bin"
    atomic_write_bytes(target, b"\x00\x01first")
    atomic_write_bytes(target, b"second")
    assert target.read_bytes() == b"second"
    assert [p.name for p in target.parent.iterdir()] == ["data.bin"]  # no temporary file left


def test_a_failed_write_keeps_the_earlier_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "state.pkl"
    write_pickle(target, {"day": 3})

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_pickle(target, {"day": 4})
    assert pickle.loads(target.read_bytes()) == {"day": 3}
    assert [p.name for p in tmp_path.iterdir()] == ["state.pkl"]


def test_text_is_written_as_utf8_with_newlines_as_given(tmp_path):
    atomic_write_text(tmp_path / "t.md", "元旦\r\nline\n")
    assert (tmp_path / "t.md").read_bytes() == "元旦\r\nline\n".encode()
