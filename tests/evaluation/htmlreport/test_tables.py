"""The tables report.html draws, on hand-made records of the two-machine world (numbers worked out below)."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from autovend.evaluation.htmlreport.tables import (
    ALL_SITES,
    DAY_COLUMNS,
    Finding,
    day_actions,
    day_table,
    findings,
    machine_revenue,
    price_path,
    site_revenue,
    stockouts,
)
from autovend.evaluation.settings import EvalSettings


def test_machine_and_site_revenue(hand_run):
    m = machine_revenue(hand_run)
    assert m["device_id"].tolist() == ["M1", "M2"]  # world order, the idle machine included
    assert m["revenue"].tolist() == [13.0, 0.0] and m["units"].tolist() == [3, 0]
    assert m["gross_profit"].tolist() == [7.0, 0.0]  # (8 - 4) + (5 - 2)
    s = site_revenue(hand_run).set_index("site_type")
    assert s.loc["office", "machines"] == 1 and s.loc["office", "revenue"] == 13.0
    assert s.loc["office", "revenue_per_machine_day"] == 4.33  # 13.00 / 1 machine / 3 days, to the fen
    assert s.loc["campus", "revenue"] == 0.0


def test_stockouts_per_day(hand_run):
    t = stockouts(hand_run)
    assert t["day"].tolist() == [1, 2, 3]  # day 3 has no hidden rows: zeros, not gaps
    assert t["empty_machines"].tolist() == [0, 1, 0] and t["sold_out"].tolist() == [0, 1, 0]
    assert t["demand"].tolist() == [2, 5, 0] and t["lost"].tolist() == [0, 2, 0]
    assert t["lost_revenue"].tolist() == [0.0, 11.0, 0.0]  # 1 A at 6.00 + 1 B at 5.00


def test_price_path_of_the_stocked_slots(hand_run):
    p = price_path(hand_run).set_index(["site_type", "day"])
    # day 1: A, B on M1 and C on M2 at reference prices; from day 2 A sells at 6.00 = 1.5 x 4.00
    assert p.loc[(ALL_SITES, 1)].tolist() == [1.0, 1.0, 1.0, 3]
    assert p.loc[(ALL_SITES, 2), ["mean", "low", "high"]].tolist() == [1.1667, 1.0, 1.5]  # (1.5 + 1 + 1) / 3
    assert p.loc[("office", 2), ["mean", "slots"]].tolist() == [1.25, 2]
    assert p.loc[("campus", 2), "mean"] == 1.0
    assert list(dict.fromkeys(p.index.get_level_values(0))) == [ALL_SITES, "office", "campus"]


def test_day_actions_summarise_the_calls(hand_run):
    acts = day_actions(hand_run.calls)
    assert acts[1].text == "adjust_price 1 call (0 items, 1 rejected); restock 1 call (3 items); 1 read"
    assert (acts[1].calls, acts[1].accepted, acts[1].rejected) == (4, 3, 1)
    assert acts[2].text == "adjust_price 1 call (1 item); 1 refused call" and acts[2].errors == 1
    assert acts[3].text == "" and acts[3].calls == 1  # end_day only


def test_findings_list_every_one_whatever_max_examples(hand_run):
    found = findings(hand_run, EvalSettings(max_examples=0))
    assert found == [
        Finding("fragmented_visits", 3, "device_id=M1, previous_visit=1, gross_profit_since=7.0, units_restocked=0")
    ]


def test_day_table(hand_run):
    found = [
        Finding("fragmented_visits", 3, "x"),
        Finding("dead_stock_orders", 3, "y"),
        Finding("fragmented_visits", 3, "z"),
    ]
    table, per_day = day_table(hand_run, found)
    assert list(table.columns) == DAY_COLUMNS and table["day"].tolist() == [1, 2, 3]
    assert table["operating"].tolist() == [55.0, 1.5, 35.0]  # fee 20 + visit 35; rent 1.5; visit 35
    assert table["writeoffs"].tolist() == [0.0, 0.0, 2.5]
    assert table["lost"].tolist() == [0, 2, 0] and table["rejected"].tolist() == [1, 0, 0]
    assert table["accepted"].tolist() == [3, 1, 0]
    assert per_day == {3: Counter({"fragmented_visits": 2, "dead_stock_orders": 1})}
    assert isinstance(table, pd.DataFrame)
