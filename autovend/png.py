"""PNG files of matplotlib figures whose bytes depend only on what is drawn.

Every figure the pipeline and the evaluation write goes through here: drawing functions are wrapped in
`fixed_style` (matplotlib's default style, whatever a local matplotlibrc says) and save with `save_png` (one
resolution, no text chunks: matplotlib otherwise stamps its version into the file as `Software`). The same data
drawn with the same locked packages (requirements/lock.txt) then gives the same bytes, run after run.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

DPI = 110
SIGNATURE = b"\x89PNG\r\n\x1a\n"

P = ParamSpec("P")
R = TypeVar("R")


def fixed_style(draw: Callable[P, R]) -> Callable[P, R]:
    """Run `draw` under matplotlib's default style, so a local matplotlibrc cannot change the picture."""

    @functools.wraps(draw)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with plt.style.context("default"):
            return draw(*args, **kwargs)

    return wrapper


def save_png(fig: Figure, path: str | Path) -> Path:
    """Write `fig` to `path` as a PNG at `DPI` dots per inch with no text chunks, and close the figure."""
    path = Path(path)
    try:
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    finally:
        plt.close(fig)
    return path


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The (type, payload) chunks of a PNG file's bytes, in file order."""
    if data[:8] != SIGNATURE:
        raise ValueError("not a PNG file: the first 8 bytes are not the PNG signature")
    chunks: list[tuple[bytes, bytes]] = []
    pos = 8
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        chunks.append((data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]))
        pos += 12 + length  # length, type, payload, CRC
    return chunks
