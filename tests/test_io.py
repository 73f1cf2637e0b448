import os

import pytest

from autovend.io import (
    atomic_dir,
    atomic_write_text,
    write_pickle,
)


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
