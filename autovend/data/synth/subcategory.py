"""A subcategory of the synthetic operator's catalog (`Subcategory`) and the gross margin ranges of its groups."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subcategory:
    """A subcategory of the generated catalog and the truth of its demand level."""

    category_l1: str
    category_l2: str
    n: int  # number of SKUs
    price: tuple[float, float]  # reference price range, CNY
    margin: tuple[float, float]  # gross margin range
    life_30_share: float  # share of SKUs with a 30-day shelf life (else 90)
    gamma: float  # truth subcategory coefficient (geometric mean 1 within category_l1 after normalisation)
    brands: tuple[str, ...]
    variants: tuple[str, ...]
    sizes: tuple[str, ...]
    kept: bool = True


DRINK_MARGIN = (0.30, 0.40)
SNACK_MARGIN = (0.50, 0.60)
