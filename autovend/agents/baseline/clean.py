"""Step 2, clean: discard expired and soon-expiring warehouse units, and dead stock that is not worth its rent.

Restocks take the earliest-expiring units first, and units expiring within the tools' "expiring
soon" window could not be sold before a weekly visit, so the warehouse never holds such units
(units taken off shelves that would are discarded at once). Stock of products no machine has
carried for `dead_stock_days` (visits meanwhile put it on shelves with room to spare) is discarded
when it would expire before the run ends or its rent to the end exceeds its cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from autovend.agents.baseline.calls import batched
from autovend.agents.baseline.observe import Warehouse
from autovend.agents.baseline.state import BoolArray, FloatArray, IntArray, Memory

if TYPE_CHECKING:
    from autovend.session import ToolSession


def discard_quantities(
    wh: Warehouse,
    dead: BoolArray,
    d: int,
    horizon: int,
    rent: float,
    cost: FloatArray,
) -> IntArray:
    """Units of each product to discard today.

    That is the expired and soon-expiring units, and all units of `dead` stock that expires before the
    run ends or whose rent to the end (days d..horizon) exceeds its unit cost.
    """
    qty = wh.expired + wh.expiring
    if dead.any():
        expires_first = (wh.next_expiry > 0) & (wh.next_expiry <= horizon)
        costly = expires_first | (rent * (horizon - d + 1) > cost)
        qty = np.where(dead & costly, wh.units, qty)
    return qty


def clean_warehouse(session: ToolSession, mem: Memory, d: int, wh: Warehouse) -> None:
    """Discard expired and soon-expiring warehouse units, and dead stock not worth its rent; update `wh`."""
    s, st = mem.s, mem.st
    carried = s.active.any(axis=0)
    s.inactive_since[carried] = 0
    s.inactive_since[~carried & (s.inactive_since == 0)] = d
    # dead stock: carried nowhere for `dead_stock_days` (visits put it on shelves meanwhile); holding it
    # longer only adds rent when it expires before the run ends, or when the rent to the end exceeds its cost
    idle = d - s.inactive_since >= mem.cfg.dead_stock_days
    dead = (~carried) & (s.inactive_since > 0) & idle & (wh.good > 0)
    qty = discard_quantities(wh, dead, d, st.horizon, st.rent, st.cost)
    ks = np.flatnonzero(qty > 0)
    if len(ks):
        batched(session, "discard", [{"sku_id": st.sku_ids[k], "qty": int(qty[k])} for k in ks.tolist()])
        wh.units -= qty
        wh.expired[ks] = 0
        wh.expiring[ks] = 0
        wh.good = wh.units.copy()
