"""Step 7, procurement (every day, remote and free): echelon order-up-to per product over the machines that carry it.

Reorder level = the shelves' targets + demand over the planned lead time + z * its sd (z from rent
and spoilage against the margin; none for products still on trial); position = warehouse (usable)
+ in transit + those shelves; below the reorder level, order up to `order_cover_days` of demand
above it, rounded to lots, within the cash floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.calls import batched
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.state import BoolArray, FloatArray, IntArray, Memory
from autovend.agents.baseline.targets import machine_targets, newsvendor_z, unsold_probability

if TYPE_CHECKING:
    from autovend.agents.baseline.estimate import Estimates
    from autovend.session import ToolSession

# ------------------------------------------------------------------------------------------------ pure rules


def round_lots(qty: npt.ArrayLike, lot: int) -> IntArray:
    """Order quantities: below two lots as they are, otherwise rounded up to whole lots."""
    q = np.ceil(np.asarray(qty, dtype=float) - 1e-9).astype(np.int64)
    q = np.maximum(q, 0)
    if lot <= 1:
        return q
    big = q >= 2 * lot
    q[big] = -(-q[big] // lot) * lot
    return q


@dataclass(frozen=True)
class EchelonLevels:
    """Echelon levels of each product (K,) over the machines that carry it."""

    reorder: FloatArray  # order when the position is below this
    up_to: FloatArray  # ... up to this
    priority: FloatArray  # units a day x mean unit margin: the lines kept first when cash is short


def echelon_levels(
    shelf_target: FloatArray,
    mu: FloatArray,
    r: FloatArray,
    margin: FloatArray,
    active: BoolArray,
    on_trial: BoolArray,
    life: IntArray,
    cost: FloatArray,
    rent: float,
    lead_days: int,
    cover_days: float,
    cfg: BaselineConfig,
) -> EchelonLevels:
    """Reorder and order-up-to levels of each product from the (M, K) rates `mu` and `margin` at its machines.

    Reorder level = `shelf_target` + demand over `lead_days` + z * its sd, counting the machines where the
    product is `active` and not `on_trial` (negative binomial with each machine's `r`); z from the mean
    margin against rent for `cover_days` plus half the longest cycle and the cost times the chance that
    the stock is still unsold within the shelf `life`. Up-to level = reorder level + `cover_days` of
    that demand, capped at the shelf targets plus `sell_through_share` of the sales within `life`.
    """
    mu_k = np.where(active, mu, 0.0).sum(axis=0)
    mu_plan_mk = np.where(active & ~on_trial, mu, 0.0)
    mu_plan = mu_plan_mk.sum(axis=0)
    mean_L = mu_plan_mk * lead_days
    var_k = (mean_L + mean_L**2 / r[:, None]).sum(axis=0)
    margin_k = np.where(active, margin, 0.0).sum(axis=0) / np.maximum(active.sum(axis=0), 1)
    mean_life = mu_k * life
    var_life = mean_life + mean_life**2 / cfg.default_dispersion
    p_spoil = unsold_probability(shelf_target + mu_k * (lead_days + cover_days), mean_life, var_life)
    co = rent * (cover_days + cfg.max_cycle_days / 2.0) + p_spoil * cost
    z = newsvendor_z(margin_k, co, cfg.z_max)
    reorder = shelf_target + mu_plan * lead_days + z * np.sqrt(var_k)
    up_to = reorder + mu_plan * cover_days
    up_to = np.minimum(up_to, shelf_target + cfg.sell_through_share * mean_life)
    return EchelonLevels(reorder=reorder, up_to=up_to, priority=mu_k * margin_k)


def order_quantities(levels: EchelonLevels, position: IntArray, carried: BoolArray, lot: int) -> IntArray:
    """Units to order of each product: up to its level when a carried product's position is below reorder."""
    return round_lots(np.where(carried & (position < levels.reorder), levels.up_to - position, 0.0), lot)


def within_cash(ks: IntArray, value: FloatArray, priority: FloatArray, budget: float) -> IntArray:
    """The order lines `ks` (values `value`) to place, in product order.

    All of them if they fit the budget, else the highest-priority ones whose running total fits.
    """
    if value.sum() <= budget:
        return ks
    order = np.lexsort((ks, -priority))
    keep = order[np.cumsum(value[order]) <= max(budget, 0.0)]
    return np.sort(ks[keep])


# ------------------------------------------------------------------------------------------------ today's order


def place_orders(
    session: ToolSession,
    mem: Memory,
    d: int,
    est: Estimates,
    warehouse: IntArray,
    transit: IntArray,
    cash: float,
) -> None:
    """Order what the echelon levels call for (see the module docstring); `warehouse`: usable units after visits."""
    s, st, cfg = mem.s, mem.st, mem.cfg
    remaining = st.horizon - d
    if remaining < st.lead_days:
        return
    M, K = s.shelf.shape
    L = min(st.lead_days + cfg.lead_allowance_days, remaining)
    cover = min(cfg.order_cover_days, max(remaining - L, 0))
    shelf_target = np.zeros(K)
    for m in range(M):
        ks = np.flatnonzero(s.active[m])
        if len(ks):
            shelf_target[ks] += machine_targets(mem, est, m, int(est.cycle[m]))
    act = s.active
    # a product on trial at a machine is bought for its shelf target only: no lead-time demand, no
    # cover and no safety stock, so that little is left over if the trial fails
    on_trial = act & (s.cum_expo < cfg.min_trial_days)
    levels = echelon_levels(
        shelf_target, est.mu, est.r, est.margin, act, on_trial, st.life, st.cost, st.rent, L, cover, cfg
    )
    position = warehouse + transit + np.where(act, s.shelf, 0).sum(axis=0)
    qty = order_quantities(levels, position, np.any(act, axis=0), cfg.order_lot)
    ks = np.flatnonzero(qty > 0)
    if not len(ks):
        return
    ks = within_cash(ks, qty[ks] * st.cost[ks], levels.priority[ks], cash - cfg.cash_floor)
    items = [{"sku_id": st.sku_ids[k], "qty": int(qty[k])} for k in ks.tolist()]
    if items:
        batched(session, "place_order", items)
