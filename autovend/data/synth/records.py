"""The operator's daily sales as order lines and its visits as inventory counts, as an export would."""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.data.synth.config import OperatorSettings

# Diurnal purchase profiles by site type: (hour of peak, weight, spread in hours) mixtures over 07:00-24:00.
DIURNAL: dict[str, tuple[tuple[float, float, float], ...]] = {
    "worksite": ((8.0, 0.25, 0.8), (12.0, 0.35, 1.0), (15.5, 0.15, 1.5), (18.5, 0.25, 1.5)),
    "campus": ((10.0, 0.2, 1.5), (13.0, 0.25, 1.5), (17.5, 0.25, 1.5), (21.5, 0.3, 1.2)),
    "residential": ((9.0, 0.15, 1.5), (13.0, 0.15, 2.0), (19.5, 0.4, 1.5), (22.0, 0.3, 1.0)),
    "commercial": ((12.0, 0.2, 1.5), (15.0, 0.3, 2.0), (19.0, 0.35, 2.0), (22.0, 0.15, 1.0)),
    "office": ((9.5, 0.25, 0.8), (12.5, 0.35, 1.0), (15.5, 0.3, 1.5), (18.5, 0.1, 1.0)),
    "public": ((11.0, 0.3, 2.0), (15.0, 0.4, 2.0), (19.0, 0.3, 2.0)),
    "unknown": ((12.0, 0.5, 3.0), (18.0, 0.5, 3.0)),
}
SALES_OPEN_H = 7.0  # no sale before 07:00; visits happen before that
VISIT_WINDOW_H = (5.5, 6.9)


def _seconds_of_day(rng: np.random.Generator, site: np.ndarray) -> np.ndarray:
    """Draw a time of day (seconds) for each event from its site type's diurnal mixture."""
    out = np.empty(len(site))
    for s in np.unique(site):
        idx = np.flatnonzero(site == s)
        comp = np.array(DIURNAL.get(s, DIURNAL["unknown"]))
        pick = rng.choice(len(comp), size=len(idx), p=comp[:, 1] / comp[:, 1].sum())
        h = rng.normal(comp[pick, 0], comp[pick, 2])
        h = np.where((h < SALES_OPEN_H) | (h >= 24.0), rng.uniform(SALES_OPEN_H, 24.0, len(idx)), h)
        out[idx] = np.minimum(np.floor(h * 3600.0), 24 * 3600 - 1)
    return out


def order_lines(
    sales: pd.DataFrame,
    machines: pd.DataFrame,
    catalog: pd.DataFrame,
    dates: pd.DatetimeIndex,
    op: OperatorSettings,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Order lines (order_id, machine_id, sku_id, ts, qty, unit_price, status) from daily sales.

    Each sold unit is a purchase; units are shuffled within a machine-day and grouped into customer
    transactions (several lines share an order_id); some lines carry two units of one product.
    Refunded (dispensing failed) and failed (payment failed) lines are added on top: they are not
    sales and do not take units off the shelf.
    """
    s = sales[sales["units"] > 0]
    units = s["units"].to_numpy()
    # pair units into qty-2 lines
    pairs = rng.binomial(units // 2, op.qty2_share)
    singles = units - 2 * pairs
    n_ev = pairs + singles
    row = np.repeat(np.arange(len(s)), n_ev)
    first = np.repeat(np.cumsum(n_ev) - n_ev, n_ev)
    pos = np.arange(len(row)) - first
    qty = np.where(pos < np.repeat(pairs, n_ev), 2, 1)
    m = s["m"].to_numpy()[row]
    day = s["day"].to_numpy()[row]
    k = s["k"].to_numpy()[row]
    price = s["price"].to_numpy()[row]
    # shuffle within machine-day, then group into transactions
    order = np.lexsort((rng.random(len(row)), day, m))
    m, day, k, price, qty = m[order], day[order], k[order], price[order], qty[order]
    new_group = np.ones(len(m), dtype=bool)
    new_group[1:] = (m[1:] != m[:-1]) | (day[1:] != day[:-1])
    p_start = 1.0 / (1.0 + op.multi_line_order_share * 1.2)
    starts = new_group | (rng.random(len(m)) < p_start)
    txn = np.cumsum(starts) - 1
    site = machines["site_type"].to_numpy()
    t_txn = _seconds_of_day(rng, site[m[starts]])
    secs = t_txn[txn]
    lines = pd.DataFrame({"m": m, "day": day, "k": k, "qty": qty, "unit_price": price, "txn": txn, "secs": secs})
    # a product bought twice in one transaction is one line with the summed quantity
    lines = lines.groupby(["txn", "m", "day", "k", "unit_price", "secs"], as_index=False, sort=False)["qty"].sum()
    lines["status"] = "completed"
    # refunded and failed lines: separate attempts, no stock taken
    extras = []
    for status, share in (("refunded", op.refunded_share), ("failed", op.failed_share)):
        n = int(round(share * len(lines)))
        if n:
            pick = rng.choice(len(lines), size=n, replace=False)
            e = lines.iloc[pick][["m", "day", "k", "unit_price"]].copy()
            e["qty"] = 1
            e["secs"] = _seconds_of_day(rng, site[e["m"].to_numpy()])
            e["status"] = status
            extras.append(e)
    if extras:
        ext = pd.concat(extras, ignore_index=True)
        ext["txn"] = lines["txn"].max() + 1 + np.arange(len(ext))
        lines = pd.concat([lines, ext], ignore_index=True)
    lines = lines.sort_values(["day", "secs", "m", "txn", "k"], kind="stable").reset_index(drop=True)
    txn_codes, _ = pd.factorize(lines["txn"], sort=False)
    ts = dates[lines["day"].to_numpy()] + pd.to_timedelta(lines["secs"].to_numpy(), unit="s")
    return pd.DataFrame(
        {
            "order_id": [f"T{c + 1:07d}" for c in txn_codes],
            "machine_id": machines["machine_id"].to_numpy()[lines["m"].to_numpy()],
            "sku_id": catalog["sku_id"].to_numpy()[lines["k"].to_numpy()],
            "ts": ts.strftime("%Y-%m-%dT%H:%M:%S"),
            "qty": lines["qty"].to_numpy().astype(np.int64),
            "unit_price": np.round(lines["unit_price"].to_numpy(), 2),
            "status": lines["status"].to_numpy(),
        }
    )


def inventory_counts(
    counts: pd.DataFrame,
    machines: pd.DataFrame,
    catalog: pd.DataFrame,
    dates: pd.DatetimeIndex,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Inventory rows (machine_id, ts, sku_id, shelf_qty): one timestamp per visit, before opening hours."""
    visit_key = counts["m"].to_numpy() * 100_000 + counts["day"].to_numpy()
    keys, inv = np.unique(visit_key, return_inverse=True)
    secs = np.floor(rng.uniform(*VISIT_WINDOW_H, len(keys)) * 3600.0)
    ts = dates[counts["day"].to_numpy()] + pd.to_timedelta(secs[inv], unit="s")
    out = pd.DataFrame(
        {
            "machine_id": machines["machine_id"].to_numpy()[counts["m"].to_numpy()],
            "ts": ts.strftime("%Y-%m-%dT%H:%M:%S"),
            "sku_id": catalog["sku_id"].to_numpy()[counts["k"].to_numpy()],
            "shelf_qty": counts["qty"].to_numpy().astype(np.int64),
        }
    )
    return out.sort_values(["ts", "machine_id", "sku_id"], kind="stable").reset_index(drop=True)
