"""The canonical normalisation of b = kappa * pi * gamma * omega (eq. 4), shared by estimates and truth.

Only the products b_{m,k} are identified from sales; the factors are defined up to rescalings that
leave b unchanged. The canonical form fixes them:
- omega has arithmetic mean 1 within each subcategory over a reference set of products (by default
  all products; recovery tests use the products with enough exposure, for truth and estimate alike);
- gamma has geometric mean 1 within each category_l1 (pi's column for that category takes the factor);
- pi has geometric mean 1 over the categories of each site type (kappa of its machines takes the factor);
so every b_{m,k} is unchanged. These are exactly the rescalings that leave b unchanged. Geometric means
run over the positive factors: a subcategory or category that never sold has a factor of 0 (the
boundary estimate), which stays 0 and does not move the others.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Factors:
    """The four factors of eq. (4) as tables.

    omega: Series by sku_id; gamma: Series by category_l2; pi: DataFrame (index site_type, columns
    category_l1); kappa: Series by machine_id. `products` maps sku_id -> (category_l1, category_l2)
    and `machines` maps machine_id -> site_type.
    """

    omega: pd.Series
    gamma: pd.Series
    pi: pd.DataFrame
    kappa: pd.Series
    products: pd.DataFrame  # index sku_id, columns category_l1, category_l2
    machines: pd.Series  # index machine_id, values site_type

    def base_attraction(self) -> pd.DataFrame:
        """B as a machines x products DataFrame."""
        p = self.products
        g = self.gamma.reindex(p["category_l2"]).to_numpy()
        om = self.omega.reindex(p.index).to_numpy()
        site = self.machines.reindex(self.kappa.index).to_numpy()
        pi = self.pi.reindex(index=site, columns=p["category_l1"]).to_numpy()
        b = self.kappa.to_numpy()[:, None] * pi * (g * om)[None, :]
        return pd.DataFrame(b, index=self.kappa.index, columns=p.index)


def _geometric_mean(values: np.ndarray) -> float:
    """Geometric mean of the positive values (zeros are unsold boundary estimates; none positive: 1)."""
    pos = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.mean(np.log(pos)))) if len(pos) else 1.0


def canonical(f: Factors, reference_products: pd.Index | None = None, weights: pd.Series | None = None) -> Factors:
    """Rescale the factors to the canonical form of the module docstring; b is unchanged.

    `weights` (by sku_id) turns omega's mean over the reference products into a weighted mean, e.g.
    by units sold, so that products too rare to be measured do not move the normalisation.
    """
    p = f.products
    ref = p.index if reference_products is None else p.index.intersection(reference_products)
    omega = f.omega.reindex(p.index).astype(float)
    gamma = f.gamma.astype(float).copy()
    # 1. omega: mean 1 over the reference products of each subcategory; gamma takes the factor
    for g2, idx in p.groupby("category_l2").groups.items():
        members = pd.Index(idx).intersection(ref)
        if len(members) == 0:
            continue
        if weights is None:
            c = float(omega.reindex(members).mean())
        else:
            w = weights.reindex(members).fillna(0.0).to_numpy(dtype=float)
            c = float(np.sum(omega.reindex(members).to_numpy() * w) / np.sum(w)) if np.sum(w) > 0 else float("nan")
        if c > 0 and np.isfinite(c):
            omega.loc[pd.Index(idx)] /= c
            gamma.loc[g2] *= c
    # 2. gamma: geometric mean 1 within category_l1; pi's column takes the factor
    pi = f.pi.astype(float).copy()
    l1_of = p.drop_duplicates("category_l2").set_index("category_l2")["category_l1"]
    for l1, subs in l1_of.groupby(l1_of).groups.items():
        subs = pd.Index(subs).intersection(gamma.index)
        c = _geometric_mean(gamma.loc[subs].to_numpy())
        gamma.loc[subs] /= c
        if l1 in pi.columns:
            pi[l1] *= c
    # 3. pi: geometric mean 1 over categories within each site type; kappa takes the factor
    row = pd.Series([_geometric_mean(r) for r in pi.to_numpy()], index=pi.index)
    pi = pi.div(row, axis=0)
    kappa = f.kappa.astype(float) * row.reindex(f.machines.reindex(f.kappa.index)).to_numpy()
    return Factors(omega=omega, gamma=gamma, pi=pi, kappa=kappa, products=p, machines=f.machines)
