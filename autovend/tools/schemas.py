"""Argument models of the 18 tools (pydantic), their JSON schemas, and readable messages for malformed input.

Every model forbids unknown keys and coerces nothing: a quantity is a JSON integer, a price a JSON
number, an id a string. A batch holds 1-100 items. Optional parameters may be omitted or sent as
null, which means their default. What a model accepts is only the *structure*: whether an id
exists, a price is in band or stock suffices is checked item by item by the simulator.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

MAX_BATCH_ITEMS = 100  # items per mutation call
WINDOWS = (1, 3, 7, 30)  # allowed query windows, days
DEFAULT_WINDOW = 30
DEFAULT_PAGE_SIZE = 20  # rows per page of a paginated query
MAX_PAGE_SIZE = 50
CALENDAR_DAYS_DEFAULT = 60
CALENDAR_DAYS_MAX = 400
SORT_KEYS = ("catalog", "price_asc", "price_desc", "margin")
MAX_ERRORS_SHOWN = 8  # problems listed in one rejection message
QUOTE_CHARS = 60  # characters of a caller's value quoted in a message (see `quote`)


def _window_int(value: Any) -> Any:
    """Refuse anything but a JSON integer for a window (true would read as 1, 7.0 as 7)."""
    if value is not None and type(value) is not int:
        raise ValueError(f"must be one of 1, 3, 7 or 30, got {quote(value)}")
    return value


Window = Annotated[
    Literal[1, 3, 7, 30] | None,
    BeforeValidator(_window_int),
    Field(default=None, description="Days of history to cover: 1, 3, 7 or 30 (default 30)."),
]
Page = Annotated[int | None, Field(default=None, ge=1, description="Page number, from 1 (default 1).")]
PageSize = Annotated[
    int | None,
    Field(default=None, ge=1, le=MAX_PAGE_SIZE, description="Rows per page, 1-50 (default 20)."),
]
SkuId = Annotated[str, Field(min_length=1, description="Product id from the catalog, e.g. 'SKU0001'.")]
DeviceId = Annotated[str, Field(min_length=1, description="Machine id, e.g. 'CN_WORKSITE_01'.")]
Qty = Annotated[int, Field(ge=1, description="Units, a positive integer.")]


class _Args(BaseModel):
    """Base of every argument model: unknown keys are errors, nothing is coerced (validator built on first use)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class _Item(_Args):
    """Base of batch items."""


class OrderItem(_Item):
    """One order line."""

    sku_id: SkuId
    qty: Qty
    supplier_id: str | None = Field(default=None, description="Supplier; omit for 'default' (the only one).")


class PriceItem(_Item):
    """One price setting."""

    device_id: DeviceId
    sku_id: SkuId
    price: float = Field(
        allow_inf_nan=False, description="New price in {currency}, {band_lo}-{band_hi} x the reference price."
    )


class SkuQtyItem(_Item):
    """Units of one product in the warehouse."""

    sku_id: SkuId
    qty: Qty


class ShelfQtyItem(_Item):
    """Units of one product at one machine."""

    device_id: DeviceId
    sku_id: SkuId
    qty: Qty


class ShelfItem(_Item):
    """One product at one machine."""

    device_id: DeviceId
    sku_id: SkuId


def _batch() -> Any:
    """The `items` field of a mutation tool: 1-100 items."""
    return Field(
        min_length=1,
        max_length=MAX_BATCH_ITEMS,
        description=f"Batch of 1-{MAX_BATCH_ITEMS} items; each is checked and carried out on its own.",
    )


class PlaceOrderArgs(_Args):
    """place_order(items[{sku_id, qty, supplier_id?}])."""

    items: list[OrderItem] = _batch()


class AdjustPriceArgs(_Args):
    """adjust_price(items[{device_id, sku_id, price}])."""

    items: list[PriceItem] = _batch()


class DiscardArgs(_Args):
    """discard(items[{sku_id, qty}])."""

    items: list[SkuQtyItem] = _batch()


class RestockArgs(_Args):
    """restock(items[{device_id, sku_id, qty}])."""

    items: list[ShelfQtyItem] = _batch()


class ReduceArgs(_Args):
    """reduce(items[{device_id, sku_id, qty}])."""

    items: list[ShelfQtyItem] = _batch()


class DelistArgs(_Args):
    """delist(items[{device_id, sku_id}])."""

    items: list[ShelfItem] = _batch()


class NoArgs(_Args):
    """A tool without parameters (end_day, get_weather, read_memory)."""


class GetCatalogArgs(_Args):
    """get_catalog(query?, category_l1?, category_l2?, price_min?, price_max?, in_warehouse_only?, sort_by?, page?, page_size?)."""  # noqa: E501

    query: str | None = Field(default=None, description="Text to find in the product name or id (any case).")
    category_l1: str | None = Field(default=None, description="Category, e.g. 'drinks'.")
    category_l2: str | None = Field(default=None, description="Subcategory, e.g. 'tea'.")
    price_min: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="Lowest reference price ({currency})."
    )
    price_max: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="Highest reference price ({currency})."
    )
    in_warehouse_only: bool | None = Field(
        default=None, description="Only products with units in the warehouse (default false)."
    )
    sort_by: Literal["catalog", "price_asc", "price_desc", "margin"] | None = Field(
        default=None,
        description="Order: catalog (default), price_asc, price_desc (reference price) or margin "
        "(reference margin, highest first).",
    )
    page: Page
    page_size: PageSize


class GetCategoriesArgs(_Args):
    """get_categories(category_l1?)."""

    category_l1: str | None = Field(default=None, description="Only this category, e.g. 'snacks'.")


class GetWarehouseArgs(_Args):
    """get_warehouse(page?, page_size?)."""

    page: Page
    page_size: PageSize


class GetDeviceDetailArgs(_Args):
    """get_device_detail(device_id, window_days?)."""

    device_id: DeviceId
    window_days: Window


class GetSkuAcrossDevicesArgs(_Args):
    """get_sku_across_devices(sku_id, window_days?)."""

    sku_id: SkuId
    window_days: Window


class GetSalesHistoryArgs(_Args):
    """get_sales_history(window_days?)."""

    window_days: Window


class QuerySqlArgs(_Args):
    """query_sql(sql)."""

    sql: str = Field(min_length=1, description="One read-only SQLite SELECT statement.")


class GetCalendarArgs(_Args):
    """get_calendar(days_ahead?)."""

    days_ahead: int | None = Field(
        default=None,
        ge=1,
        le=CALENDAR_DAYS_MAX,
        description=f"Days after today to cover, 1-{CALENDAR_DAYS_MAX} (default {CALENDAR_DAYS_DEFAULT}).",
    )


class WriteMemoryArgs(_Args):
    """write_memory(text)."""

    text: str = Field(description="The whole new notebook; an empty string clears it.")


# ---------------------------------------------------------------------------------------------- JSON schema


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema for tool listings: `$defs` inlined, titles dropped, defaults from descriptions.

    Optional parameters appear with their real type (the null alternative pydantic adds is
    accepted but not advertised), so a schema reads like the paper's parameter list.
    """
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    raw.pop("description", None)  # the tool's own description says what it does
    schema: dict[str, Any] = _clean(raw, defs)
    return schema


def output_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A result model's JSON schema for tool listings: `$defs` inlined and titles dropped.

    Unlike `json_schema`, a null alternative stays: a result value that can be null says so. The
    model's docstring stays as the schema's description.
    """
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    schema: dict[str, Any] = _clean(raw, defs, keep_null=True)
    return schema


def _clean(node: Any, defs: dict[str, Any], keep_null: bool = False) -> Any:
    if isinstance(node, list):
        return [_clean(x, defs, keep_null) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _clean({**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}, defs, keep_null)
    out: dict[str, Any] = {}
    any_of = node.get("anyOf")
    if any_of is not None and not keep_null:
        kept = [x for x in any_of if x != {"type": "null"}]
        if len(kept) == 1:
            merged = {**kept[0], **{k: v for k, v in node.items() if k != "anyOf"}}
            return _clean(merged, defs)
    for key, value in node.items():
        if key == "title" or (key == "default" and value is None):
            continue
        out[key] = _clean(value, defs, keep_null) if key != "properties" else _clean_props(value, defs, keep_null)
    return out


def _clean_props(props: dict[str, Any], defs: dict[str, Any], keep_null: bool) -> dict[str, Any]:
    return {name: _clean(schema, defs, keep_null) for name, schema in props.items()}


# ---------------------------------------------------------------------------------------------- messages


def _where(loc: tuple[Any, ...]) -> str:
    """('items', 3, 'qty') -> 'items[3].qty'."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = clip(str(part))  # an unknown key is the caller's text
            text += f".{name}" if text else name
    return text or "arguments"


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` when it is short, else its first `limit` characters, '...' and its length in characters."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """A value the caller sent, for a message: repr-like (true/false/null as in JSON), at most about `limit` long.

    A long string keeps its first `limit` characters and says how long it was, so an error never
    repeats a huge argument: 'SKU0001xxxx...' (1,000,000 characters).
    """
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        head = repr(value[:limit])
        return f"{head[:-1]}...{head[-1]} ({len(value):,} characters)"
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value):,} items)" if isinstance(value, list | tuple | dict) else ""
    return f"{text[:limit]}...{size}"


def _fields_of(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The allowed field names at `loc` (the parameters, or the item fields of a batch)."""
    if len(loc) >= 3 and loc[0] == "items" and isinstance(loc[1], int):
        ann = model.model_fields["items"].annotation
        item_model = getattr(ann, "__args__", (None,))[0]
        if isinstance(item_model, type) and issubclass(item_model, BaseModel):
            return list(item_model.model_fields)
    return list(model.model_fields)


def describe_error(model: type[BaseModel], err: dict[str, Any]) -> str:
    """One pydantic error as a sentence naming the field, what is wrong and what is allowed."""
    loc = tuple(err.get("loc", ()))
    # pydantic appends the failing union member or literal to the location; drop those parts
    loc = tuple(p for p in loc if not (isinstance(p, str) and ("[" in p or p in ("function-before",))))
    where = _where(loc)
    kind = err.get("type", "")
    given = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        allowed = _fields_of(model, loc)
        if not allowed:
            return f"{where} is not a parameter: this tool takes no arguments (send {{}})"
        return f"{where} is not a known field (allowed: {', '.join(allowed)})"
    if kind in ("int_type", "int_from_float", "int_parsing"):
        return f"{where} must be a whole number (JSON integer), got {quote(given)}"
    if kind in ("float_type", "float_parsing"):
        return f"{where} must be a number, got {quote(given)}"
    if kind == "finite_number":
        return f"{where} must be a finite number, got {quote(given)}"
    if kind in ("string_type",):
        return f"{where} must be a string, got {quote(given)}"
    if kind == "bool_type":
        return f"{where} must be true or false, got {quote(given)}"
    if kind == "string_too_short":
        return f"{where} must not be empty"
    if kind == "greater_than_equal":
        return f"{where} must be at least {ctx.get('ge')}, got {quote(given)}"
    if kind == "less_than_equal":
        return f"{where} must be at most {ctx.get('le')}, got {quote(given)}"
    if kind == "too_short":
        return f"{where} needs at least {ctx.get('min_length', 1)} item"
    if kind == "too_long":
        n = len(given) if isinstance(given, list) else "more"
        return f"{where} holds {n} items, at most {ctx.get('max_length')} are allowed: split the batch"
    if kind == "list_type":
        return f"{where} must be a list of objects, got {quote(given)}"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        fields = ", ".join(_fields_of(model, (*loc, "x")))
        return f"{where} must be an object with the fields {fields}, got {quote(given)}"
    if kind == "literal_error":
        return f"{where} must be one of {ctx.get('expected')}, got {quote(given)}"
    if kind == "value_error":
        return f"{where} {str(err.get('msg', '')).removeprefix('Value error, ')}"
    return f"{where}: {err.get('msg', 'invalid')} (got {quote(given)})"


def validation_message(tool: str, model: type[BaseModel], exc: ValidationError) -> str:
    """A rejection message for malformed arguments: every problem (up to a few), and that nothing ran."""
    seen: list[str] = []
    for err in exc.errors():
        text = describe_error(model, dict(err))
        if text not in seen:
            seen.append(text)
    shown = seen[:MAX_ERRORS_SHOWN]
    more = f"; and {len(seen) - len(shown)} more" if len(seen) > len(shown) else ""
    batch = "items" in model.model_fields
    what = "the whole batch was rejected and nothing was carried out" if batch else "nothing was done"
    return f"{tool}: malformed arguments, {what}: " + "; ".join(shown) + more + ". Fix them and call again."
