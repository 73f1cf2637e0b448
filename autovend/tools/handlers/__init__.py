"""The 18 tool handlers: `handler(ctx, args, raw) -> JSON-ready dict`, or `ToolError` for a bad call.

`args` is the validated argument model; `raw` the arguments as sent (batches are passed to the
simulator as sent, so results echo the items). Money is CNY rounded to the fen; tables use the
{"columns": [...], "rows": [[...]]} form of the observation. The handlers that act live in `actions`,
those that read in `queries`; this package names them all for the registry.
"""

from autovend.tools.handlers.actions import (
    adjust_price,
    delist,
    discard,
    end_day,
    place_order,
    read_memory,
    reduce,
    restock,
    settled_summary,
    write_memory,
)
from autovend.tools.handlers.queries import (
    ACROSS_COLUMNS,
    CATALOG_COLUMNS,
    DEVICE_PRODUCT_COLUMNS,
    HISTORY_COLUMNS,
    TOP_COLUMNS,
    TOP_PRODUCTS,
    WAREHOUSE_COLUMNS,
    get_calendar,
    get_catalog,
    get_categories,
    get_device_detail,
    get_sales_history,
    get_sku_across_devices,
    get_warehouse,
    get_weather,
    query_sql,
)

__all__ = [
    "ACROSS_COLUMNS",
    "CATALOG_COLUMNS",
    "DEVICE_PRODUCT_COLUMNS",
    "HISTORY_COLUMNS",
    "TOP_COLUMNS",
    "TOP_PRODUCTS",
    "WAREHOUSE_COLUMNS",
    "adjust_price",
    "delist",
    "discard",
    "end_day",
    "get_calendar",
    "get_catalog",
    "get_categories",
    "get_device_detail",
    "get_sales_history",
    "get_sku_across_devices",
    "get_warehouse",
    "get_weather",
    "place_order",
    "query_sql",
    "read_memory",
    "reduce",
    "restock",
    "settled_summary",
    "write_memory",
]
