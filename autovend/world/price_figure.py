"""The price-response figure of a world: expected daily units and gross profit against a common price multiplier.

Drawn from a `price_response.PriceResponse` alone: one line per site type, solid for the typical shelf and
dashed for the full shelf; the dotted lines in the units panel are the units proportional to attraction
(W << U), which show how much eq. (3)'s saturation flattens the response.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from autovend.png import fixed_style, save_png  # noqa: E402
from autovend.world.price_response import SHELVES, PriceResponse  # noqa: E402


@fixed_style
def price_response_figure(resp: PriceResponse, path: str | Path) -> Path:
    """Two panels (units, gross profit a day) against the multiplier; written to `path` as PNG."""
    fig, (ax_u, ax_g) = plt.subplots(1, 2, figsize=(11, 4.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    styles = dict(zip(SHELVES, ("-", "--"), strict=True))
    p = list(resp.multipliers)
    for j, site in enumerate(resp.site_types):
        c = colours[j % len(colours)]
        for i, shelf in enumerate(SHELVES):
            label = f"{site}, {shelf} shelf"
            ax_u.plot(p, resp.units[i, j], styles[shelf], color=c, label=label)
            ax_g.plot(p, resp.gross_profit[i, j], styles[shelf], color=c, label=label)
        ax_u.plot(p, resp.unsaturated_units[1, j], ":", color=c, lw=1)
    ax_u.set_xlabel("price multiplier (x reference)")
    ax_u.set_ylabel("expected units a day")
    ax_u.set_title("units (dotted: proportional to attraction, full shelf)", fontsize=9)
    ax_g.axhline(0.0, color="grey", lw=0.8)
    ax_g.set_xlabel("price multiplier (x reference)")
    ax_g.set_ylabel(f"expected gross profit a day ({resp.currency})")
    ax_g.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return save_png(fig, path)
