"""The calibration report: calibration.md and its figures are the same bytes when written again."""

from __future__ import annotations

from autovend.calibration.report import write_report
from autovend.io import OUTPUT_MARKER, read_marker
from autovend.png import png_chunks

FIGURES = ["demand_fit.png", "overdispersion.png", "shrinkage.png", "site_preference.png"]


def test_report_written_twice_is_the_same_bytes(tmp_path, synthetic_calibration):
    write_report(synthetic_calibration, tmp_path / "a")
    write_report(synthetic_calibration, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted([OUTPUT_MARKER, "calibration.md", *FIGURES])
    assert read_marker(tmp_path / "a").files == tuple(sorted(["calibration.md", *FIGURES]))
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    for name in FIGURES:
        kinds = {kind for kind, _ in png_chunks((tmp_path / "a" / name).read_bytes())}
        assert not {b"tEXt", b"zTXt", b"iTXt", b"tIME"} & kinds, name
    text = (tmp_path / "a" / "calibration.md").read_text()
    assert "| kept products | `n_products_kept` | 1,372 | 1,372 |" in text
    assert all(f"![{f}]({f})" in text for f in FIGURES)
