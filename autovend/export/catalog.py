"""The benchmark catalog: the calibration's kept products with names, prices, unit costs and shelf lives.

Rules (paper §3.2-3.3; costs and shelf lives are benchmark settings, not estimates):

- Products and their order are those of the calibration's popularity table (the columns of b).
  Names and reference prices come from the source's products table; a product without a name is
  named by its sku_id.
- Unit cost: the source's unit_cost is kept when the gross margin it implies, 1 - cost / price,
  lies within the band of the product's category_l1 (default: drinks 30-40%, snacks 50-60%, any
  other category 40-50%). Otherwise a margin is drawn uniformly in the band from the generator
  `stream(seed, "catalog", "margin")` (one draw per product in catalog order, used or not, so a
  product's cost does not depend on the others) and the cost is rounded to the fen, kept within the
  fen range that the band allows whenever that range is not empty.
- Shelf life is 30 or 90 days: the source's value when it is 30 or 90; otherwise 30 for a source
  value of at most 45 days and 90 above. A product without a shelf life takes the majority of the
  (so mapped) shelf lives of its subcategory in the source (ties: 30); a subcategory with none
  gets 30 when its name marks it as perishable (dairy, milk, yogurt, bread, cake, fresh, sandwich)
  and 90 otherwise.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from autovend.errors import ExportError
from autovend.rng import stream
from autovend.world.model import CATALOG_COLUMNS

SHELF_LIVES: tuple[int, int] = (30, 90)  # days
SHORT_LIFE_MAX_DAYS = 45  # source shelf lives up to this map to 30 days, longer ones to 90
PERISHABLE_WORDS: tuple[str, ...] = (
    "dairy",
    "milk",
    "yogurt",
    "yoghurt",
    "bread",
    "cake",
    "fresh",
    "sandwich",
)
DEFAULT_MARGINS: dict[str, tuple[float, float]] = {"drinks": (0.30, 0.40), "snacks": (0.50, 0.60)}
OTHER_MARGIN: tuple[float, float] = (0.40, 0.50)  # categories without a band of their own
MARGIN_TOLERANCE = 1e-9

CATALOG_EXPORT_COLUMNS = [
    *CATALOG_COLUMNS,
    "unit_cost_source",  # "source" (kept) or "margin_draw"
    "shelf_life_source",  # "source", "mapped", "subcategory" or "default"
]


def margin_bands(
    category_l1: pd.Series,
    margins: dict[str, tuple[float, float]] | None = None,
    other: tuple[float, float] = OTHER_MARGIN,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper gross-margin bounds for each product's category_l1."""
    margins = DEFAULT_MARGINS if margins is None else margins
    cats = category_l1.astype(str).to_numpy()
    lo = np.array([margins.get(c, other)[0] for c in cats], dtype=float)
    hi = np.array([margins.get(c, other)[1] for c in cats], dtype=float)
    return lo, hi


def unit_costs(
    ref_price: np.ndarray, source_cost: np.ndarray, lo: np.ndarray, hi: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Unit costs in CNY (to the fen) and whether each came from the source (module docstring)."""
    ref = np.asarray(ref_price, dtype=float)
    cost = np.asarray(source_cost, dtype=float)
    draws = rng.random(len(ref))
    with np.errstate(invalid="ignore", divide="ignore"):
        margin = 1.0 - cost / ref
    keep = np.isfinite(cost) & (cost > 0) & (margin >= lo - MARGIN_TOLERANCE) & (margin <= hi + MARGIN_TOLERANCE)
    ref_fen = np.round(ref * 100.0)
    drawn = np.round(ref_fen * (1.0 - (lo + draws * (hi - lo))))
    lo_fen = np.array([math.ceil(x - 1e-6) for x in ref_fen * (1.0 - hi)])
    hi_fen = np.array([math.floor(x + 1e-6) for x in ref_fen * (1.0 - lo)])
    fits = lo_fen <= hi_fen
    drawn = np.where(fits, np.clip(drawn, lo_fen, np.maximum(hi_fen, lo_fen)), drawn)
    drawn = np.maximum(drawn, 1.0)  # never free
    out = np.where(keep, cost, drawn / 100.0)
    return np.round(out, 2), keep


def _mapped_life(days: np.ndarray) -> np.ndarray:
    """30 or 90 for known shelf lives (NaN stays NaN)."""
    return np.where(np.isnan(days), np.nan, np.where(days <= SHORT_LIFE_MAX_DAYS, 30.0, 90.0))


def _subcategory_majority(source_products: pd.DataFrame) -> dict[str, int]:
    """category_l2 -> the majority of its products' mapped shelf lives (ties: 30)."""
    life = _mapped_life(source_products["shelf_life_days"].to_numpy(dtype=float))
    frame = pd.DataFrame({"g": source_products["category_l2"].astype(str).to_numpy(), "life": life}).dropna()
    out: dict[str, int] = {}
    for g, lives in frame.groupby("g", sort=True)["life"]:
        n30 = int((lives == 30).sum())
        out[str(g)] = 30 if n30 * 2 >= len(lives) else 90
    return out


def is_perishable(category_l2: str) -> bool:
    """Whether a subcategory's name marks it as perishable (dairy, bread, cake, ...)."""
    name = category_l2.lower()
    return any(word in name for word in PERISHABLE_WORDS)


def shelf_lives(products: pd.DataFrame, source_products: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Shelf life (30 or 90 days) of each product and where it came from (module docstring)."""
    days = products["shelf_life_days"].to_numpy(dtype=float)
    mapped = _mapped_life(days)
    majority = _subcategory_majority(source_products)
    life = np.empty(len(products), dtype=np.int64)
    origin = np.empty(len(products), dtype=object)
    for i, (d, m, g2) in enumerate(zip(days, mapped, products["category_l2"].astype(str), strict=True)):
        if np.isfinite(d) and int(d) in SHELF_LIVES and d == int(d):
            life[i], origin[i] = int(d), "source"
        elif np.isfinite(m):
            life[i], origin[i] = int(m), "mapped"
        elif g2 in majority:
            life[i], origin[i] = majority[g2], "subcategory"
        else:
            life[i], origin[i] = (30 if is_perishable(g2) else 90), "default"
    return life, origin.astype(str)


def build_catalog(
    kept: pd.DataFrame,
    source_products: pd.DataFrame,
    seed: int,
    margins: dict[str, tuple[float, float]] | None = None,
    other_margin: tuple[float, float] = OTHER_MARGIN,
) -> pd.DataFrame:
    """The catalog of the kept products (CATALOG_EXPORT_COLUMNS), in the order of `kept`.

    `kept` has sku_id, category_l1, category_l2 (the calibration's popularity table); `source_products`
    is the source's typed products table (sku_id, name, ref_price, unit_cost, shelf_life_days, ...).
    Raises ExportError when a kept product is missing from the source.
    """
    src = source_products.assign(sku_id=source_products["sku_id"].astype(str)).set_index("sku_id")
    ids = kept["sku_id"].astype(str)
    absent = ids[~ids.isin(src.index)]
    if len(absent):
        raise ExportError(
            f"{len(absent)} products of the calibration are not in the source's products table "
            f"(first {list(absent[:5])}); export with the source the calibration was made from"
        )
    rows = src.loc[ids.to_numpy()]
    names = rows["name"].astype("str")
    names = names.where(names.notna() & (names.str.strip() != ""), pd.Series(ids.to_numpy(), index=rows.index))
    lo, hi = margin_bands(kept["category_l1"], margins, other_margin)
    cost, from_source = unit_costs(
        rows["ref_price"].to_numpy(dtype=float),
        rows["unit_cost"].to_numpy(dtype=float),
        lo,
        hi,
        stream(seed, "catalog", "margin"),
    )
    life, life_origin = shelf_lives(
        pd.DataFrame(
            {
                "category_l2": kept["category_l2"].astype(str).to_numpy(),
                "shelf_life_days": rows["shelf_life_days"].to_numpy(),
            }
        ),
        source_products,
    )
    out = pd.DataFrame(
        {
            "sku_id": ids.to_numpy(),
            "name": names.to_numpy(),
            "category_l1": kept["category_l1"].astype(str).to_numpy(),
            "category_l2": kept["category_l2"].astype(str).to_numpy(),
            "ref_price": rows["ref_price"].to_numpy(dtype=float),
            "unit_cost": cost,
            "shelf_life_days": life,
            "unit_cost_source": np.where(from_source, "source", "margin_draw"),
            "shelf_life_source": life_origin,
        }
    )
    for col in ("sku_id", "name", "category_l1", "category_l2", "unit_cost_source", "shelf_life_source"):
        out[col] = out[col].astype("str")
    return out
