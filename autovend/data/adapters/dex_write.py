"""A source's order records as EVA-DTS audit series: what a machine would have reported at each service visit.

    dex_series(source_dir, every_days=7)  -> {"MACHINE/YYYYMMDD-HHMM.dex": text, ...}, products table

For each machine, an audit is read when it is initialised (midnight of its first sale's day, every counter 0), then
every `every_days` days at 09:00 until after its last sale: per selection (one per product the machine has sold,
numbered in order of first sale), the paid vends and their value since initialisation up to the read, and the price
of the last sale before it (PA1/PA2, after the standard's public field descriptions; money in minor units with ID4's
decimal places). Used by
`autovend synth --dex DIR` (the embedded operator's records as audits) and by the round-trip tests.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd

from autovend.data.adapters.dex import NUMERIC_OF
from autovend.data.load import load_source
from autovend.errors import AdaptError

READ_HOUR = 9


def audit_text(
    machine: str, read_at: dt.datetime, n_read: int, currency: str, rows: list[tuple[str, int, str, int, int]]
) -> str:
    """One audit: DXS, ID1, ID4, EA3, PA1/PA2 per (selection, price, product, vends, value), SE, DXE (CR LF)."""
    numeric = NUMERIC_OF.get(currency)
    if numeric is None:
        raise AdaptError(f"no ISO 4217 numeric code known for {currency}; known: {', '.join(sorted(NUMERIC_OF))}")
    lines = ["DXS*AUTOVEND01*VA*V1/1*1", "ST*001*0001", f"ID1*{machine}*AUTOVEND-SIM*0***", f"ID4*2*{numeric}"]
    lines.append(f"EA3*{n_read}*{read_at:%y%m%d}*{read_at:%H%M}")
    lines.append(f"VA1*{sum(r[4] for r in rows)}*{sum(r[3] for r in rows)}")
    for sel, price, product, vends, value in rows:
        lines += [f"PA1*{sel}*{price}*{product}", f"PA2*{vends}*{value}"]
    lines += [f"SE*{len(lines) - 1}*0001", "DXE*1*1"]
    return "\r\n".join(lines) + "\r\n"


def dex_series(source_dir: str | Path, every_days: int = 7) -> tuple[dict[str, str], pd.DataFrame]:
    """The audit files of a source's completed order lines (see the module docstring) and its products table."""
    src = load_source(source_dir)
    orders = src.orders[src.orders["status"] == "completed"].copy()
    orders["when"] = pd.to_datetime(orders["ts"])
    orders["minor"] = (orders["unit_price"] * 100).round().astype("int64") * orders["qty"].astype("int64")
    files: dict[str, str] = {}
    for machine, mo in orders.sort_values("when", kind="stable").groupby("machine_id", sort=True):
        first = mo["when"].min().normalize()
        end = mo["when"].max().normalize() + pd.Timedelta(days=every_days)
        visits = pd.date_range(first + pd.Timedelta(days=every_days, hours=READ_HOUR),
                               end + pd.Timedelta(hours=READ_HOUR), freq=f"{every_days}D")  # fmt: skip
        reads = [first, *visits]  # the machine's initialisation (all counters 0), then the service visits
        selection = {sku: f"{i + 1:03d}" for i, sku in enumerate(dict.fromkeys(mo["sku_id"]))}
        for n, read in enumerate(reads, start=1):
            done = mo[mo["when"] < read]
            rows = []
            for sku, sel in selection.items():
                mine = done[done["sku_id"] == sku]
                if mine.empty:
                    continue
                price = int(round(float(mine["unit_price"].iloc[-1]) * 100))
                rows.append((sel, price, str(sku), int(mine["qty"].sum()), int(mine["minor"].sum())))
            files[f"{machine}/{read:%Y%m%d-%H%M}.dex"] = audit_text(str(machine), read.to_pydatetime(), n,
                                                                    src.meta.currency, rows)  # fmt: skip
    products = src.products[["sku_id", "name", "category_l1", "category_l2", "ref_price"]].copy()
    return files, products
