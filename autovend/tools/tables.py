"""Typed tables of the tool results: the column names and the type of every cell, in column order.

Results and observations hold tables in the compact form {"columns": [...], "rows": [[...], ...]}
(`views.table`). Here each table is declared once as (column, type) pairs; `columns_type` and
`row_type` turn a declaration into the pydantic types of the two fields (a fixed tuple of column
names, and one fixed-length tuple per row), so the output schema of a tool says what every cell
holds. Column names come from the handlers and the observation where they are defined.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import GenericAlias
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from autovend.tools.handlers import (
    ACROSS_COLUMNS,
    CATALOG_COLUMNS,
    DEVICE_PRODUCT_COLUMNS,
    HISTORY_COLUMNS,
    TOP_COLUMNS,
    WAREHOUSE_COLUMNS,
)
from autovend.tools.observation import DEVICE_COLUMNS, PNL_COLUMNS, PNL_WINDOWS

MONEY_NOTE = "{currency}, rounded to the {minor_unit}."  # filled with the world's by `registry.tool_listing`
Money = Annotated[float, Field(description=MONEY_NOTE)]
Spec = tuple[tuple[str, Any], ...]


def spec(names: Sequence[str], types: Sequence[Any]) -> Spec:
    """Pair column names with cell types (as many of each)."""
    return tuple(zip(names, types, strict=True))


def columns_type(table: Spec) -> Any:
    """The type of `columns`: exactly these names, in this order."""
    return GenericAlias(tuple, tuple(Literal[name] for name, _ in table))  # tuple[Literal[name0], ...]


def row_type(table: Spec) -> Any:
    """The type of one row: one cell per column, each of its column's type."""
    return GenericAlias(tuple, tuple(kind for _, kind in table))  # tuple[kind0, kind1, ...]


class ColumnAccess:
    """`column(name)` for a model with `columns` and `rows` fields (a table, or a result that is one).

    It declares no fields itself (pydantic would list them first).
    """

    def column(self, name: str) -> list[Any]:
        """The cells of column `name`, one per row."""
        columns: Sequence[str] = getattr(self, "columns")  # noqa: B009
        rows: Sequence[Sequence[Any]] = getattr(self, "rows")  # noqa: B009
        i = list(columns).index(name)
        return [row[i] for row in rows]


class ResultModel(BaseModel):
    """Base of the result models and tables: unknown keys are errors; results are values.

    Each model's validator is built on its first use (`defer_build`), not when the module is imported.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Table(ColumnAccess, ResultModel):
    """A table in compact form: `columns` names the cells of every row in `rows`."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def table_model(name: str, doc: str, table: Spec) -> type[Table]:
    """A `Table` whose columns and row cells are those of `table`."""
    rows_type: Any = GenericAlias(list, (row_type(table),))  # list[row_type(table)]
    model = create_model(
        name,
        __base__=Table,
        __doc__=doc,
        __module__=__name__,
        columns=(columns_type(table), ...),
        rows=(rows_type, ...),
    )
    return model


Day = int
OptDay = int | None

CATALOG = spec(CATALOG_COLUMNS, (str, str, str, str, Money, Money, float, int, int, int))
WAREHOUSE = spec(WAREHOUSE_COLUMNS, (str, str, int, int, int, OptDay, Money, Money))
CATEGORIES = spec(
    ["category_l1", "category_l2", "n_skus", "ref_price_min", "ref_price_max", "median_ref_margin"],
    (str, str, int, Money, Money, float),
)
DEVICE_PRODUCTS = spec(DEVICE_PRODUCT_COLUMNS, (str, str, str, int, int, int, OptDay, Money, Money, int, Money, float))
DEVICE_DAILY = spec(["day", "units_sold", "revenue"], (Day, int, Money))
OTHER_PRICES = spec(["sku_id", "price", "ref_price"], (str, Money, Money))
ACROSS = spec(ACROSS_COLUMNS, (str, str, str, int, int, int, Money, int, Money, float))
HISTORY = spec(
    HISTORY_COLUMNS,
    (Day, str, str, int, Money, Money, Money, Money, Money, Money, Money, Money, int, Money),
)
TOP_PRODUCTS = spec(TOP_COLUMNS, (str, str, int, Money, Money, int))
PNL = spec(PNL_COLUMNS, (Literal[tuple(w for w, _ in PNL_WINDOWS)], int, int, *([Money] * 7)))
DEVICES = spec(DEVICE_COLUMNS, (str, str, int, int, int, int, int, float, int, int, OptDay))

if TYPE_CHECKING:  # to the type checker every table model is a Table; its exact cells are built at run time
    CategoriesTable = Table
    DeviceProductsTable = Table
    DeviceDailyTable = Table
    OtherPricesTable = Table
    AcrossTable = Table
    HistoryTable = Table
    TopProductsTable = Table
    PnlTable = Table
    DevicesTable = Table
else:
    CategoriesTable = table_model("CategoriesTable", "One row per subcategory.", CATEGORIES)
    DeviceProductsTable = table_model(
        "DeviceProductsTable", "The products on the machine's shelf or sold there in the window.", DEVICE_PRODUCTS
    )
    DeviceDailyTable = table_model(
        "DeviceDailyTable", "The machine's sales per settled day of the window.", DEVICE_DAILY
    )
    OtherPricesTable = table_model(
        "OtherPricesTable", "Prices set at the machine for products it neither holds nor sold.", OTHER_PRICES
    )
    AcrossTable = table_model("AcrossTable", "The product at every machine, in world order.", ACROSS)
    HistoryTable = table_model("HistoryTable", "One row per settled day of the window.", HISTORY)
    TopProductsTable = table_model(
        "TopProductsTable", "The best-selling products of the window (units, then revenue).", TOP_PRODUCTS
    )
    PnlTable = table_model("PnlTable", "Sums over the last 1, 7 and 30 settled days.", PNL)
    DevicesTable = table_model("DevicesTable", "One row per machine, in world order.", DEVICES)

CellValue = int | float | str | None
SqlColumns = list[str]
SqlRow = list[CellValue]
