"""Tool results as tables: a batch's rejected items in red with their reasons, tables of any result, statuses."""

from __future__ import annotations

import re

import pytest

from autovend.console.results import LIST_ROWS, MAX_ROWS, call_html, number, result_html, status

ORDER = {
    "action": "place_order",
    "day": 1,
    "n_accepted": 1,
    "n_rejected": 1,
    "accepted": [
        {
            "index": 0,
            "item": {"sku_id": "SKU0001", "qty": 5},
            "order_id": 1,
            "sku_id": "SKU0001",
            "qty": 5,
            "unit_cost": 2.01,
            "total_cost": 10.05,
            "eta_day": 4,
            "eta_date": "2025-01-04",
        }
    ],
    "rejected": [
        {
            "index": 1,
            "item": {"sku_id": "NOPE", "qty": 3},
            "code": "unknown_sku",
            "message": "sku_id 'NOPE' is not in the catalog (e.g. 'SKU0001'); search the catalog for valid ids",
        }
    ],
    "total_cost": 10.05,
    "cash": 39_977.95,
}


def rows_of(html: str, table_class: str) -> list[list[str]]:
    """The body rows of the first table of `table_class`, as cell texts."""
    table = re.search(rf'<table class="{table_class}">(.*?)</table>', html, re.S).group(1)
    body = table.split("<tbody>")[1]
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body)]


@pytest.mark.parametrize(
    "ok,result,expected",
    [
        pytest.param(True, ORDER, ("1 of 2 items rejected", "error"), id="partly"),
        pytest.param(True, {**ORDER, "n_accepted": 0, "accepted": []}, ("all 1 item rejected", "error"), id="all"),
        pytest.param(True, {**ORDER, "n_rejected": 0, "rejected": []}, ("ok", "ok"), id="none-rejected"),
        pytest.param(True, {"text": "", "chars": 0}, ("ok", "ok"), id="read"),
        pytest.param(False, None, ("refused", "error"), id="refused"),
    ],
)
def test_a_call_with_a_rejected_item_is_not_ok(ok, result, expected):
    assert status(ok, result) == expected


def test_a_rejected_item_is_a_red_row_with_its_code_and_reason():
    html = result_html(True, ORDER)
    rejected = rows_of(html, "rejected")
    assert rejected == [
        [
            "2",
            "NOPE",
            "3",
            "unknown_sku",
            "sku_id &#x27;NOPE&#x27; is not in the catalog (e.g. &#x27;SKU0001&#x27;); "
            "search the catalog for valid ids",
        ]
    ]  # row 2 of the form (index 1), the item's fields, the code, the reason; the message is not repeated
    assert '<tr class="rejected">' in html and html.index("rejected (1)") < html.index("accepted (1)")
    accepted = rows_of(html, "accepted")
    assert accepted == [["1", "1", "SKU0001", "5", "2.01", "10.05", "4", "2025-01-04"]]
    assert '<th>cash</th><td class="num">39,977.95</td>' in html  # the rest of the result
    assert '<details class="json">' in html and "&quot;n_rejected&quot;: 1" in html  # the JSON, folded


def test_tables_and_lists_of_objects_become_tables():
    result = {
        "day": 4,
        "totals": {"units": 100_000, "value_at_cost": 414_000.0},
        "columns": ["sku_id", "name", "units"],
        "rows": [["SKU0002", "noodles 2", 100_000]],
        "daily": {"columns": ["day", "units_sold"], "rows": []},
        "days": [{"day": 1, "t_max_c": 10.6}, {"day": 2, "t_max_c": 11.9, "basis": "forecast"}],
    }
    html = result_html(True, result)
    assert '<th>day</th><td class="num">4</td>' in html
    assert '<h4 class="key">totals</h4>' in html and '<td class="num">414,000.00</td>' in html
    assert '<td class="nw">SKU0002</td><td>noodles 2</td><td class="num">100,000</td>' in html
    assert '<h4 class="key">daily</h4>' in html and "no rows" in html
    # a list of objects: the union of their keys, in order; a missing value is "–"
    assert "<th>day</th><th>t_<wbr>max_<wbr>c</th><th>basis</th>" in html
    assert '<td class="num">10.60</td><td>–</td>' in html
    assert "{" not in html.split('<details class="json">')[0]  # no JSON above the folded copy


def test_long_tables_are_cut_and_say_so():
    rows = [[i, f"p{i}"] for i in range(MAX_ROWS + 7)]
    html = result_html(True, {"columns": ["a", "b"], "rows": rows})
    assert html.split('<details class="json">')[0].count("<tr><td") == MAX_ROWS
    assert "… and 7 more rows, not shown" in html


def test_a_refused_call_shows_its_error_and_nothing_else():
    html = result_html(False, None, "get_calendar: malformed arguments: days_ahead must be at least 1, got 0")
    assert html == (
        '<p class="error refusal">get_calendar: malformed arguments: days_ahead must be at least 1, got 0</p>'
    )


def test_a_call_summary_names_its_status():
    html = call_html(3, "place_order", {"items": [{"sku_id": "NOPE", "qty": 3}]}, True, ORDER, None)
    summary = re.search(r"<summary>(.*?)</summary>", html).group(1)
    assert summary.startswith("#3 <b>place_order</b> <code>{&quot;items&quot;")
    assert summary.endswith('— <span class="error">1 of 2 items rejected</span>')
    assert 'data-status="error"' in html and " open" not in html.split(">")[0]


@pytest.mark.parametrize(
    "value,shown",
    [(3.0, "3.00"), (0.5489, "0.5489"), (414_000.0, "414,000.00"), (10.6, "10.60"), (1234, "1,234"), (True, "yes")],
)
def test_numbers(value, shown):
    assert number(value) == shown


def test_the_end_of_day_report_is_folded():
    html = result_html(True, {"settled": {"day": 1, "net": -12.0}, "observation": {"balance": {"cash": 1.0}}})
    assert '<details class="folded"><summary>observation: the next day' in html
    assert html.index('<h4 class="key">settled</h4>') < html.index("observation:")


def test_in_a_list_of_calls_accepted_rows_are_cut_but_never_rejected_ones():
    accepted = [{**ORDER["accepted"][0], "index": i, "order_id": i + 1} for i in range(LIST_ROWS + 5)]
    rejected = [{**ORDER["rejected"][0], "index": LIST_ROWS + 5 + i} for i in range(LIST_ROWS + 5)]
    big = {
        **ORDER,
        "accepted": accepted,
        "rejected": rejected,
        "n_accepted": len(accepted),
        "n_rejected": len(rejected),
    }
    listed = call_html(1, "place_order", {}, True, big, None)
    assert len(rows_of(listed, "rejected")) == LIST_ROWS + 5 and len(rows_of(listed, "accepted")) == LIST_ROWS
    assert "… and 5 more rows, not shown" in listed and '<details class="json">' not in listed
    alone = result_html(True, big)  # the last call's result: every row up to MAX_ROWS, and the JSON
    assert len(rows_of(alone, "accepted")) == LIST_ROWS + 5 and '<details class="json">' in alone
