"""The single definition of the 18 tools: name, kind, description, argument model, handler, result model.

The argument model gives the input JSON schema, the result model the output schema.

Both transports serve exactly these definitions: `ToolSession` in process and the MCP server.
Descriptions are templates filled with the world's numbers (`prompt_facts`), so they state the
visit fee or memory limit of the world being served; the schemas' texts name money as `{currency}`
and `{minor_unit}` (and the price band as `{band_lo}`-`{band_hi}`), filled with the world's by
`tool_listing` (`autovend.currency`). Order and names follow the paper's Table 3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel

from autovend.currency import fill_money, money_words
from autovend.tools import handlers as h
from autovend.tools import results as r
from autovend.tools import schemas as s
from autovend.tools.context import ToolContext
from autovend.tools.sql import schema_text

Kind = Literal["remote", "physical", "memory"]
Handler = Callable[[ToolContext, Any, dict[str, Any]], dict[str, Any]]

KIND_PREFIX: dict[str, str] = {
    "remote": "[remote, free]",
    "physical": "[on site: {visit_fee} per machine per day touched, working days only]",
    "memory": "[memory, free]",
}
MUTATION_TOOLS = ("place_order", "adjust_price", "discard", "restock", "reduce", "delist")
# tools whose answer depends on their arguments and the simulator's observable state only (not on the
# notebook, the SQL sandbox or a clock): the same call in the same state may be answered again
STATE_READ_TOOLS = frozenset(
    {
        "get_catalog",
        "get_categories",
        "get_warehouse",
        "get_device_detail",
        "get_sku_across_devices",
        "get_sales_history",
        "get_calendar",
        "get_weather",
    }
)


@dataclass(frozen=True)
class ToolDef:
    """One tool: what the agent sees (name, description, JSON schemas) and what runs (models, handler)."""

    name: str
    kind: Kind
    summary: str  # description template (filled with `prompt_facts`)
    args: type[BaseModel]
    handler: Handler
    result: type[BaseModel]  # what a successful call returns (`autovend.tools.results`)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (an object; unknown keys are not allowed)."""
        return s.json_schema(self.args)

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        """The JSON schema of a successful result (an object; the MCP `outputSchema`)."""
        return s.output_json_schema(self.result)

    def description(self, facts: dict[str, Any]) -> str:
        """The description shown to the agent, starting with the tool's kind."""
        return KIND_PREFIX[self.kind].format(**facts) + " " + self.summary.format(**facts)


_BATCH = (
    "Takes 1-100 items; a malformed batch (unknown field, wrong type, qty not a positive integer, "
    "empty or over 100 items) is refused whole. Otherwise each item is checked on its own: valid "
    "items take effect, and the result lists accepted and rejected items, each rejection with its reason."
)

TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "place_order",
        "remote",
        "Buy stock for the warehouse: items [{{sku_id, qty, supplier_id?}}]. The cost (qty x unit_cost) "
        "is paid from cash immediately; delivery to the warehouse is promised {lead_days} days later and "
        "may come a little earlier or later. supplier_id defaults to '{supplier}'{supplier_others}. " + _BATCH,
        s.PlaceOrderArgs,
        h.place_order,
        r.PlaceOrderResult,
    ),
    ToolDef(
        "adjust_price",
        "remote",
        "Set the price of a product at one machine: items [{{device_id, sku_id, price}}], price in "
        "{currency} within {band_lo}-{band_hi} x the product's reference price (inclusive). The product "
        "does not have to be on that machine yet. " + _BATCH,
        s.AdjustPriceArgs,
        h.adjust_price,
        r.AdjustPriceResult,
    ),
    ToolDef(
        "discard",
        "remote",
        "Destroy warehouse units: items [{{sku_id, qty}}]; the units expiring first go first. Unexpired "
        "units discarded are a loss at cost; expired ones are already worth nothing. " + _BATCH,
        s.DiscardArgs,
        h.discard,
        r.DiscardResult,
    ),
    ToolDef(
        "end_day",
        "remote",
        "Close today's action window: customers buy from the shelves at the prices set, sales, fines and "
        "visit fees are settled, and the next day starts (deliveries, rent, fee). Returns the settled day "
        "and the next day's report. After the last day the episode is over.",
        s.NoArgs,
        h.end_day,
        r.EndDayResult,
    ),
    ToolDef(
        "get_catalog",
        "remote",
        "Search the product catalog: id, name, category, subcategory, reference price, unit cost, reference "
        "margin, shelf life, and units in the warehouse and in transit. Filters: query (text in name or id), "
        "category_l1, category_l2, price_min/price_max (reference price), in_warehouse_only. sort_by: "
        "catalog (default), price_asc, price_desc, margin. Pages of 20 rows by default "
        "(page_size at most 50).",
        s.GetCatalogArgs,
        h.get_catalog,
        r.GetCatalogResult,
    ),
    ToolDef(
        "get_categories",
        "remote",
        "List the subcategories with their number of products, reference price range and median "
        "reference margin, for all categories or one category_l1.",
        s.GetCategoriesArgs,
        h.get_categories,
        r.GetCategoriesResult,
    ),
    ToolDef(
        "get_warehouse",
        "remote",
        "Warehouse stock by product: units, expired units, units expiring within 7 days, the next expiry "
        "day, unit cost and value at cost, with totals and today's rent. Pages of 20 rows by default "
        "(page_size at most 50).",
        s.GetWarehouseArgs,
        h.get_warehouse,
        r.GetWarehouseResult,
    ),
    ToolDef(
        "get_device_detail",
        "remote",
        "One machine in detail: every product on its shelf (units, expired, expiring within 7 days, next "
        "expiry day, price, reference price) and sales per product and per day over window_days "
        "(1, 3, 7 or 30; default 30), plus prices set for products it does not hold.",
        s.GetDeviceDetailArgs,
        h.get_device_detail,
        r.GetDeviceDetailResult,
    ),
    ToolDef(
        "get_sku_across_devices",
        "remote",
        "One product at every machine: site type, units on the shelf, expiry, price and sales over "
        "window_days (1, 3, 7 or 30; default 30), with its warehouse and in-transit units and price band.",
        s.GetSkuAcrossDevicesArgs,
        h.get_sku_across_devices,
        r.GetSkuAcrossDevicesResult,
    ),
    ToolDef(
        "get_sales_history",
        "remote",
        "Network results per settled day over window_days (1, 3, 7 or 30; default 30): units, revenue, "
        "gross profit, rent, labor (visit fees), daily fee, fines, write-offs, net, visits and net assets, "
        "with totals and the 20 best-selling products (by units) of the window.",
        s.GetSalesHistoryArgs,
        h.get_sales_history,
        r.GetSalesHistoryResult,
    ),
    ToolDef(
        "query_sql",
        "remote",
        "Run one read-only SQLite SELECT over the operating records and get at most 500 rows; a query "
        "running over 2 s is stopped. Writes, PRAGMA, ATTACH and extensions are refused.\n" + "{sql_schema}",
        s.QuerySqlArgs,
        h.query_sql,
        r.QuerySqlResult,
    ),
    ToolDef(
        "get_calendar",
        "remote",
        "Published public holidays and makeup workdays from tomorrow to days_ahead days ahead (1-400, "
        "default 60), with today's status. Ordinary weekends are not listed.",
        s.GetCalendarArgs,
        h.get_calendar,
        r.GetCalendarResult,
    ),
    ToolDef(
        "get_weather",
        "remote",
        "Weather for today (the weather sales are settled with) and the forecast for the next seven "
        "days: maximum temperature (deg C) and precipitation (mm).",
        s.NoArgs,
        h.get_weather,
        r.GetWeatherResult,
    ),
    ToolDef(
        "restock",
        "physical",
        "Move warehouse units onto a machine: items [{{device_id, sku_id, qty}}]; needs the units in the "
        "warehouse and free capacity on the machine; the units expiring first are taken. " + _BATCH,
        s.RestockArgs,
        h.restock,
        r.RestockResult,
    ),
    ToolDef(
        "reduce",
        "physical",
        "Take qty units of a product off a machine back to the warehouse: items [{{device_id, sku_id, "
        "qty}}]; the units expiring first are taken. " + _BATCH,
        s.ReduceArgs,
        h.reduce,
        r.ReduceResult,
    ),
    ToolDef(
        "delist",
        "physical",
        "Take every unit of a product off a machine back to the warehouse: items [{{device_id, sku_id}}]. " + _BATCH,
        s.DelistArgs,
        h.delist,
        r.DelistResult,
    ),
    ToolDef(
        "read_memory",
        "memory",
        "Read your whole notebook (it is kept in full across days and context compaction).",
        s.NoArgs,
        h.read_memory,
        r.ReadMemoryResult,
    ),
    ToolDef(
        "write_memory",
        "memory",
        "Replace the whole notebook with text (at most {memory_chars} characters; a longer text is "
        "refused and the old notes stay). Sending an empty text erases it.",
        s.WriteMemoryArgs,
        h.write_memory,
        r.WriteMemoryResult,
    ),
)

TOOLS_BY_NAME: dict[str, ToolDef] = {t.name: t for t in TOOLS}


def tool_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """`prompt_facts` plus what only the tool descriptions quote (the SQL schema, in the world's currency)."""
    return {**facts, "sql_schema": schema_text(str(facts["currency"]))}


def schema_words(facts: dict[str, Any]) -> dict[str, str]:
    """What the schemas' placeholders stand for in this world: its money's words and its price band."""
    return {**money_words(str(facts["currency"])), "band_lo": str(facts["band_lo"]), "band_hi": str(facts["band_hi"])}


def tool_listing(facts: dict[str, Any], memory_limit: int) -> list[dict[str, Any]]:
    """Every tool as {name, kind, description, input_schema, output_schema}, in the paper's order.

    The schemas are the world's: their money texts name its currency and minor unit (`schema_words`).
    """
    words = schema_words(facts)
    out = []
    for t in TOOLS:
        schema = fill_money(t.input_schema, words)
        if t.name == "write_memory":
            schema = {
                **schema,
                "properties": {"text": {**schema["properties"]["text"], "maxLength": memory_limit}},
            }
        out.append(
            {
                "name": t.name,
                "kind": t.kind,
                "description": t.description(facts),
                "input_schema": schema,
                "output_schema": fill_money(t.output_schema, words),
            }
        )
    return out
