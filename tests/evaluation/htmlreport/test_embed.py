"""Chart JSON that depends only on the chart (not on Bokeh's process-wide id counter), and inline BokehJS."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.embed import bokeh_js, chart_item, script_json


def _chart():
    line = ch.Line("net assets", [0, 1, 2], [40000.0, 39920.5, 40110.25], ch.color(0))
    return ch.line_chart("Net assets", "CNY", [line], 40000.0)


def _stockouts():
    """A chart with a second y range: Bokeh serialises it inside a map, as (name, model) tuples."""
    table = pd.DataFrame(
        {"day": [1, 2], "empty_machines": [0, 1], "sold_out": [2, 0], "demand": [5, 4], "lost": [1, 0]}
    ).assign(lost_revenue=[4.5, 0.0])
    return ch.stockout_chart(table, "CNY")


def _ids(node, defined, used):
    if isinstance(node, dict):
        if isinstance(node.get("id"), str):
            (defined if node.get("type") == "object" else used).add(node["id"])
        for v in node.values():
            _ids(v, defined, used)
    elif isinstance(node, (list, tuple)):
        for v in node:
            _ids(v, defined, used)


@pytest.mark.parametrize("make", [_chart, _stockouts])
def test_chart_json_is_the_same_whatever_was_built_before(make):
    first = script_json(chart_item(make(), "chart-a"))
    for _ in range(3):  # advances Bokeh's global id counter
        make()
    assert script_json(chart_item(make(), "chart-a")) == first


@pytest.mark.parametrize("make", [_chart, _stockouts])
def test_every_model_is_renamed_and_every_reference_defined(make):
    item = chart_item(make(), "chart-a")
    defined, used = set(), set()
    _ids(item["doc"], defined, used)
    # Bokeh's JSON shares reference dicts between places (a rename in place would rename some twice)
    # and holds models inside tuples (a map's entries)
    assert used <= defined and item["root_id"] in defined
    assert all(i.startswith("chart-a-") for i in defined | used), sorted(defined | used)
    assert item["target_id"] == "chart-a"


def test_chart_data_are_plain_json_numbers():
    text = script_json(chart_item(_chart(), "chart-a"))
    assert "[40000.0,39920.5,40110.25]" in text  # the values as written, not base64
    assert "nan" not in text.lower() and "infinity" not in text.lower()  # no box-zoom overlay defaults either


def test_script_json_cannot_close_its_script_and_refuses_nan():
    obj = {"label": "</script><!-- x", "n": 1.5}
    text = script_json(obj)
    assert "<" not in text and json.loads(text) == obj
    with pytest.raises(ValueError):
        script_json({"x": math.nan})


def test_bokeh_js_is_the_core_bundle_inline():
    js = bokeh_js()
    assert "<script src" not in js and "<link" not in js  # inline: nothing to fetch
    assert "BEGIN bokeh.min.js" in js and "bokeh-widgets" not in js and "bokeh-gl" not in js
