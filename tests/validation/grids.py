"""Small evaluation grids made by hand from integer draws, with the model, both references and every control.

`scored(M, W)` scores them the way `autovend.validation.summary` does (one Scorer, `verdict.comparisons`,
`verdict.verdict_payload`) and returns verdict.json's bytes as `autovend.validation.report` writes them. The
grids use only what the machine-cluster code had before the week bootstrap (no week-by-pair arrays unless
`by_week`), so the same function run on the code of that time gives the bytes `test_weeks.py` holds to.
"""

from __future__ import annotations

import json

import numpy as np

from autovend.validation.bootstrap import Scorer
from autovend.validation.controls import CONTROLS
from autovend.validation.grid import EvalGrid, Forecast
from autovend.validation.report import payload
from autovend.validation.verdict import REFERENCES, comparisons, verdict_payload

PRODUCTS = 8  # products on every machine
G2 = (0, 0, 0, 1, 1, 2, 2, 2)  # their subcategories


def _pairs_by_week(rng: np.random.Generator, M: int, W: int) -> np.ndarray:
    """(M * PRODUCTS, W) realised units: product k of a machine sells about (PRODUCTS - k) * 3 a week."""
    base = np.tile(3 * (PRODUCTS - np.arange(PRODUCTS)), M)[:, None]
    return (base + rng.integers(-2, 3, size=(M * PRODUCTS, W))).astype(float)


def grid_and_forecasts(M: int, W: int, seed: int = 0, by_week: bool = False) -> tuple[EvalGrid, list[Forecast]]:
    """A grid of M machines x W weeks x 8 products and nine forecasts on it (`by_week`: with pair-week arrays)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    real_pw = _pairs_by_week(rng, M, W)
    fields = {
        "machines": np.arange(M),
        "n_days": 7 * W,
        "n_products": PRODUCTS,
        "g2": np.asarray(G2),
        "n_g2": 3,
        "pair_key": np.arange(M * PRODUCTS),
        "ranked": np.ones(M * PRODUCTS, dtype=bool),
        "real_mw": real_pw.reshape(M, PRODUCTS, W).sum(axis=1),
        "real_pair": real_pw.sum(axis=1),
    }
    if by_week:
        fields["real_pw"] = real_pw
    grid = EvalGrid(**fields)
    reversed_order = np.tile(np.arange(PRODUCTS)[::-1], M) + np.repeat(np.arange(M) * PRODUCTS, PRODUCTS)
    makers = {
        "model": lambda: real_pw + rng.integers(-3, 4, size=real_pw.shape),
        "persistence": lambda: real_pw * 1.2 + rng.integers(-4, 5, size=real_pw.shape),
        "naive": lambda: np.repeat(real_pw.reshape(M, PRODUCTS, W).mean(axis=1), PRODUCTS, axis=0),
        "reversed_popularity": lambda: real_pw[reversed_order],
        "shuffled_popularity": lambda: real_pw[rng.permutation(M * PRODUCTS)],
        "flat_machine_scale": lambda: real_pw * 0.9 + rng.integers(-3, 4, size=real_pw.shape),
        "uniform_popularity": lambda: np.repeat(real_pw.reshape(M, PRODUCTS, W).mean(axis=1), PRODUCTS, axis=0),
        "no_shock": lambda: real_pw + rng.integers(-3, 4, size=real_pw.shape),
    }
    forecasts = []
    for name, make in makers.items():
        pw = np.maximum(make(), 0.0)
        mw = pw.reshape(M, PRODUCTS, W).sum(axis=1)
        seeds = np.stack([mw + rng.integers(-5, 6, size=mw.shape) for _ in range(4)]) if name == "model" else None
        extra = {"pair_week": pw} if by_week else {}
        forecasts.append(Forecast(name, mw, pw.sum(axis=1), mw_seeds=seeds, **extra))
    return grid, forecasts


def scored(M: int, W: int, seed: int = 0, n_boot: int = 400, by_week: bool = False) -> tuple[dict, bytes]:
    """(the verdict payload as written, verdict.json's bytes) of the grid `grid_and_forecasts(M, W, seed)`."""
    grid, forecasts = grid_and_forecasts(M, W, seed, by_week)
    scorer = Scorer(grid, n_boot, seed)
    for f in forecasts:
        scorer.add(f)
    comps = comparisons(scorer, "model", (*REFERENCES, *CONTROLS))
    # the code before the week bootstrap had no `Scorer.weeks` (and no `weeks` argument): the same function ran there
    extra = {"weeks": scorer.weeks} if hasattr(scorer, "weeks") else {}
    verdict = payload(verdict_payload(comps, "pre_window", M, n_boot, **extra), "verdict")
    text = json.dumps(verdict, indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    return verdict, text.encode("utf-8")
