"""The test window a forecast may see: which machines are scored, their shelves, and the replays of a model on them.

- Machines with inventory records are simulated from the operator's decisions (`stock`): their shelf on the
  window's first morning from training records, the counts of each visit, depleted in between by the model's
  own sales.
- Sales-only machines are replayed on a forecast shelf with unknown stock: for a source with no inventory
  records, the chains' outlook (`shelves.outlook_assortment`: each product's chance of being on the shelf on each
  window day, known before it), each pair and machine at the level of its training sales (`shelves.training_factors`:
  sales alone do not show how many units the operator kept of a product, only what sold);
  in a source with inventory records (`include_sales_only`), the pre-window assortment of the sales rule at the
  model's training level (`shelves.pre_window_assortment`, `shelves.training_level_anchor`).

A machine is scored when it has `min_machine_days` training days and a forecast shelf, so which machines are
scored does not depend on the window's sales either. `Window.play` replays a model (or a control's change of
it) on every scored machine with the same seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from autovend.calibration.panel import Panel
from autovend.calibration.result import CalibrationResult
from autovend.demand.model import DemandModel
from autovend.demand.settings import DemandSettings
from autovend.distinct import distinct
from autovend.validation.bootstrap import Scorer
from autovend.validation.config import ValidationConfig
from autovend.validation.grid import EvalGrid, Forecast
from autovend.validation.level import LevelChoice
from autovend.validation.replay import ReplaySettings, replay
from autovend.validation.shelves import (
    WindowShelves,
    expected_rates,
    outlook_assortment,
    outlook_shelves,
    pre_window_assortment,
    pre_window_shelves,
    training_factors,
    training_level_anchor,
)
from autovend.validation.stock import StockModel, StockPlan, stock_plan
from autovend.validation.verdict import Shelves


@dataclass(frozen=True)
class Plan:
    """Which machines are scored, on which shelves."""

    inventory: np.ndarray  # machine codes simulated from their visits
    pre_window: np.ndarray  # machine codes on a forecast shelf of unknown stock
    shelves: Shelves
    notes: list[str] = field(default_factory=list)

    @property
    def machines(self) -> np.ndarray:
        """All evaluated machine codes, sorted."""
        return np.union1d(self.inventory, self.pre_window).astype(np.int64)


def make_plan(full: Panel, train_days: int, with_shelf: np.ndarray, config: ValidationConfig) -> Plan:
    """The scored machines: inventory ones with known shelves in the window, sales-only ones in `with_shelf`."""
    md = full.machine_days
    train_n = md[md["d"] < train_days].groupby("m").size()
    enough = train_n.index[train_n >= config.min_machine_days].to_numpy()
    has_inv = full.machines["has_inventory"].to_numpy()
    known_test = md[(md["d"] >= train_days) & md["known"]]["m"].unique()
    inventory = np.intersect1d(np.intersect1d(enough, known_test), np.flatnonzero(has_inv))
    sales_only = np.intersect1d(np.intersect1d(enough, np.flatnonzero(~has_inv)), with_shelf)
    notes = []
    if len(inventory) and not config.include_sales_only:
        if len(sales_only):
            notes.append(
                f"{len(sales_only)} sales-only machines are not scored (the paper's protocol scores machines with "
                "inventory records; `include_sales_only: true` scores them on pre-window shelves)"
            )
        return Plan(inventory, np.zeros(0, dtype=np.int64), "inventory", notes)
    if len(inventory) and len(sales_only):
        return Plan(inventory, sales_only, "mixed", notes)
    if len(inventory):
        return Plan(inventory, sales_only, "inventory", notes)
    return Plan(np.zeros(0, dtype=np.int64), sales_only, "pre_window", notes)


@dataclass(frozen=True)
class Outlook:
    """The sales-only machines' forecast shelves before the plan: the chains' outlook or the sales rule's."""

    cal: CalibrationResult
    train: Panel
    full: Panel
    assortment: pd.DataFrame  # (m, k, d, presence) from the chains, or (m, k, presence) from the sales rule
    from_chains: bool

    @classmethod
    def of(cls, cal: CalibrationResult, train: Panel, full: Panel, n_days: int, config: ValidationConfig) -> Outlook:
        """The chains' outlook when the training calibration estimated availability, else the sales rule's."""
        if cal.availability is not None:
            ids = cal.machines["machine_id"].to_numpy()
            return cls(cal, train, full, outlook_assortment(cal.availability, ids, full, n_days), True)
        return cls(cal, train, full, pre_window_assortment(train, full, config.shelf_weeks), False)

    def shelves(self, settings: DemandSettings, start: int, machines: np.ndarray, fill: float) -> WindowShelves:
        """The window's cells of `machines`."""
        if self.from_chains:
            return outlook_shelves(self.full, self.assortment, settings, start, machines, fill)
        return pre_window_shelves(self.full, self.assortment, settings, start, machines, fill)

    def factors(self, model: DemandModel, shelves: WindowShelves, fill: float) -> np.ndarray:
        """Each cell's factor on the model's rates (`shelves`: the sales-only cells)."""
        if self.from_chains:
            assert self.cal.availability is not None
            ids = self.cal.machines["machine_id"].to_numpy()
            found = training_factors(self.cal.availability, self.train, ids, self.full, model, fill)
            return found.of(shelves, model)
        machines = distinct(shelves.m)
        anchor = training_level_anchor(self.train, self.full, model, machines, self.assortment, fill)
        return anchor[np.searchsorted(machines, shelves.m)]


@dataclass
class Window:
    """What the replays of one validation share: the grid, the shelves, the stock plan and the seeds."""

    grid: EvalGrid
    pre: WindowShelves  # cells of the sales-only machines (stock unknown)
    stock: StockPlan | None  # the inventory machines
    outlook: Outlook
    model: DemandModel
    level: LevelChoice | None
    replay: ReplaySettings
    scorer: Scorer
    fill: float
    seconds: float = 0.0

    def multiplier(self, machines: np.ndarray) -> np.ndarray:
        """The level rule's factor of each machine code (1 when it keeps the calibrated level)."""
        if self.level is None or not self.level.follows:
            return np.ones(len(machines))
        return self.level.multiplier[np.searchsorted(self.level.machines, machines)]

    def pre_rates(self, model: DemandModel) -> np.ndarray:
        """The model's rates on the sales-only cells, with their training factors (`Outlook.factors`)."""
        if len(self.pre.m) == 0:
            return np.zeros(0)
        return expected_rates(self.pre, model) * self.outlook.factors(model, self.pre, self.fill)

    def play(
        self,
        name: str,
        rates: np.ndarray,
        *,
        model: DemandModel | None = None,
        shock: bool = True,
        level: bool = True,
        stock_factor: np.ndarray | None = None,
        split_b: np.ndarray | None = None,
    ) -> Forecast:
        """Replay `model` (default: the fitted one): `rates` on the sales-only cells, the stock plan simulated.

        `stock_factor` (per stock machine) and `split_b` (machine x slot) change the simulated machines as a
        control changes the model (`stock.StockModel`); `level` applies the level rule to both.
        """
        m = model or self.model
        r = rates * (self.multiplier(self.pre.m) if level else 1.0)
        stock = None
        if self.stock is not None:
            sm = StockModel.of(m, self.stock)
            factor = self.multiplier(self.stock.machines) if level else np.ones(len(self.stock.machines))
            if stock_factor is not None:
                factor = factor * stock_factor
            stock = (self.stock, StockModel(sm.b, sm.U, sm.capacity, sm.eta, sm.phi, factor, split_b))
        f, sec = replay(name, self.grid, self.pre, r, m.shock, self.replay, shock=shock, stock=stock)
        if name == "model":
            self.seconds = sec
        return f


def window_shelves(
    full: Panel,
    plan: Plan,
    outlook: Outlook,
    inventory: pd.DataFrame | None,
    settings: DemandSettings,
    start: int,
    fill: float,
) -> tuple[WindowShelves, StockPlan | None, WindowShelves]:
    """(sales-only cells, the stock plan, every scored shelf cell): the last is what the grid and naive read."""
    no_int, no_float = np.zeros(0, np.int64), np.zeros(0)
    empty = WindowShelves(no_int, no_int, no_int, no_float, no_float, no_float, no_float, full.n_days - start)
    pre = outlook.shelves(settings, start, plan.pre_window, fill) if len(plan.pre_window) else empty
    if not len(plan.inventory) or inventory is None:
        return pre, None, pre
    stock = stock_plan(full, inventory, settings, start, plan.inventory)
    decided = stock.shelves()
    parts = [p for p in (decided, pre) if len(p.m)]
    return pre, stock, WindowShelves.concat(parts) if parts else empty
