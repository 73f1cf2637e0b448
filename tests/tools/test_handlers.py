"""Tool errors and batch results quote a caller's ids: a huge bad id is shown as a short prefix and its length."""

from __future__ import annotations

import datetime as dt

import numpy as np

from autovend.sim.results import Accepted
from autovend.tools.handlers.actions import _accepted

from .conftest import fail, ok

BIG = "SKU" + "9" * 99_997  # 100,000 characters (arguments may take 131,072: autovend.tools.guard)
SHOWN = "SKU" + "9" * 57 + "... (100,000 characters)"
LONG = "SKU" + "9" * 1_197  # 1,200 characters: 100 items of it fit in the arguments' limit


def test_a_batch_of_huge_bad_ids_is_answered_briefly(session):
    res = session.call("place_order", {"items": [{"sku_id": LONG, "qty": 1}] * 100})
    assert res.ok
    out = res.content
    assert (out["n_accepted"], out["n_rejected"]) == (0, 100)
    shown = "SKU" + "9" * 57 + "... (1,200 characters)"
    assert [r["item"] for r in out["rejected"]] == [{"sku_id": shown, "qty": 1}] * 100
    assert {r["code"] for r in out["rejected"]} == {"unknown_sku"}
    assert len(res.to_json()) < 100 * 400  # not 120,000 characters


def test_a_batch_over_the_size_limit_is_refused_whole_and_briefly(session):
    msg = fail(session, "place_order", {"items": [{"sku_id": BIG, "qty": 1}] * 100})
    assert msg.startswith("place_order: refused, nothing was done: the arguments: 10,002,211 characters as JSON, over")
    assert len(msg) < 300


def test_items_are_echoed_as_sent_with_long_strings_clipped(session):
    out = ok(session, "place_order", {"items": [{"sku_id": "SKU0001", "qty": 2}]})
    assert out["accepted"][0]["item"] == {"sku_id": "SKU0001", "qty": 2}
    out = ok(session, "adjust_price", {"items": [{"device_id": BIG, "sku_id": "SKU0001", "price": 3.0}]})
    assert out["rejected"][0]["item"] == {"device_id": SHOWN, "sku_id": "SKU0001", "price": 3.0}


def test_accepted_items_are_shown_in_plain_json_values_with_long_strings_clipped():
    plain = Accepted(0, {"sku_id": "SKU0001", "qty": 2}, {"order_id": 7, "total_cost": 4.02, "eta": None})
    odd = Accepted(1, {"sku_id": BIG, "qty": 1}, {"units": np.int64(3), "date": dt.date(2025, 1, 2)})
    shown = _accepted((plain, odd))
    assert shown == [
        {"index": 0, "item": {"sku_id": "SKU0001", "qty": 2}, "order_id": 7, "total_cost": 4.02, "eta": None},
        {"index": 1, "item": {"sku_id": SHOWN, "qty": 1}, "units": 3, "date": "2025-01-02"},
    ]
    assert type(shown[1]["units"]) is int
    assert shown[0]["item"] is not plain.item  # a copy: the result does not share the caller's item


def test_unknown_ids_in_queries_are_quoted(session):
    quoted = f"'{SHOWN[:-24]}...' (100,000 characters)"
    msg = fail(session, "get_device_detail", {"device_id": BIG})
    assert msg.startswith(f"device_id {quoted} is not one of the machines; use one of: CN_WORKSITE_01")
    msg = fail(session, "get_sku_across_devices", {"sku_id": BIG})
    assert msg.startswith(f"sku_id {quoted} is not in the catalog")
    msg = fail(session, "get_categories", {"category_l1": BIG})
    assert msg.startswith(f"category_l1 {quoted} does not exist; use one of: drinks, snacks")
    note = ok(session, "get_catalog", {"category_l2": BIG})["note"]
    assert note.startswith(f"no category_l2 {quoted}; known values: ")
    assert all(len(m) < 400 for m in (msg, note))
    assert "device_id 'X' is not one of the machines" in fail(session, "get_device_detail", {"device_id": "X"})
