"""leaderboard.html: the leaderboard's groups and cells as one offline page, checked in headless Chromium."""

from __future__ import annotations

from pathlib import Path

from autovend.evaluation.htmlreport import charts as ch
from autovend.sweep.leaderboard_html import leaderboard_html, write_leaderboard_html

from ..browser import canvas_pixels, offline_page, wait_until_painted
from .test_leaderboard import HASH_A, HASH_B, _row

SERIES = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in ch.PALETTE[:2]]


def _rows():
    return [
        _row("cn20", HASH_A, "baseline", 1, 10000.0),
        _row("cn20", HASH_A, "baseline", 2, 12000.0),
        _row("cn20", HASH_A, "openai-gpt", 1, 15000.0, cost=0.5),
        _row("cn20", HASH_B, "baseline", 3, 30000.0),  # another world hash: a table of its own
    ]


def test_the_page_has_one_ranked_table_per_world_and_links_existing_reports(tmp_path: Path) -> None:
    report = tmp_path / "runs" / "cn20" / "baseline-s1-d5" / "report.html"
    report.parent.mkdir(parents=True)
    report.write_text("<html></html>")
    page = leaderboard_html(_rows(), tmp_path, unfinished=["cn20/baseline-s4-d5"])
    assert "4 of 5 runs finished" in page
    assert page.count('<section id="group-') == 2
    assert "cn20: cn20 (aaaaaaaaaaaa), 5 of 180 days" in page and "cn20: cn20 (bbbbbbbbbbbb), 5 of 180 days" in page
    # ranked by mean net assets (thousand CNY): openai-gpt 15.00 first, then baseline 11.00 ± 1.41
    first, second = page.index(">openai-gpt<"), page.index(">baseline<")
    assert first < second
    assert ">15.00<" in page and ">11.00 ± 1.41<" in page
    assert '<a href="runs/cn20/baseline-s1-d5/report.html">s1</a>' in page  # s2 has no report: plain text
    assert '<a href="runs/cn20/baseline-s2-d5/report.html">' not in page
    assert "cn20/baseline-s4-d5" in page


def test_the_page_draws_its_charts_offline(tmp_path: Path) -> None:
    path = write_leaderboard_html(_rows(), tmp_path)
    assert path == tmp_path / "leaderboard.html"
    with offline_page(path, tmp_path / "profile") as visit:
        wait_until_painted(visit.page, ["chart-final-0"], SERIES, 100)
        assert canvas_pixels(visit.page, "chart-final-0", SERIES)["matching"] >= 100  # three dots of 12 px
        assert visit.blocked == [] and visit.errors == []
