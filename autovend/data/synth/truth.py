"""The known truth of the synthetic operator: eq. (4) factors, no-purchase weights, shock parameters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.data.synth.config import SynthConfig
from autovend.demand import kernel
from autovend.demand.settings import DemandSettings


@dataclass(frozen=True)
class Truth:
    """Truth arrays in machine order x catalog order (out-of-scope columns of b are 0)."""

    b_hat: np.ndarray  # (M, K) pi * gamma * omega, i.e. b with kappa = 1
    kappa: np.ndarray  # (M,)
    R_hat: np.ndarray  # (M,) reference-shelf attraction of b_hat (kept catalog)
    u: float
    pi: pd.DataFrame  # site_type x category_l1 (kept categories), canonical
    gamma: pd.Series  # by category_l2 (kept), canonical

    @property
    def b(self) -> np.ndarray:
        """b_{m,k} = kappa_m * b_hat_{m,k}."""
        return self.kappa[:, None] * self.b_hat

    @property
    def R(self) -> np.ndarray:
        """Reference-shelf attraction R_m = kappa_m * R_hat_m."""
        return self.kappa * self.R_hat

    @property
    def U(self) -> np.ndarray:
        """No-purchase weights U_m = u * R_m."""
        return self.u * self.R


def build_truth(config: SynthConfig, settings: DemandSettings, catalog: pd.DataFrame, machines: pd.DataFrame) -> Truth:
    """Factors of eq. (4) in canonical form (see autovend.calibration.normalise), kappa = 1 for now."""
    kept = catalog["kept"].to_numpy()
    cats = sorted(catalog.loc[kept, "category_l1"].unique())
    pi = pd.DataFrame(
        {c: [config.truth.site_preference[s][c] for s in config.truth.site_preference] for c in cats},
        index=list(config.truth.site_preference),
    )
    gamma = catalog.loc[kept].drop_duplicates("category_l2").set_index("category_l2")["gamma"].astype(float)
    l1_of = catalog.loc[kept].drop_duplicates("category_l2").set_index("category_l2")["category_l1"]
    # canonical: gamma geometric mean 1 per category (pi column takes it), pi geometric mean 1 per site
    for l1 in cats:
        subs = l1_of.index[l1_of == l1]
        c = float(np.exp(np.log(gamma.loc[subs]).mean()))
        gamma.loc[subs] /= c
        pi[l1] *= c
    pi = pi.div(np.exp(np.log(pi).mean(axis=1)), axis=0)
    site = machines["site_type"].to_numpy()
    pi_mk = pi.reindex(index=site, columns=catalog["category_l1"]).fillna(0.0).to_numpy()
    g_k = gamma.reindex(catalog["category_l2"]).fillna(0.0).to_numpy()
    omega = catalog["omega"].to_numpy(dtype=float)
    b_hat = pi_mk * (g_k * omega)[None, :] * kept[None, :]
    _, R_hat = kernel.reference_shelf(b_hat[:, kept], config.capacity, settings.phi)
    return Truth(
        b_hat=b_hat,
        kappa=np.ones(len(machines)),
        R_hat=R_hat,
        u=config.truth.u,
        pi=pi,
        gamma=gamma,
    )


def with_kappa(truth: Truth, kappa: np.ndarray) -> Truth:
    """The same truth with other machine scales."""
    return Truth(
        b_hat=truth.b_hat,
        kappa=np.asarray(kappa, float),
        R_hat=truth.R_hat,
        u=truth.u,
        pi=truth.pi,
        gamma=truth.gamma,
    )
