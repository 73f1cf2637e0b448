"""Per-day summaries for `autovend replay --summary`: hand-made ledger rows and calls."""

from __future__ import annotations

import pytest

from autovend.errors import ConfigError, RunFolderError
from autovend.evaluation.daysummary import (
    LedgerRow,
    call_records,
    check_tools,
    day_summaries,
    ledger_rows,
    settled_rows,
    summary_lines,
    to_json,
)

# day 1: revenue 10.00, purchases 30.00, rent 1.00 + fee 12.00 + visits 5.00 + fine 0.50 = 18.50 operating costs,
# 2.00 expired written off; day 2: 20.00 revenue, fee 12.00 only
LEDGER = [
    LedgerRow(1, "2025-01-01", 4, 10.0, 30.0, 1.0, 12.0, 5.0, 0.5, 2.0, 0.0, -16.5, 9_960.0, 9_983.5),
    LedgerRow(2, "2025-01-02", 6, 20.0, 0.0, 0.0, 12.0, 0.0, 0.0, 0.0, 0.0, -2.0, 9_968.0, 9_981.5),
]


def _call(seq, day, tool, ok=True, result=None):
    return {"kind": "call", "seq": seq, "day": day, "tool": tool, "arguments": {}, "ok": ok, "result": result}


CALLS = [
    _call(1, 1, "restock"),
    _call(2, 1, "restock", ok=False),
    _call(3, 1, "place_order"),
    _call(4, 1, "end_day"),
    _call(5, 2, "end_day"),
]


def test_one_summary_per_day_with_calls_by_tool():
    days = day_summaries(LEDGER, CALLS)
    assert [(d.day, d.operating_costs, d.write_offs, d.net, d.errors) for d in days] == [
        (1, 18.5, 2.0, -16.5, 1),
        (2, 12.0, 0.0, -2.0, 0),
    ]
    assert days[0].calls == {"restock": 2, "place_order": 1, "end_day": 1}
    only = day_summaries(LEDGER, CALLS, tools=["restock"])
    assert [d.calls for d in only] == [{"restock": 2}, {}]
    assert to_json(day_summaries(LEDGER, CALLS, 2, 2))[0]["calls"] == {"end_day": 1}


def test_the_table_has_a_total_line():
    lines = summary_lines(day_summaries(LEDGER, CALLS))
    assert (
        lines
        == [
            "  day  date        units  revenue  purchases  op. costs  write-offs     net  net assets  tool calls",
            "    1  2025-01-01      4    10.00      30.00      18.50        2.00  -16.50    9,983.50  restock 2, place_order 1, end_day 1 (1 refused)",
            "    2  2025-01-02      6    20.00       0.00      12.00        0.00   -2.00    9,981.50  end_day 1",
            "total  2 days         10    30.00      30.00      30.50        2.00  -18.50    9,981.50  restock 2, end_day 2, place_order 1",  # most first, ties in order of first call
        ]
    )


def test_a_run_under_way_is_summed_from_its_settlements():
    settled = {"day": 1, "date": "2025-01-01", "units_sold": 4, "revenue": 10.0, "rent": 1.0, "labor": 5.0,
               "daily_fee": 12.0, "expired_fine": 0.5, "expiry_writeoff": 2.0, "discard_writeoff": 0.0,
               "net": -16.5, "cash": 9_960.0, "net_assets": 9_983.5}  # fmt: skip
    rows = settled_rows([_call(1, 1, "end_day", result={"settled": settled}), _call(2, 2, "end_day", ok=False)])
    assert rows == [LEDGER[0].__class__(**{**LEDGER[0].__dict__, "purchase": None})]
    assert summary_lines(day_summaries(rows, []))[1].split()[4] == "–"  # purchases are not in a settlement


def test_ranges_tools_and_files_are_checked(tmp_path):
    with pytest.raises(RunFolderError, match="the run covers days 1-2, not 2-3"):
        day_summaries(LEDGER, CALLS, 2, 3)
    with pytest.raises(ConfigError, match="the day range 2-1 is empty"):
        day_summaries(LEDGER, CALLS, 2, 1)
    with pytest.raises(ConfigError, match="--tool 'sell' is not a tool; the tools are: restock, end_day"):
        check_tools(["restock", "sell"], ["restock", "end_day"])
    assert [c["seq"] for c in call_records(CALLS, 1, 1, ["restock"])] == [1, 2]
    bad = tmp_path / "daily.csv"
    bad.write_text("day,date,units_sold\n1,2025-01-01,x\n")
    with pytest.raises(RunFolderError, match="daily.csv, row 1: not a daily ledger row"):
        ledger_rows(bad)
