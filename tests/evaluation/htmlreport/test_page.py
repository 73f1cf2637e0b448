"""The page builder: escaping, tables, sections and charts in order; an empty chart paints no series colour."""

from __future__ import annotations

import pytest

from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.page import Cell, Page, esc, num, table, text

from ...browser import canvas_pixels, offline_page, wait_until_painted


def test_text_is_escaped_everywhere():
    assert esc('<b a="1">&') == "&lt;b a=&quot;1&quot;&gt;&amp;"
    assert text("<x>", title='say "hi"').render() == '<td title="say &quot;hi&quot;">&lt;x&gt;</td>'
    assert num("1,234.50").render("th") == '<th class="num">1,234.50</th>'
    assert Cell("2025-01-01", css="date").render() == '<td class="date">2025-01-01</td>'


def test_table_rows_carry_their_attributes():
    out = table([text("day"), num("net")], [[text(1), num("2.00")], [text(2), num("-1.00")]], row_attrs=['id="day-1"'])
    assert '<tr id="day-1"><td>1</td><td class="num">2.00</td></tr>' in out
    assert "<tr><td>2</td>" in out and out.startswith("<table><thead><tr><th>day</th>")


def test_page_lists_sections_in_order_and_refuses_a_chart_id_twice():
    page = Page("Run <x>", ["agent <b>a</b>"])
    div = page.chart("chart-one", ch.line_chart("One", "CNY", [ch.Line("a", [1, 2], [1.0, 2.0], ch.color(0))]))
    assert div == '<div class="chart" id="chart-one"></div>'
    page.section("first", "First & one", div)
    page.section("second", "Second", "<p>two</p>")
    with pytest.raises(ValueError, match="chart-one"):
        page.chart("chart-one", ch.line_chart("Again", "CNY", []))
    out = page.render()
    assert out == page.render()  # nothing from the clock or chance
    assert '<nav><a href="#first">First &amp; one</a><a href="#second">Second</a></nav>' in out
    assert out.index('id="first"') < out.index('id="second"') < out.index('data-chart="chart-one"')
    assert "<title>Run &lt;x&gt;</title>" in out and "<li>agent <b>a</b></li>" in out


@pytest.mark.slow
def test_an_empty_chart_paints_no_series_colour(tmp_path):
    """The browser tests' criterion of a drawn chart (pixels in the series' colours) fails on a chart without data."""
    page = Page("t")
    colour = tuple(int(ch.color(0)[i : i + 2], 16) for i in (1, 3, 5))
    body = page.chart("empty", ch.line_chart("Empty", "CNY", [ch.Line("x", [], [], ch.color(0))]))
    body += page.chart("line", ch.line_chart("Line", "CNY", [ch.Line("x", [0, 10], [1.0, 2.0], ch.color(0))]))
    page.section("s", "S", body)
    (tmp_path / "p.html").write_text(page.render(), encoding="utf-8")
    with offline_page(tmp_path / "p.html", tmp_path / "profile") as visit:
        wait_until_painted(visit.page, ["line"], [colour], 300)
        wait_until_painted(visit.page, ["empty"])  # its axes and grid
        empty, line = canvas_pixels(visit.page, "empty", [colour]), canvas_pixels(visit.page, "line", [colour])
        # the legend's sample line is the one spot of colour in the empty chart
        assert empty["drawn"] > 1000 and empty["matching"] < 100 and line["matching"] > 300
