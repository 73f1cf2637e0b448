"""Controls: wrong models the fitted one must beat, replayed on the same shelves with the same seeds.

Each control changes one component of the fitted model and keeps the rest:

- `reversed_popularity`: the products' popularity omega reversed by rank over the products exposed in
  training (the best seller gets the worst seller's omega, and so on);
- `shuffled_popularity`: omega permuted at random among the exposed products of each subcategory;
- `uniform_popularity`: omega equal for every product;
- `flat_machine_scale`: every machine's scale kappa replaced by one common value (so its expected units
  change in proportion; the network's expected total is kept);
- `no_shock`: the persistent demand shock removed (xi = 1).

The three popularity controls keep each machine-day's expected total of the model (they change only the
split over products), so they cannot be told apart on machine-week totals (up to censoring on inventory
shelves); the product-level WAPE, the TVD and the Spearman can reject them. `flat_machine_scale` keeps
the network total, so machine-week WAPE can reject it; rescaling a machine keeps its product ranks, so its
Spearman equals the model's by construction. `no_shock` has the model's expected sales; only the CRPS,
which scores the spread over seeds, can reject it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.demand.model import DemandModel
from autovend.rng import stream
from autovend.validation.shelves import WindowShelves, expected_rates

CONTROLS = (
    "reversed_popularity",
    "shuffled_popularity",
    "flat_machine_scale",
    "uniform_popularity",
    "no_shock",
)
POPULARITY_CONTROLS = ("reversed_popularity", "shuffled_popularity", "uniform_popularity")
# comparisons that are equal by construction (so they are not made)
EQUAL_BY_CONSTRUCTION = frozenset({("flat_machine_scale", "spearman")})


def control_omega(name: str, omega: np.ndarray, exposed: np.ndarray, g2: np.ndarray, seed: int) -> np.ndarray:
    """The popularity (K,) of a popularity control, from the fitted omega (K,)."""
    out = omega.astype(float).copy()
    if name == "uniform_popularity":
        return np.ones_like(out)
    idx = np.flatnonzero(exposed)
    if name == "reversed_popularity":
        order = idx[np.argsort(omega[idx], kind="stable")]
        out[order] = omega[order[::-1]]
        return out
    if name == "shuffled_popularity":
        rng = stream(seed, "validation-control", "shuffled_popularity")
        for g in np.unique(g2[idx]):
            members = idx[g2[idx] == g]
            out[members] = omega[members[rng.permutation(len(members))]]
        return out
    raise ValueError(f"{name} is not a popularity control")


def machine_day_totals(shelves: WindowShelves, rates: np.ndarray) -> np.ndarray:
    """Each cell's machine-day total of `rates`."""
    key = shelves.m.astype(np.int64) * (shelves.n_days + 1) + shelves.d
    _, inverse = np.unique(key, return_inverse=True)
    return np.bincount(inverse, weights=rates)[inverse]


def popularity_rates(
    shelves: WindowShelves, model: DemandModel, rates: np.ndarray, omega: np.ndarray, new_omega: np.ndarray
) -> np.ndarray:
    """Cell rates with popularity `new_omega` instead of `omega`, each machine-day's total kept at `rates`'."""
    ratio = np.divide(new_omega, omega, out=np.ones_like(new_omega), where=omega > 0)
    alt = expected_rates(shelves, model.with_b(model.b * ratio[None, :]))
    tot, tot_alt = machine_day_totals(shelves, rates), machine_day_totals(shelves, alt)
    return alt * np.divide(tot, tot_alt, out=np.zeros_like(tot), where=tot_alt > 0)


def flat_scale_common(rates: np.ndarray, kappa: np.ndarray) -> float:
    """The one machine scale that keeps the total of `rates` (cells) when each cell's kappa (`kappa`) is replaced."""
    total = rates.sum()
    if total <= 0 or not np.all(kappa > 0):
        return 1.0
    return float(total / (rates / kappa).sum())


def flat_scale_rates(shelves: WindowShelves, rates: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """Cell rates with every machine's kappa (by machine code) set to one value that keeps the total."""
    k = kappa[shelves.m]
    total = rates.sum()
    if total <= 0 or not np.all(k > 0):
        return rates.copy()
    common = total / (rates / k).sum()
    return rates * common / k


def omega_by_code(popularity: pd.DataFrame, skus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """omega (K,) and whether each product was exposed in training (K,), in the panel's product order."""
    pop = popularity.set_index("sku_id")
    omega = pop["omega"].reindex(skus).fillna(0.0).to_numpy(dtype=float)
    exposed = (pop["machine_days"].reindex(skus).fillna(0) > 0).to_numpy() & (omega > 0)
    return omega, exposed
