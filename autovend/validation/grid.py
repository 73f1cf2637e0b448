"""What every forecast is scored on: the evaluated machines' weeks and (machine, product) pairs in the window.

`EvalGrid` holds the realised sales on three levels (machine-weeks, machine x product pairs over the whole
window, machine x subcategory) and `Forecast` a forecast on the same levels: the mean (a replay's mean
over seeds, or a point forecast) and, for a replay, the per-seed machine-week samples (for the CRPS and
the seeds' spread). Both also hold the pairs week by week (`real_pw`, `Forecast.pair_week`): the block
bootstrap over weeks of a one- or two-machine source (`autovend.validation.weeks`) weights weeks before it
sums a pair over the window. The pairs are every pair with realised sales, on a forecast shelf, or with a positive
forecast of any scored forecast; `ranked` marks those on the model's shelf or with realised sales, the
products the within-machine Spearman ranks (the paper: the products on the machine's shelf).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autovend.validation.shelves import WindowSales, WindowShelves


@dataclass(frozen=True)
class EvalGrid:
    """The evaluated machines (full panel codes), their window weeks and pairs, with the realised sales."""

    machines: np.ndarray  # (M,) machine codes
    n_days: int
    n_products: int
    g2: np.ndarray  # (K,) subcategory code of each product
    n_g2: int
    pair_key: np.ndarray  # (P,) sorted m_pos * K + k
    ranked: np.ndarray  # (P,) bool: on the model's shelf or sold
    real_mw: np.ndarray  # (M, W) realised units
    real_pair: np.ndarray  # (P,) realised units
    real_pw: np.ndarray | None = None  # (P, W) realised units of each pair in each week (None: not kept)

    @property
    def n_machines(self) -> int:
        """M."""
        return len(self.machines)

    @property
    def n_weeks(self) -> int:
        """W: the window's weeks (the last may be partial)."""
        return int(np.ceil(self.n_days / 7))

    @property
    def days_in_week(self) -> np.ndarray:
        """(W,) the days of each window week."""
        return np.array([min(7, self.n_days - 7 * w) for w in range(self.n_weeks)], dtype=float)

    @property
    def pair_machine(self) -> np.ndarray:
        """(P,) machine position of each pair."""
        return self.pair_key // self.n_products

    @property
    def pair_product(self) -> np.ndarray:
        """(P,) product code of each pair."""
        return self.pair_key % self.n_products

    @property
    def pair_g2(self) -> np.ndarray:
        """(P,) subcategory of each pair."""
        return self.g2[self.pair_product]

    def m_pos(self, m: np.ndarray) -> np.ndarray:
        """Positions in `machines` of machine codes (each must be evaluated)."""
        pos = np.searchsorted(self.machines, m)
        if len(m) and (pos.max() >= len(self.machines) or not np.array_equal(self.machines[pos], m)):
            raise ValueError("a cell of a machine that is not evaluated")
        return pos

    def keys(self, m: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Pair keys of cells."""
        return self.m_pos(m) * self.n_products + k

    def pair_index(self, m: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Pair positions of cells (each pair must be on the grid)."""
        key = self.keys(m, k)
        pos = np.searchsorted(self.pair_key, key)
        if len(key) and (pos.max() >= len(self.pair_key) or not np.array_equal(self.pair_key[pos], key)):
            raise ValueError("a cell whose pair is not on the grid")
        return pos

    def mw_index(self, m: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Flat machine-week positions of cells."""
        return self.m_pos(m) * self.n_weeks + d // 7

    def by_pair(self, m: np.ndarray, k: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sums of cell values per pair, (P,)."""
        return np.bincount(self.pair_index(m, k), weights=values, minlength=len(self.pair_key))

    def by_pair_week(self, m: np.ndarray, k: np.ndarray, d: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sums of cell values per pair and window week, (P, W); `d` the cells' window days."""
        W = self.n_weeks
        flat = np.bincount(self.pair_index(m, k) * W + d // 7, weights=values, minlength=len(self.pair_key) * W)
        return flat.reshape(len(self.pair_key), W)

    def by_machine_week(self, m: np.ndarray, d: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sums of cell values per machine-week, (M, W)."""
        flat = np.bincount(self.mw_index(m, d), weights=values, minlength=self.n_machines * self.n_weeks)
        return flat.reshape(self.n_machines, self.n_weeks)


def make_grid(
    machines: np.ndarray,
    sales: WindowSales,
    shelves: WindowShelves,
    n_products: int,
    g2: np.ndarray,
    n_g2: int,
    extra_keys: tuple[np.ndarray, ...] = (),
) -> EvalGrid:
    """The grid of the evaluated `machines` (sorted codes): realised sales, shelf pairs and `extra_keys`."""
    machines = np.sort(np.asarray(machines, dtype=np.int64))
    stub = EvalGrid(
        machines=machines,
        n_days=shelves.n_days,
        n_products=n_products,
        g2=g2,
        n_g2=n_g2,
        pair_key=np.zeros(0, dtype=np.int64),
        ranked=np.zeros(0, dtype=bool),
        real_mw=np.zeros((len(machines), 0)),
        real_pair=np.zeros(0),
    )
    sold = stub.keys(sales.m, sales.k)
    shelf = stub.keys(shelves.m, shelves.k)
    ranked_keys = np.union1d(sold, shelf)
    extra = [np.asarray(e, dtype=np.int64) for e in extra_keys]
    keys = np.union1d(ranked_keys, np.concatenate(extra)).astype(np.int64) if extra else ranked_keys.astype(np.int64)
    grid = EvalGrid(
        machines=machines,
        n_days=shelves.n_days,
        n_products=n_products,
        g2=g2,
        n_g2=n_g2,
        pair_key=keys,
        ranked=np.isin(keys, ranked_keys),
        real_mw=np.zeros((len(machines), stub.n_weeks)),
        real_pair=np.zeros(len(keys)),
    )
    return EvalGrid(
        **{
            **grid.__dict__,
            "real_mw": grid.by_machine_week(sales.m, sales.d, sales.units),
            "real_pair": grid.by_pair(sales.m, sales.k, sales.units),
            "real_pw": grid.by_pair_week(sales.m, sales.k, sales.d, sales.units),
        }
    )


@dataclass(frozen=True)
class Forecast:
    """A forecast on a grid: mean machine-weeks and pairs, and a replay's per-seed samples.

    `mw_seeds` (S, M, W) and `pair_seeds` (S, P) are None for a point forecast (a reference). `pair_week`
    (P, W): the mean forecast of each pair in each week (its rows add up to `pair`); None when not made.
    """

    name: str
    mw: np.ndarray  # (M, W)
    pair: np.ndarray  # (P,)
    mw_seeds: np.ndarray | None = None
    pair_seeds: np.ndarray | None = None
    pair_week: np.ndarray | None = None

    @property
    def n_seeds(self) -> int:
        """Replay seeds (0 for a point forecast)."""
        return 0 if self.mw_seeds is None else int(self.mw_seeds.shape[0])


def crps_by_machine(real_mw: np.ndarray, forecast: Forecast) -> np.ndarray:
    """Each machine's CRPS summed over its weeks, (M,): the ensemble CRPS of the seeds, or |y - f| of a point.

    The ensemble CRPS of samples x_1..x_S at y is mean|x_s - y| - sum_ij |x_i - x_j| / (2 S^2) (the
    empirical distribution's CRPS); for one value it is the absolute error, so summed over machine-weeks
    and divided by the realised units it is comparable with the WAPE of a point forecast.
    """
    return crps_cells(real_mw, forecast).sum(axis=1)


def crps_cells(real_mw: np.ndarray, forecast: Forecast) -> np.ndarray:
    """Each machine-week's CRPS, (M, W) (`crps_by_machine` sums it over the weeks)."""
    if forecast.mw_seeds is None:
        return np.abs(real_mw - forecast.mw)
    x = np.sort(forecast.mw_seeds, axis=0)
    s = x.shape[0]
    first = np.abs(x - real_mw[None]).mean(axis=0)
    coef = (2 * np.arange(s) - s + 1).astype(float)
    spread = np.tensordot(coef, x, axes=(0, 0)) * 2 / (2 * s * s)
    return first - spread
