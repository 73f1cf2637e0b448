"""Per-day summaries of a run folder and its calls, filtered by day range and tool (`autovend replay`).

`day_summaries(ledger, calls, ...)` gives one `DaySummary` per settled day: units sold, revenue, purchases,
the operating costs (warehouse rent, daily fee, visit fees, expired-sale fines), write-offs, the day's net
result, cash and net assets at the close, and the tool calls of the day by name. The ledger is the run's
daily.csv (`ledger_rows`); a run still under way has none yet, and then its end_day results in the trajectory
stand in (`settled_rows`), which carry everything but the purchases.

`summary_lines` renders the summaries as a table for the terminal; `to_json` as JSON-ready dicts.
Pure functions; the CLI reads the files.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autovend.errors import ConfigError, RunFolderError

OPERATING_COSTS = ("warehouse_rent", "daily_fee", "visit", "expired_fine")
WRITE_OFFS = ("expiry_writeoff", "discard_writeoff")
# end_day's settlement names for the ledger's columns
SETTLED_NAMES = {"warehouse_rent": "rent", "visit": "labor"}


@dataclass(frozen=True)
class LedgerRow:
    """One settled day's numbers (CNY; purchase None where the source does not have it)."""

    day: int
    date: str
    units_sold: int
    revenue: float
    purchase: float | None
    warehouse_rent: float
    daily_fee: float
    visit: float
    expired_fine: float
    expiry_writeoff: float
    discard_writeoff: float
    net: float
    cash: float
    net_assets: float


@dataclass(frozen=True)
class DaySummary:
    """One day of a run (see the module docstring); `calls` by tool name, in order of first call."""

    day: int
    date: str
    units_sold: int
    revenue: float
    purchase: float | None
    operating_costs: float
    write_offs: float
    net: float
    cash: float
    net_assets: float
    calls: dict[str, int]
    errors: int  # calls of the day (among those counted) that were refused


def ledger_rows(path: Path) -> list[LedgerRow]:
    """The rows of a run's daily.csv."""
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for n, r in enumerate(rows, 1):
        try:
            out.append(
                LedgerRow(
                    int(r["day"]),
                    r["date"],
                    int(r["units_sold"]),
                    *(float(r[c]) for c in ("revenue", "purchase", *OPERATING_COSTS, *WRITE_OFFS)),
                    *(float(r[c]) for c in ("net", "cash", "net_assets")),
                )
            )
        except (KeyError, ValueError) as exc:
            raise RunFolderError(f"{path}, row {n}: not a daily ledger row ({exc}); re-run to rewrite it") from exc
    return out


def settled_rows(calls: Iterable[dict[str, Any]]) -> list[LedgerRow]:
    """Ledger rows from the accepted end_day calls' settlements (no purchases: they are not in a settlement)."""
    out = []
    for c in calls:
        if c.get("tool") != "end_day" or not c.get("ok") or not isinstance(c.get("result"), dict):
            continue
        s = c["result"].get("settled") or {}
        costs = {k: float(s.get(SETTLED_NAMES.get(k, k), 0.0)) for k in (*OPERATING_COSTS, *WRITE_OFFS)}
        out.append(
            LedgerRow(
                day=int(s["day"]),
                date=str(s.get("date", "")),
                units_sold=int(s.get("units_sold", 0)),
                revenue=float(s.get("revenue", 0.0)),
                purchase=None,
                **costs,
                net=float(s.get("net", 0.0)),
                cash=float(s.get("cash", 0.0)),
                net_assets=float(s.get("net_assets", 0.0)),
            )
        )
    return out


def check_tools(tools: Sequence[str], known: Iterable[str]) -> None:
    """ConfigError for a --tool name that is none of the tools."""
    names = list(known)
    unknown = [t for t in tools if t not in names]
    if unknown:
        raise ConfigError(f"--tool {unknown[0]!r} is not a tool; the tools are: {', '.join(names)}")


def day_range(days: Sequence[int], first: int | None, last: int | None) -> tuple[int, int]:
    """The days asked for (default: all of `days`), checked against the days the run has."""
    if not days:
        raise RunFolderError("the run has no settled day yet")
    lo, hi = days[0], days[-1]
    first = lo if first is None else first
    last = hi if last is None else last
    if first > last:
        raise ConfigError(f"the day range {first}-{last} is empty; give --from before --to")
    if first < lo or last > hi:
        raise RunFolderError(f"the run covers days {lo}-{hi}, not {first}-{last}; pick days in that range")
    return first, last


def day_summaries(
    ledger: Sequence[LedgerRow],
    calls: Iterable[dict[str, Any]],
    first: int | None = None,
    last: int | None = None,
    tools: Sequence[str] = (),
) -> list[DaySummary]:
    """The summaries of days first..last (default all), counting only `tools`' calls when given."""
    lo, hi = day_range([r.day for r in ledger], first, last)
    by_day: dict[int, Counter[str]] = {}
    errors: Counter[int] = Counter()
    for c in calls:
        day, tool = int(c.get("day", 0)), str(c.get("tool"))
        if tools and tool not in tools:
            continue
        by_day.setdefault(day, Counter())[tool] += 1
        errors[day] += not c.get("ok")
    out = []
    for r in ledger:
        if not lo <= r.day <= hi:
            continue
        out.append(
            DaySummary(
                r.day,
                r.date,
                r.units_sold,
                r.revenue,
                r.purchase,
                round(sum(getattr(r, k) for k in OPERATING_COSTS), 2),
                round(sum(getattr(r, k) for k in WRITE_OFFS), 2),
                r.net,
                r.cash,
                r.net_assets,
                dict(by_day.get(r.day, {})),
                int(errors[r.day]),
            )
        )
    return out


def _money(x: float | None) -> str:
    return "–" if x is None else f"{x:,.2f}"


def summary_lines(days: Sequence[DaySummary]) -> list[str]:
    """A table: one line per day and a total line (sums of the flows; cash and net assets at the last day)."""
    head = ("day", "date", "units", "revenue", "purchases", "op. costs", "write-offs", "net", "net assets")
    rows = [
        (
            str(d.day),
            d.date,
            f"{d.units_sold:,}",
            _money(d.revenue),
            _money(d.purchase),
            _money(d.operating_costs),
            _money(d.write_offs),
            _money(d.net),
            _money(d.net_assets),
            ", ".join(f"{k} {v}" for k, v in d.calls.items()) + (f" ({d.errors} refused)" if d.errors else ""),
        )
        for d in days
    ]
    if days:
        purchases = None if any(d.purchase is None for d in days) else sum(d.purchase or 0.0 for d in days)
        total_calls: Counter[str] = Counter()
        for d in days:
            total_calls.update(d.calls)
        rows.append(
            (
                "total",
                f"{len(days)} days",
                f"{sum(d.units_sold for d in days):,}",
                _money(sum(d.revenue for d in days)),
                _money(purchases),
                _money(sum(d.operating_costs for d in days)),
                _money(sum(d.write_offs for d in days)),
                _money(sum(d.net for d in days)),
                _money(days[-1].net_assets),
                ", ".join(f"{k} {v}" for k, v in total_calls.most_common()),
            )
        )
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        left = f"{cells[0]:>{widths[0]}}  {cells[1]:<{widths[1]}}"
        nums = "  ".join(f"{c:>{w}}" for c, w in zip(cells[2:9], widths[2:], strict=True))
        return f"{left}  {nums}  {cells[9] if len(cells) > 9 else 'tool calls'}".rstrip()

    return [line(head), *(line(r) for r in rows)]


def to_json(days: Sequence[DaySummary]) -> list[dict[str, Any]]:
    """The summaries as JSON-ready dicts."""
    return [asdict(d) for d in days]


def call_records(
    calls: Iterable[dict[str, Any]], first: int, last: int, tools: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The call records of days first..last (of `tools` only, when given), as the trajectory holds them."""
    return [c for c in calls if first <= int(c.get("day", 0)) <= last and (not tools or c.get("tool") in tools)]
