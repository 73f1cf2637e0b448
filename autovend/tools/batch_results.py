"""Result models of the six mutation tools (place_order, adjust_price, discard, restock, reduce, delist).

A batch result lists the accepted items, each with what was done, and the rejected ones, each with
a code and a message; the item is echoed as sent (long strings cut). See `autovend.tools.results`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from autovend.sim.results import REJECTION_CODES
from autovend.tools.schemas import OrderItem, PriceItem, ShelfItem, ShelfQtyItem, SkuQtyItem
from autovend.tools.tables import Money, ResultModel

Day = Annotated[int, Field(description="Simulation day (day 1 = the first day of the run).")]
Date = Annotated[str, Field(description="Calendar date, YYYY-MM-DD.")]
Index = Annotated[int, Field(ge=0, description="Position of the item in the batch, from 0.")]
if TYPE_CHECKING:  # the codes are the simulator's REJECTION_CODES, a Literal built at run time
    RejectionCode = str
else:
    RejectionCode = Literal[tuple(REJECTION_CODES)]
ItemT = TypeVar("ItemT", bound=BaseModel)


class Rejected(ResultModel, Generic[ItemT]):
    """An item that changed nothing: its position, the item as sent, a code and what to do instead."""

    index: Index
    item: ItemT
    code: RejectionCode = Field(description="Why the item was refused (a fixed set of codes).")
    message: str


class _Batch(ResultModel):
    action: str  # each tool's name (a constant in its result model)
    day: Day
    n_accepted: int
    n_rejected: int


class OrderAccepted(ResultModel):
    """An order line placed: its id, cost and promised delivery."""

    index: Index
    item: OrderItem
    order_id: int
    sku_id: str
    qty: int
    unit_cost: Money
    total_cost: Money
    eta_day: Day = Field(description="The promised delivery day (the actual day may differ a little).")
    eta_date: Date
    supplier_id: str | None = Field(default=None, description="Present for an order from another supplier.")
    unit_price: Money | None = Field(default=None, description="What that supplier charged per unit.")
    premium: Money | None = Field(default=None, description="What it charged above the unit cost: a cost.")


class PlaceOrderResult(_Batch):
    """Accepted orders (order id, cost, promised day), rejections, the total cost and the cash after."""

    action: Literal["place_order"]
    accepted: list[OrderAccepted]
    rejected: list[Rejected[OrderItem]]
    total_cost: Money
    cash: Money


class PriceAccepted(ResultModel):
    """A price set."""

    index: Index
    item: PriceItem
    device_id: str
    sku_id: str
    old_price: Money
    new_price: Money
    changed: bool


class AdjustPriceResult(_Batch):
    """Old and new price per item (the product need not be stocked), and rejections."""

    action: Literal["adjust_price"]
    accepted: list[PriceAccepted]
    rejected: list[Rejected[PriceItem]]


class DiscardAccepted(ResultModel):
    """Warehouse units destroyed."""

    index: Index
    item: SkuQtyItem
    sku_id: str
    qty: int
    expired_qty: int = Field(description="Units among them that had already expired.")
    cost_written_off: Money = Field(description="Cost of the unexpired units destroyed.")


class DiscardResult(_Batch):
    """Units destroyed (earliest expiry first), expired among them, cost written off; rejections."""

    action: Literal["discard"]
    accepted: list[DiscardAccepted]
    rejected: list[Rejected[SkuQtyItem]]


class ShelfAccepted(ResultModel):
    """Units moved between the warehouse and a machine's shelf."""

    index: Index
    item: ShelfQtyItem
    device_id: str
    sku_id: str
    qty: int
    expired_qty: int = Field(description="Units among those moved that had already expired.")
    shelf_units: int = Field(description="Units of the product on the machine after the move.")


class DelistAccepted(ShelfAccepted):
    """Every unit of a product taken off a machine."""

    item: ShelfItem  # type: ignore[assignment]


class _Physical(_Batch):
    new_visits: list[str] = Field(description="Machines this call touched first today (each pays one visit fee).")
    visits_today: list[str] = Field(description="Every machine visited today so far.")
    visit_fees_today: Money = Field(description="Visit fees for today so far, charged when the day is closed.")


class RestockResult(_Physical):
    """Units moved from the warehouse (earliest expiry first), expired among them, units now on the shelf; visits."""

    action: Literal["restock"]
    accepted: list[ShelfAccepted]
    rejected: list[Rejected[ShelfQtyItem]]


class ReduceResult(_Physical):
    """Units moved back to the warehouse (earliest expiry first); visits."""

    action: Literal["reduce"]
    accepted: list[ShelfAccepted]
    rejected: list[Rejected[ShelfQtyItem]]


class DelistResult(_Physical):
    """All units of the product moved back to the warehouse; visits."""

    action: Literal["delist"]
    accepted: list[DelistAccepted]
    rejected: list[Rejected[ShelfItem]]
