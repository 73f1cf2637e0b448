"""The synthetic operator's catalog: plausible drinks and snacks sold in Shanghai vending machines.

The subcategories (names, price and margin ranges, truth gamma) are in `drinks` and `snacks`; `Subcategory`
and the margin ranges in `subcategory` (all importable from here, as before).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.data.synth.drinks import DRINKS
from autovend.data.synth.snacks import SNACKS_AND_UNKEPT
from autovend.data.synth.subcategory import DRINK_MARGIN, SNACK_MARGIN, Subcategory
from autovend.rng import stream

__all__ = [
    "DRINK_MARGIN",
    "KEPT_SUBCATEGORIES",
    "SNACK_MARGIN",
    "SUBCATEGORIES",
    "Subcategory",
    "build_catalog",
]

SUBCATEGORIES: tuple[Subcategory, ...] = DRINKS + SNACKS_AND_UNKEPT

KEPT_SUBCATEGORIES: tuple[str, ...] = tuple(s.category_l2 for s in SUBCATEGORIES if s.kept)


def _round_half(x: float | np.ndarray) -> np.ndarray:
    """Round prices to the nearest 0.5 CNY (vending price points)."""
    return np.round(np.asarray(x) * 2.0) / 2.0


def build_catalog(seed: int, omega_sigma: float) -> pd.DataFrame:
    """The products table with the truth columns omega and gamma (and `kept`).

    Names are unique; reference prices are on 0.5 CNY points; unit costs follow the subcategory's gross
    margin range; shelf lives are 30 or 90 days for kept products. omega is lognormal within the
    subcategory, rescaled to arithmetic mean 1 (the truth's normalisation).
    """
    rng = stream(seed, "catalog")
    rows = []
    sku = 0
    for sub in SUBCATEGORIES:
        combos = [(b, v, s) for b in sub.brands for v in sub.variants for s in sub.sizes]
        if len(combos) < sub.n:
            raise ValueError(f"{sub.category_l2}: {len(combos)} name combinations for {sub.n} SKUs")
        pick = rng.choice(len(combos), size=sub.n, replace=False)
        size_rank = {s: i for i, s in enumerate(sub.sizes)}
        z = rng.standard_normal(sub.n)
        omega = np.exp(omega_sigma * z)
        omega = omega / omega.mean()
        lo, hi = sub.price
        for j, idx in enumerate(pick):
            brand, variant, size = combos[idx]
            pos = (size_rank[size] + rng.uniform(0.0, 1.0)) / len(sub.sizes)
            price = float(_round_half(lo + (hi - lo) * pos))
            price = min(max(price, lo), hi)
            margin = rng.uniform(*sub.margin)
            if sub.kept:
                life = 30 if rng.random() < sub.life_30_share else 90
            else:
                life = {"fresh_food": 3, "frozen": 180, "daily_goods": 720}[sub.category_l1]
            sku += 1
            rows.append(
                {
                    "sku_id": f"SKU{sku:05d}",
                    "name": f"{brand} {variant} {size}",
                    "category_l1": sub.category_l1,
                    "category_l2": sub.category_l2,
                    "ref_price": price,
                    "unit_cost": round(price * (1.0 - margin), 2),
                    "shelf_life_days": life,
                    "omega": float(omega[j]),
                    "gamma": sub.gamma,
                    "kept": sub.kept,
                }
            )
    return pd.DataFrame(rows)
