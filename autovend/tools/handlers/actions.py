"""The handlers of the tools that act: orders, prices, discards, end_day, the on-site moves and the notebook.

Each is `handler(ctx, args, raw) -> JSON-ready dict`, or `ToolError` for a bad call. Batches are passed to
the simulator as sent (`raw`), so results echo the items. Money is CNY rounded to the fen.
"""

from __future__ import annotations

from typing import Any

from autovend.sim import BatchResult, DayReport
from autovend.sim.money import from_fen
from autovend.sim.results import Accepted
from autovend.tools.context import ToolContext, ToolError
from autovend.tools.observation import build_observation
from autovend.tools.prompts import day_header
from autovend.tools.schemas import (
    QUOTE_CHARS,
    AdjustPriceArgs,
    DelistArgs,
    DiscardArgs,
    NoArgs,
    PlaceOrderArgs,
    ReduceArgs,
    RestockArgs,
    WriteMemoryArgs,
    clip,
)
from autovend.tools.views import money

_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})


def _batch(res: BatchResult) -> dict[str, Any]:
    return {
        "action": res.action,
        "day": res.day,
        "n_accepted": res.n_accepted,
        "n_rejected": res.n_rejected,
        "accepted": _accepted(res.accepted),
        "rejected": [_echo(r.to_dict()) for r in res.rejected],
    }


def _accepted(accepted: tuple[Accepted, ...]) -> list[dict[str, Any]]:
    """`_echo(a.to_dict())` of each accepted item.

    Built in one step when the item and its detail hold only plain values under text keys and no
    string to clip (every item a well-formed call carries out); any other goes the long way.
    """
    leaf, limit = _LEAF_TYPES, QUOTE_CHARS
    out: list[dict[str, Any]] = []
    for a in accepted:
        item, detail = a.item, a.detail
        if type(item) is dict and type(detail) is dict:
            for k, v in item.items():
                t = type(v)
                if type(k) is not str or t not in leaf or (t is str and len(v) > limit):
                    break
            else:
                for k, v in detail.items():
                    if type(k) is not str or type(v) not in leaf:
                        break
                else:
                    out.append({"index": a.index, "item": dict(item), **detail})
                    continue
        out.append(_echo(a.to_dict()))
    return out


def _echo(entry: dict[str, Any]) -> dict[str, Any]:
    """An accepted or rejected entry whose echoed item has long strings clipped (a huge bad id is not repeated)."""
    item = entry.get("item")
    if isinstance(item, dict) and any(isinstance(v, str) for v in item.values()):
        entry = {**entry, "item": {k: clip(v) if isinstance(v, str) else v for k, v in item.items()}}
    return entry


# ------------------------------------------------------------------------------------------ remote actions


def place_order(ctx: ToolContext, args: PlaceOrderArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Order warehouse stock; cash is paid at once."""
    res = ctx.sim.place_order(raw["items"])
    out = _batch(res)
    out["total_cost"] = money(sum(a.detail["total_cost"] for a in res.accepted))
    out["cash"] = ctx.sim.cash
    return out


def adjust_price(ctx: ToolContext, args: AdjustPriceArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Set per-machine prices within the band."""
    return _batch(ctx.sim.adjust_price(raw["items"]))


def discard(ctx: ToolContext, args: DiscardArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Destroy warehouse units, earliest-expiring first."""
    return _batch(ctx.sim.discard(raw["items"]))


def end_day(ctx: ToolContext, args: NoArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Close the day: demand, settlement, the next day's start and its observation."""
    sim = ctx.sim
    report = sim.end_day()
    out: dict[str, Any] = {"settled": settled_summary(report), "done": report.done}
    if report.done:
        out["final"] = {"net_assets": report.balance.net_assets, "cash": report.balance.cash}
        out["message"] = (
            f"The episode is over: day {report.day} was the last day. "
            f"Final net assets: {report.balance.net_assets:,.2f} {sim.world.economics.currency}."
        )
    else:
        out["next_day"] = day_header(sim.today, sim.horizon_days)
        out["observation"] = build_observation(sim, ctx.views)
    return out


def settled_summary(report: DayReport) -> dict[str, Any]:
    """The settlement of one day in the observation's terms (labor = site-visit fees)."""
    c = report.costs_fen
    return {
        "day": report.day,
        "date": report.info.date.isoformat(),
        "units_sold": report.units_sold,
        "expired_units_sold": report.expired_units_sold,
        "revenue": from_fen(report.revenue_fen),
        "gross_profit": from_fen(report.gross_profit_fen),
        "rent": from_fen(c["warehouse_rent"]),
        "labor": from_fen(c["visit"]),
        "daily_fee": from_fen(c["daily_fee"]),
        "expired_fine": from_fen(c["expired_fine"]),
        "expiry_writeoff": from_fen(report.expiry_writeoff_fen),
        "discard_writeoff": from_fen(report.discard_writeoff_fen),
        "net": from_fen(report.net_fen),
        "visited": list(report.visited),
        "cash": report.balance.cash,
        "net_assets": report.balance.net_assets,
    }


# ------------------------------------------------------------------------------------------ physical


def _physical(ctx: ToolContext, action: str, items: list[Any]) -> dict[str, Any]:
    sim = ctx.sim
    before = sim.visits_today()
    res = getattr(sim, action)(items)
    after = sim.visits_today()
    fee = sim.world.economics.visit_fee
    out = _batch(res)
    out["new_visits"] = [d for d in after if d not in before]
    out["visits_today"] = list(after)
    out["visit_fees_today"] = money(fee * len(after))
    return out


def restock(ctx: ToolContext, args: RestockArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Move warehouse units onto machines (on site)."""
    return _physical(ctx, "restock", raw["items"])


def reduce(ctx: ToolContext, args: ReduceArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Take some units off machines back to the warehouse (on site)."""
    return _physical(ctx, "reduce", raw["items"])


def delist(ctx: ToolContext, args: DelistArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Take all units of products off machines back to the warehouse (on site)."""
    return _physical(ctx, "delist", raw["items"])


# ------------------------------------------------------------------------------------------ memory


def read_memory(ctx: ToolContext, args: NoArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """The whole notebook."""
    return {"text": ctx.notebook, "chars": len(ctx.notebook), "limit": ctx.memory_limit}


def write_memory(ctx: ToolContext, args: WriteMemoryArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Replace the notebook (an empty text clears it); too long a text is refused and the old notes stay."""
    n, limit = len(args.text), ctx.memory_limit
    if n > limit:
        raise ToolError(
            f"write_memory: the text has {n:,} characters, {n - limit:,} over the limit of {limit:,}. "
            f"Nothing was saved; your previous notes ({len(ctx.notebook):,} characters) are unchanged. "
            "Shorten the text and write again."
        )
    ctx.notebook = args.text
    return {"saved": True, "chars": n, "limit": limit, "cleared": n == 0}
