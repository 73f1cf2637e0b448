"""The run's money: the ledger, cash, and the cost value of the stock held (`Accounts`, `Tally`).

Ledger accounts: "cash" rows are cash flows (cash = start cash + their sum); "inventory" rows move
the cost value of unexpired stock (purchases in, cost of goods sold, expiry and discard write-offs
out), so net assets = start cash + the sum of all rows. Money is exact integer fen.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from autovend.sim.facts import WorldFacts
from autovend.sim.results import Balance
from autovend.sim.state import SimState

LEDGER_COLUMNS = ["day", "account", "kind", "amount_fen", "ref"]


@dataclass(frozen=True)
class Tally:
    """Units (all and expired) and the cost value of the unexpired units, by place, on one day (fen)."""

    shelf_units: int
    shelf_expired: int
    shelf_fen: int
    warehouse_units: int
    warehouse_expired: int
    warehouse_fen: int
    in_transit_units: int
    in_transit_fen: int

    def balance(self, cash_fen: int) -> Balance:
        """The balance with `cash_fen` in cash and this stock."""
        return Balance(cash_fen, self.shelf_fen, self.warehouse_fen, self.in_transit_fen)


class Accounts:
    """Books every money movement of a run into its state (ledger rows, cash, the day's cost totals)."""

    def __init__(self, facts: WorldFacts, state: SimState) -> None:
        self._facts = facts
        self._state = state

    def charge(self, kind: str, fen: int, ref: str) -> None:
        """Pay a cash cost of `kind` (one of COST_KINDS) today: cash, the day's cost totals, a ledger row."""
        s = self._state
        s.cash_fen -= fen
        s.day_costs[kind] += fen
        if fen:
            s.ledger.append((s.day, "cash", kind, -fen, ref))

    def receive_sales(self, fen: int) -> None:
        """Take in the day's sales revenue (a ledger row when not zero)."""
        s = self._state
        s.cash_fen += fen
        if fen:
            s.ledger.append((s.day, "cash", "sales", fen, ""))

    def move_stock_value(self, kind: str, fen: int, ref: str) -> None:
        """An inventory row of today: `fen` > 0 adds stock value (purchase), < 0 removes it (cogs, write-offs)."""
        s = self._state
        s.ledger.append((s.day, "inventory", kind, fen, ref))

    def tally(self, day: int) -> Tally:
        """Units (all and expired) and cost value of unexpired units, by place, on `day`."""
        s = self._state
        cost = self._facts.cost_fen
        shelf_by_k = s.shelf_q.sum(axis=0)
        se, sef = s.shelf_book.expired(day)
        we, wef = s.wh_book.expired(day)
        return Tally(
            shelf_units=int(shelf_by_k.sum()),
            shelf_expired=se,
            shelf_fen=int(shelf_by_k @ cost) - sef,
            warehouse_units=int(s.wh_q.sum()),
            warehouse_expired=we,
            warehouse_fen=int(s.wh_q @ cost) - wef,
            in_transit_units=int(s.transit_q.sum()),
            in_transit_fen=int(s.transit_q @ cost),
        )

    def balance(self) -> Balance:
        """Cash and the cost value of the unexpired stock today."""
        s = self._state
        return self.tally(s.day).balance(s.cash_fen)

    def ledger(self) -> pd.DataFrame:
        """Every ledger row: day, account, kind, amount (CNY), amount_fen, ref."""
        df = pd.DataFrame(self._state.ledger, columns=LEDGER_COLUMNS)
        df.insert(3, "amount", df["amount_fen"] / 100.0)
        return df

    def totals_fen(self) -> dict[str, int]:
        """Sum of the ledger by account (fen): {'cash': ..., 'inventory': ...}."""
        out = {"cash": 0, "inventory": 0}
        for _, account, _, amount, _ in self._state.ledger:
            out[account] += amount
        return out
