"""Result models of the 18 tools (pydantic): what each tool returns, field by field, and its output schema.

The handlers build JSON-ready dicts and the agent reads them as JSON text; these models describe
that JSON exactly (unknown keys are errors, optional keys may be absent). A session validates
every successful result into its tool's model (`ToolResult.data`), and the MCP server lists each
model's JSON schema as the tool's `outputSchema` and returns the same JSON as structured content.
The daily observation (`Observation`) is part of `end_day`'s result; the results of the six
mutation tools are in `autovend.tools.batch_results` (and importable from here).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from autovend.tools.batch_results import AdjustPriceResult as AdjustPriceResult  # the batch results, re-exported
from autovend.tools.batch_results import Date, Day
from autovend.tools.batch_results import DelistResult as DelistResult
from autovend.tools.batch_results import DiscardResult as DiscardResult
from autovend.tools.batch_results import PlaceOrderResult as PlaceOrderResult
from autovend.tools.batch_results import ReduceResult as ReduceResult
from autovend.tools.batch_results import RestockResult as RestockResult
from autovend.tools.tables import (
    CATALOG,
    CATEGORIES,
    WAREHOUSE,
    AcrossTable,
    CellValue,
    ColumnAccess,
    DeviceDailyTable,
    DeviceProductsTable,
    DevicesTable,
    HistoryTable,
    Money,
    OtherPricesTable,
    PnlTable,
    ResultModel,
    TopProductsTable,
    columns_type,
    row_type,
)

Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WindowDays = Literal[1, 3, 7, 30]

CatalogColumns = columns_type(CATALOG)
CatalogRow = row_type(CATALOG)
WarehouseColumns = columns_type(WAREHOUSE)
WarehouseRow = row_type(WAREHOUSE)
CategoriesColumns = columns_type(CATEGORIES)
CategoriesRow = row_type(CATEGORIES)


# ------------------------------------------------------------------------------------------ observation


class BalanceBlock(ResultModel):
    """Cash and the cost value of the unexpired units by place; net assets = cash + inventory at cost."""

    cash: Money
    shelf: Money
    warehouse: Money
    in_transit: Money
    inventory_at_cost: Money
    net_assets: Money


class WarehouseTotals(ResultModel):
    """Warehouse totals: units (expired included), products, value at cost, today's rent, expiry."""

    units: int
    n_skus: int
    value_at_cost: Money
    rent_per_day: Money
    expired_units: int
    expiring_7d_units: int


class ExpectedArrival(ResultModel):
    """Orders expected on one promised day."""

    day: Day
    date: Date
    orders: int
    units: int


class DelayedOrder(ResultModel):
    """An order past its promised day and not yet delivered."""

    order_id: int
    sku_id: str
    qty: int
    promised_day: Day
    days_late: int


class InTransitBlock(ResultModel):
    """Orders not yet delivered: totals, expected arrivals by promised day, delayed orders."""

    orders: int
    units: int
    value_at_cost: Money
    arrivals: list[ExpectedArrival]
    delayed: list[DelayedOrder]


class TodayStatus(ResultModel):
    """Whether today is a working day, and its holiday."""

    is_workday: bool
    holiday_name: str | None


class UpcomingDay(ResultModel):
    """A published holiday or makeup workday."""

    date: Date
    weekday: Weekday
    kind: Literal["holiday", "makeup_workday"]
    name: str | None
    is_workday: bool


class CalendarBlock(ResultModel):
    """Today's status and the special days of the next 14 days."""

    today: TodayStatus
    next_14d: list[UpcomingDay]


class Observation(ResultModel):
    """The daily observation (the paper's Appendix A.2): balance, P&L, machines, warehouse, orders, calendar."""

    balance: BalanceBlock
    pnl: PnlTable
    devices: DevicesTable
    warehouse: WarehouseTotals
    in_transit: InTransitBlock
    calendar: CalendarBlock
    notices: list[str] | None = Field(
        default=None, description="What the world announces today (a scenario's outage, closing, breakdown)."
    )


# ------------------------------------------------------------------------------------------ end_day


class SettledDay(ResultModel):
    """The settlement of one day (labor = site-visit fees; net = the day's change in net assets)."""

    day: Day
    date: Date
    units_sold: int
    expired_units_sold: int
    revenue: Money
    gross_profit: Money
    rent: Money
    labor: Money
    daily_fee: Money
    expired_fine: Money
    expiry_writeoff: Money
    discard_writeoff: Money
    net: Money
    visited: list[str]
    cash: Money
    net_assets: Money


class FinalBalance(ResultModel):
    """The balance at the end of the episode."""

    net_assets: Money
    cash: Money


class EndDayResult(ResultModel):
    """`settled` (sales, costs, write-offs, net, cash, net assets), `done`, `next_day` and its `observation`."""

    settled: SettledDay
    done: bool
    final: FinalBalance | None = Field(default=None, description="After the last day: the final balance.")
    message: str | None = Field(default=None, description="After the last day: that the episode is over.")
    next_day: str | None = Field(default=None, description="The next day's date line, e.g. 'Day 2 of 180 — ...'.")
    observation: Observation | None = Field(default=None, description="The next day's observation.")


# ------------------------------------------------------------------------------------------ queries


class _Paged(ResultModel):
    page: int
    page_size: int
    pages: int
    total: int = Field(description="Rows matching, over all pages.")


class SupplierInfo(ResultModel):
    """A supplier: its price as a multiple of the unit cost, its promise, and an outage holding its deliveries."""

    supplier_id: str
    price_factor: float
    promised_days: int
    note: str
    deliveries_held_until_day: int | None


class GetCatalogResult(ColumnAccess, _Paged):
    """Products: category, reference price, unit cost, reference margin, shelf life, warehouse and in-transit units."""

    sort_by: Literal["catalog", "price_asc", "price_desc", "margin"]
    columns: CatalogColumns  # type: ignore[valid-type]
    rows: list[CatalogRow]  # type: ignore[valid-type]
    note: str | None = Field(default=None, description="Present when a filter or the page matched nothing.")
    suppliers: list[SupplierInfo] | None = Field(
        default=None, description="Present when the world has more than one supplier: each with its terms."
    )


class GetCategoriesResult(ColumnAccess, ResultModel):
    """Per subcategory: products, reference price range, median reference margin."""

    n_skus: int
    columns: CategoriesColumns  # type: ignore[valid-type]
    rows: list[CategoriesRow]  # type: ignore[valid-type]


class GetWarehouseResult(ColumnAccess, ResultModel):
    """Per product: units, expired, expiring within 7 days, next expiry day, unit cost, value at cost; totals."""

    day: Day
    totals: WarehouseTotals
    page: int
    page_size: int
    pages: int
    total: int = Field(description="Products in the warehouse, over all pages.")
    columns: WarehouseColumns  # type: ignore[valid-type]
    rows: list[WarehouseRow]  # type: ignore[valid-type]
    note: str | None = Field(default=None, description="Present when the page is past the last page.")


class GetDeviceDetailResult(ResultModel):
    """The machine's products (units, expiry, price, sales), sales per day, other prices set, last visit."""

    device_id: str
    location: str
    site_type: str
    day: Day
    capacity: int
    units_on_shelf: int
    free_capacity: int
    n_skus: int
    expired_units: int
    expiring_7d_units: int
    days_since_visit: int | None = Field(description="0 = visited today; null = never visited.")
    visited_today: bool
    window_days: WindowDays
    days_covered: int = Field(description="Settled days in the window (fewer early in the run).")
    units_sold: int
    revenue: Money
    gross_profit: Money
    products: DeviceProductsTable
    daily: DeviceDailyTable
    other_prices: OtherPricesTable


class GetSkuAcrossDevicesResult(ResultModel):
    """The product at every machine (site type, units, expiry, price, sales), its stock and price band."""

    sku_id: str
    name: str
    category_l1: str
    category_l2: str
    ref_price: Money
    unit_cost: Money
    ref_margin: float
    shelf_life_days: int
    price_band: tuple[Money, Money] = Field(description="Lowest and highest allowed price.")
    warehouse_units: int
    warehouse_expired_units: int
    in_transit_units: int
    day: Day
    window_days: WindowDays
    days_covered: int
    units_sold: int
    revenue: Money
    devices: AcrossTable


class HistoryTotals(ResultModel):
    """Sums over the window."""

    units_sold: int
    revenue: Money
    gross_profit: Money
    rent: Money
    labor: Money
    daily_fee: Money
    expired_fine: Money
    write_offs: Money
    net: Money
    visits: int


class GetSalesHistoryResult(ResultModel):
    """Per settled day: units, revenue, costs, write-offs, net, visits, net assets; totals; the top products."""

    day: Day
    window_days: WindowDays
    days_covered: int
    totals: HistoryTotals
    daily: HistoryTable
    top_products: TopProductsTable


class QuerySqlResult(ColumnAccess, ResultModel):
    """`columns`, `rows` (at most 500; long text cells cut), `row_count`, `truncated`, `elapsed_ms`."""

    columns: list[str]
    rows: list[list[CellValue]]
    row_count: int
    truncated: bool = Field(description="True when the query had more rows than were returned.")
    elapsed_ms: float
    note: str | None = None
    cells_cut: int | None = Field(default=None, description="Text cells cut to 2,000 characters, when any.")


class CalendarToday(ResultModel):
    """Today's date and working status."""

    day: Day
    date: Date
    weekday: Weekday
    is_workday: bool
    holiday_name: str | None


class SpecialDay(ResultModel):
    """A published public holiday or makeup workday."""

    day: Day
    date: Date
    weekday: Weekday
    kind: Literal["holiday", "makeup_workday"]
    name: str | None
    is_workday: bool


class GetCalendarResult(ResultModel):
    """Today's status and the special days (holidays, makeup workdays) ahead."""

    today: CalendarToday
    days_ahead: int
    until: Date
    special_days: list[SpecialDay]


class WeatherDay(ResultModel):
    """The weather of one day: settlement weather (what sales are settled with) or a forecast."""

    day: Day
    date: Date
    weekday: Weekday
    lead: int = Field(description="Days after today (0 = today).")
    t_max_c: float
    precip_mm: float
    basis: Literal["settlement", "forecast"]


class GetWeatherResult(ResultModel):
    """Today and the next seven days: maximum temperature, precipitation, basis (settlement or forecast)."""

    day: Day
    days: list[WeatherDay]


class ReadMemoryResult(ResultModel):
    """The whole notebook, its length and the limit."""

    text: str
    chars: int
    limit: int


class WriteMemoryResult(ResultModel):
    """Whether the notebook was saved (always, when not refused), its length, the limit, whether it was cleared."""

    saved: bool
    chars: int
    limit: int
    cleared: bool
