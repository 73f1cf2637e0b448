"""Deterministic PNG files: the same figure gives the same bytes, with no version or date stamp."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from autovend.png import DPI, fixed_style, png_chunks, save_png

STAMPS = {b"tEXt", b"zTXt", b"iTXt", b"tIME"}  # text chunks (Software, dates) and the modification time

DRAW = '''
import sys
import matplotlib.pyplot as plt
from autovend.png import fixed_style, save_png

@fixed_style
def draw(path):
    """A figure with lines, markers, text and a legend (fonts are rasterised too)."""
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2, 3], [3, 1, 2, 0.5], marker="o", label="a line")
    ax.bar([0.5, 1.5], [1.2, 2.2], width=0.4, label="bars")
    ax.set(xlabel="day", ylabel="units", title="Same bytes, run after run")
    ax.legend()
    fig.tight_layout()
    return save_png(fig, path)

if __name__ == "__main__":
    draw(sys.argv[1])
'''


def _draw_in_process(path: Path) -> bytes:
    namespace: dict = {}
    exec(compile(DRAW, "draw", "exec"), namespace)
    namespace["draw"](path)
    return path.read_bytes()


def _draw_in_subprocess(path: Path) -> bytes:
    subprocess.run([sys.executable, "-c", DRAW, str(path)], check=True)
    return path.read_bytes()


@pytest.mark.slow
def test_two_processes_write_the_same_bytes(tmp_path):
    first = _draw_in_subprocess(tmp_path / "a.png")
    second = _draw_in_subprocess(tmp_path / "b.png")
    assert len(first) > 5_000
    assert first == second
    assert _draw_in_process(tmp_path / "c.png") == first


def test_the_file_has_no_stamp_and_a_fixed_resolution(tmp_path):
    data = _draw_in_process(tmp_path / "a.png")
    kinds = [kind for kind, _ in png_chunks(data)]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert not STAMPS & set(kinds), kinds
    assert b"matplotlib" not in data.lower()
    chunks = dict(png_chunks(data))
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    assert (width, height) == (4 * DPI, 3 * DPI) == (440, 330)
    # pHYs: pixels per metre on both axes, unit 1 = metre; 110 dpi = 110 / 0.0254 = 4330.7 -> 4331
    assert struct.unpack(">IIB", chunks[b"pHYs"]) == (4331, 4331, 1)


def test_plain_savefig_stamps_the_matplotlib_version():
    """The stamp `save_png` leaves out: matplotlib's default PNG carries a Software text chunk."""
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    texts = [payload for kind, payload in png_chunks(buf.getvalue()) if kind == b"tEXt"]
    assert any(t.lower().startswith(b"software\x00matplotlib") for t in texts), texts


def test_local_matplotlib_settings_do_not_change_the_file(tmp_path):
    reference = _draw_in_process(tmp_path / "a.png")
    local = {"font.size": 17, "lines.linewidth": 4, "axes.facecolor": "#eeeeee", "savefig.dpi": 50}
    with plt.rc_context(local):
        assert _draw_in_process(tmp_path / "b.png") == reference


def test_fixed_style_restores_the_callers_settings():
    @fixed_style
    def font_size() -> float:
        return plt.rcParams["font.size"]

    with plt.rc_context({"font.size": 17}):
        assert font_size() == 10.0  # matplotlib's default
        assert plt.rcParams["font.size"] == 17


def test_save_png_closes_the_figure(tmp_path):
    fig, _ = plt.subplots()
    save_png(fig, tmp_path / "a.png")
    assert not plt.fignum_exists(fig.number)


def test_png_chunks_refuses_other_bytes():
    with pytest.raises(ValueError, match="not a PNG file"):
        png_chunks(b"GIF89a not a png")
