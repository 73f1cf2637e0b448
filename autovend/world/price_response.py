"""Price response of a world's machines: expected daily units and gross profit against one common price multiplier.

Every product of a machine is priced at the same multiple p of its reference price (0.5x to 2.0x in steps
of 0.1, the benchmark's price band), under a neutral environment (E = 1) and no shock (xi = 1), and the
world's demand model (`DemandModel.expected`, eq. 2-3) gives the expected units of each product. Gross
profit a day is the sum over products of units x (p x reference price - unit cost); visit fees and rent
are left out, and prices are not rounded to cents as the simulator rounds them.

Two shelves per machine, both built from its reference shelf (products ranked by base attraction b,
phi units each, `kernel.reference_shelf`):
- full: the reference shelf itself, F = 1 (the best shelf an operator can show at reference prices);
- typical: the reference shelf of a machine `typical_fill` as large: its best products, phi units each,
  until typical_fill x capacity units, so F = typical_fill. The default, TYPICAL_FILL = 0.5, is a shelf
  halfway between two services; it lies between the synthetic operator's median recorded fill (0.405,
  the calibration's `typical_fill`) and the baseline's mean shelf use on worlds/cn20 (about 0.8).

Figures are means over the machines of each site type. The saturation the figure and the README show:
units are xi U W / (U + W) with W the shelf's attraction, so where W >> U (a full shelf has W = R and
U = u R with u of a few percent) a common price rise, which scales every w by p^-eps, barely lowers units,
and gross profit keeps rising up to the top of the band. `unsaturated_units` is what units would do if
they followed attraction (W << U): the units at 1.0x times p^-eps.

Pure functions of the world; no calibration code (the calibration's typical fill is quoted, not read).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.demand.kernel import reference_shelf
from autovend.demand.model import DemandModel
from autovend.world.model import World

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MULTIPLIERS: tuple[float, ...] = tuple(round(0.5 + 0.1 * i, 1) for i in range(16))  # 0.5, 0.6, ..., 2.0
TYPICAL_FILL = 0.5
SHELVES: tuple[str, ...] = ("typical", "full")


def shelf_at_fill(b: npt.ArrayLike, capacity: float, phi: float, fill: float) -> IntArray:
    """The reference shelf cut to `fill`: products by descending b, phi units each, until round(fill x capacity)."""
    if not 0 < fill <= 1:
        raise ValueError(f"a shelf fill is in (0, 1], got {fill}")
    q, _ = reference_shelf(b, int(round(fill * capacity)), phi)
    return q


def shelves(model: DemandModel, fill: float) -> IntArray:
    """`shelf_at_fill` of every machine of `model`, shape (M, K)."""
    return np.stack(
        [shelf_at_fill(model.b[m], model.capacity[m], model.settings.phi, fill) for m in range(model.n_machines)]
    )


@dataclass(frozen=True)
class MachineResponse:
    """Per machine (rows) and multiplier (columns): expected units and gross profit a day; W/U at 1.0x."""

    units: FloatArray  # (M, P)
    gross_profit: FloatArray  # (M, P), in the world's currency
    saturation: FloatArray  # (M,) shelf attraction W over the no-purchase weight U, reference prices


def machine_response(
    model: DemandModel,
    q: npt.ArrayLike,
    ref_price: npt.ArrayLike,
    unit_cost: npt.ArrayLike,
    multipliers: tuple[float, ...] = MULTIPLIERS,
) -> MachineResponse:
    """Expected units and gross profit of shelves `q` (M, K) with every product at p x its reference price."""
    q = np.asarray(q, dtype=float)
    ref = np.asarray(ref_price, dtype=float)
    cost = np.asarray(unit_cost, dtype=float)
    units = np.zeros((model.n_machines, len(multipliers)))
    gp = np.zeros_like(units)
    for i, p in enumerate(multipliers):
        rates = model.expected(q, np.full(q.shape, float(p)))
        units[:, i] = rates.sum(axis=1)
        gp[:, i] = rates @ (p * ref - cost)
    W = model.attraction(q).sum(axis=1)
    saturation = np.divide(W, model.U, out=np.full(len(W), np.inf), where=model.U > 0)
    return MachineResponse(units=units, gross_profit=gp, saturation=saturation)


@dataclass(frozen=True)
class PriceResponse:
    """Site-type means of the price response at the typical and the full shelf (see the module docstring)."""

    multipliers: tuple[float, ...]
    site_types: tuple[str, ...]  # in order of first appearance among the machines
    n_machines: tuple[int, ...]  # machines of each site type
    elasticity: tuple[float, ...]  # price elasticity of each site type
    typical_fill: float
    currency: str
    units: FloatArray  # (shelf, site, P): SHELVES order
    gross_profit: FloatArray  # (shelf, site, P)
    unsaturated_units: FloatArray  # (shelf, site, P): units at 1.0x times p^-eps
    saturation: FloatArray  # (shelf, site): mean W/U at reference prices

    def best_multiplier(self) -> FloatArray:
        """(shelf, site): the multiplier with the highest expected gross profit (the lower one on a tie)."""
        best: FloatArray = np.asarray(self.multipliers)[np.argmax(self.gross_profit, axis=-1)]
        return best

    def table(self) -> pd.DataFrame:
        """Long form: shelf, site_type, multiplier, units, gross_profit, unsaturated_units."""
        rows = [
            (shelf, site, p, self.units[i, j, n], self.gross_profit[i, j, n], self.unsaturated_units[i, j, n])
            for i, shelf in enumerate(SHELVES)
            for j, site in enumerate(self.site_types)
            for n, p in enumerate(self.multipliers)
        ]
        return pd.DataFrame(
            rows, columns=["shelf", "site_type", "multiplier", "units", "gross_profit", "unsaturated_units"]
        )


def price_response(
    world: World, typical_fill: float = TYPICAL_FILL, multipliers: tuple[float, ...] = MULTIPLIERS
) -> PriceResponse:
    """The price response of `world` per site type at the typical and the full shelf (`multipliers` hold 1.0)."""
    return site_response(
        world.demand_model,
        world.machines["site_type"].astype(str).to_numpy(),
        world.catalog["ref_price"].to_numpy(dtype=float),
        world.catalog["unit_cost"].to_numpy(dtype=float),
        world.economics.currency,
        typical_fill,
        multipliers,
    )


def site_response(
    model: DemandModel,
    site_of: npt.ArrayLike,
    ref_price: npt.ArrayLike,
    unit_cost: npt.ArrayLike,
    currency: str,
    typical_fill: float = TYPICAL_FILL,
    multipliers: tuple[float, ...] = MULTIPLIERS,
) -> PriceResponse:
    """`price_response` of any demand model: machines labelled by `site_of`, products priced from `ref_price`."""
    if 1.0 not in multipliers:
        raise ValueError(f"the multipliers must include 1.0 (the reference prices), got {multipliers}")
    site_of = np.asarray(site_of).astype(str)
    ref = np.asarray(ref_price, dtype=float)
    cost = np.asarray(unit_cost, dtype=float)
    sites = tuple(dict.fromkeys(site_of.tolist()))
    powers = np.power(np.asarray(multipliers, dtype=float)[None, :], -model.elasticity[:, None])  # (M, P)
    units, gp, unsat, sat = [], [], [], []
    for fill in (typical_fill, 1.0):
        r = machine_response(model, shelves(model, fill), ref, cost, multipliers)
        free = r.units[:, [multipliers.index(1.0)]] * powers  # units following attraction from 1.0x
        means = [(site_of == s) for s in sites]
        units.append([r.units[w].mean(axis=0) for w in means])
        gp.append([r.gross_profit[w].mean(axis=0) for w in means])
        unsat.append([free[w].mean(axis=0) for w in means])
        sat.append([float(r.saturation[w].mean()) for w in means])
    first = [int(np.flatnonzero(site_of == s)[0]) for s in sites]
    return PriceResponse(
        multipliers=tuple(float(p) for p in multipliers),
        site_types=sites,
        n_machines=tuple(int((site_of == s).sum()) for s in sites),
        elasticity=tuple(float(model.elasticity[i]) for i in first),
        typical_fill=float(typical_fill),
        currency=currency,
        units=np.asarray(units),
        gross_profit=np.asarray(gp),
        unsaturated_units=np.asarray(unsat),
        saturation=np.asarray(sat),
    )


def _columns(resp: PriceResponse) -> tuple[str, str]:
    head = "| multiplier | " + " | ".join(f"{s} {shelf}" for s in resp.site_types for shelf in SHELVES) + " |"
    rule = "|---|" + "---|" * (2 * len(resp.site_types))
    return head, rule


def _rows(resp: PriceResponse, values: FloatArray, spec: str) -> list[str]:
    return [
        f"| {p:.1f}x | "
        + " | ".join(format(values[i, j, n], spec) for j in range(len(resp.site_types)) for i in range(len(SHELVES)))
        + " |"
        for n, p in enumerate(resp.multipliers)
    ]


def readme_lines(resp: PriceResponse) -> list[str]:
    """The README's price-response section (Markdown lines, no trailing blank line)."""
    head, rule = _columns(resp)
    best = resp.best_multiplier()
    at = resp.multipliers.index(1.0)
    top = len(resp.multipliers) - 1
    drop = 1.0 - resp.units[:, :, top] / resp.units[:, :, at]
    free = 1.0 - resp.unsaturated_units[:, :, top] / resp.unsaturated_units[:, :, at]
    sites = ", ".join(
        f"{s} ({n}, elasticity {e:g})"
        for s, n, e in zip(resp.site_types, resp.n_machines, resp.elasticity, strict=True)
    )
    lines = [
        "## Price response",
        "",
        "Expected units and gross profit a day of one machine when every product is priced at the same multiple "
        "of its reference price, from this world's demand model (eq. 2-3) under a neutral environment and no "
        f"shock (xi = 1), mean over the machines of each site type: {sites}. Full shelf: the machine's reference "
        "shelf (products by base attraction, phi units each, F = 1). Typical shelf: its best products, phi units "
        f"each, up to F = {resp.typical_fill:g} of capacity. Gross profit is units x (price - unit cost), before "
        "visit fees and rent (`autovend.world.price_response`; the figure: "
        "`autovend world price-response WORLD -o DIR`).",
        "",
        "Shelf attraction over the no-purchase weight, W/U at reference prices (units are xi U W / (U + W): "
        "where W/U is large, a common price rise barely lowers units): "
        + "; ".join(
            f"{s} {resp.saturation[0, j]:.1f} typical, {resp.saturation[1, j]:.1f} full"
            for j, s in enumerate(resp.site_types)
        )
        + ".",
        "",
        "Expected units a day:",
        "",
        head,
        rule,
        *_rows(resp, resp.units, ".2f"),
        "",
        f"Expected gross profit a day ({resp.currency}):",
        "",
        head,
        rule,
        *_rows(resp, resp.gross_profit, ".2f"),
        "",
        "Multiplier with the highest expected gross profit: "
        + "; ".join(f"{s} {best[0, j]:.1f}x typical, {best[1, j]:.1f}x full" for j, s in enumerate(resp.site_types))
        + ".",
        "",
        f"From 1.0x to {resp.multipliers[top]:.1f}x units fall by "
        + "; ".join(f"{s} {drop[0, j]:.0%} typical, {drop[1, j]:.0%} full" for j, s in enumerate(resp.site_types))
        + "; units proportional to attraction (W << U) would fall by "
        + ", ".join(f"{s} {free[1, j]:.0%}" for j, s in enumerate(resp.site_types))
        + ".",
    ]
    return lines


def units_lines(resp: PriceResponse, shown: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0)) -> list[str]:
    """A compact units-only table (a calibration has no unit costs), per site type and shelf.

    Columns: W/U, units a day at the `shown` multipliers, and revenue at the top multiplier over revenue at 1.0x.
    """
    idx = [resp.multipliers.index(p) for p in shown]
    at, top = resp.multipliers.index(1.0), len(resp.multipliers) - 1
    head = "| site type | shelf | W/U | " + " | ".join(f"units {p:.1f}x" for p in shown) + " | revenue 2.0x / 1.0x |"
    lines = [head, "|---|---|---|" + "---|" * (len(shown) + 1)]
    for j, site in enumerate(resp.site_types):
        for i, shelf in enumerate(SHELVES):
            u = resp.units[i, j]
            ratio = resp.multipliers[top] * u[top] / u[at]
            lines.append(
                f"| {site} | {shelf} | {resp.saturation[i, j]:.1f} | "
                + " | ".join(f"{u[n]:.2f}" for n in idx)
                + f" | {ratio:.2f} |"
            )
    return lines
