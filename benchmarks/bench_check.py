"""Time `check_source` (and `load_source`) on a synthetic source with 1,000,000 order lines.

Run on demand: `.venv/bin/python benchmarks/bench_check.py [--lines N] [--format csv|parquet] [--broken]`.
The source is generated with vectorised numpy in a temp dir (20 machines, 120 products, inventory
counts every third day, 180 days of weather and calendar). `--broken` sets qty to 0 on every tenth
line and points every hundredth line at an unknown machine, to time the grouped error path.
The target is under 15 s for 1,000,000 lines on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from autovend.data.check import check_source
from autovend.data.load import load_source

N_MACHINES = 20
N_PRODUCTS = 120
N_DAYS = 180
START = np.datetime64("2025-01-01T00:00:00")


def _ids(prefix: str, idx: np.ndarray, width: int) -> np.ndarray:
    labels = np.array([f"{prefix}{i:0{width}d}" for i in range(int(idx.max()) + 1)], dtype=object)
    return labels[idx]


def build_source(folder: Path, n_lines: int, fmt: str, broken: bool, seed: int = 7) -> Path:
    """Write a contract source with `n_lines` order lines into `folder`."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "name": "bench-op",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "country": "CN",
        "description": "synthetic benchmark source",
    }
    (folder / "source.yaml").write_text(yaml.safe_dump(meta))
    sites = np.array(["worksite", "campus", "residential", "commercial", "office", "public"])
    site = sites[np.arange(N_MACHINES) % len(sites)]
    machines = pd.DataFrame(
        {
            "machine_id": _ids("M", np.arange(N_MACHINES), 3),
            "site_type": site,
            "location": np.char.add(site.astype(str), "/spot"),
            "capacity": rng.integers(200, 400, N_MACHINES),
        }
    )
    cat1 = np.array(["drinks", "snacks", "food"])[np.arange(N_PRODUCTS) % 3]
    products = pd.DataFrame(
        {
            "sku_id": _ids("S", np.arange(N_PRODUCTS), 4),
            "name": _ids("Product ", np.arange(N_PRODUCTS), 3),
            "category_l1": cat1,
            "category_l2": np.char.add(cat1.astype(str), (np.arange(N_PRODUCTS) % 7).astype(str)),
            "ref_price": np.round(rng.uniform(2, 12, N_PRODUCTS), 1),
            "unit_cost": np.round(rng.uniform(0.5, 1.5, N_PRODUCTS), 2),
            "shelf_life_days": rng.integers(30, 365, N_PRODUCTS),
        }
    )
    seconds = np.sort(rng.integers(0, N_DAYS * 86400, n_lines))
    ts = START + seconds.astype("timedelta64[s]")
    machine = rng.integers(0, N_MACHINES, n_lines)
    qty = rng.integers(1, 4, n_lines)
    if broken:
        qty[::10] = 0
    machine_ids = _ids("M", machine, 3)
    if broken:
        machine_ids[::100] = "M999"
    status = rng.choice(np.array(["", "completed", "refunded", "failed"]), n_lines, p=[0.5, 0.47, 0.02, 0.01])
    sku = rng.integers(0, N_PRODUCTS, n_lines)
    # charged prices near the reference price (0.8-1.6x), so the source passes the plausibility checks
    unit_price = np.round(products["ref_price"].to_numpy()[sku] * rng.uniform(0.8, 1.6, n_lines), 1)
    orders = pd.DataFrame(
        {
            "order_id": np.char.add("o", np.arange(n_lines).astype(str)),
            "machine_id": machine_ids,
            "sku_id": _ids("S", sku, 4),
            "ts": np.datetime_as_string(ts, unit="s") if fmt == "csv" else ts,
            "qty": qty,
            "unit_price": unit_price,
            "status": status,
        }
    )
    visits = np.arange(0, N_DAYS, 3)
    inv_m, inv_d, inv_s = (a.ravel() for a in np.meshgrid(np.arange(N_MACHINES), visits, np.arange(0, N_PRODUCTS, 4)))
    inv_ts = START + (inv_d * 86400 + 9 * 3600).astype("timedelta64[s]")
    inventory = pd.DataFrame(
        {
            "machine_id": _ids("M", inv_m, 3),
            "ts": np.datetime_as_string(inv_ts, unit="s") if fmt == "csv" else inv_ts,
            "sku_id": _ids("S", inv_s, 4),
            "shelf_qty": rng.integers(0, 20, inv_m.size),
        }
    )
    days = START.astype("datetime64[D]") + np.arange(N_DAYS)
    weather = pd.DataFrame(
        {
            "date": np.datetime_as_string(days) if fmt == "csv" else days.astype("datetime64[ns]"),
            "t_max_c": np.round(rng.normal(18, 6, N_DAYS), 1),
            "precip_mm": np.round(rng.exponential(3, N_DAYS), 1),
        }
    )
    workday = (days.astype("datetime64[D]").view("int64") + 3) % 7 < 5
    calendar = pd.DataFrame(
        {
            "date": weather["date"],
            "is_workday": np.where(workday, "true", "false") if fmt == "csv" else workday,
            "holiday_name": "",
        }
    )
    tables = {
        "machines": machines,
        "products": products,
        "orders": orders,
        "inventory": inventory,
        "weather": weather,
        "calendar": calendar,
    }
    for stem, frame in tables.items():
        if fmt == "csv":
            frame.to_csv(folder / f"{stem}.csv", index=False)
        else:
            frame.to_parquet(folder / f"{stem}.parquet", index=False)
    return folder


def main() -> None:
    """Build the source, time check_source and load_source, print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--format", choices=["csv", "parquet"], default="csv")
    parser.add_argument("--broken", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        folder = build_source(Path(tmp) / "src", args.lines, args.format, args.broken)
        size = sum(f.stat().st_size for f in folder.iterdir())
        built = time.perf_counter() - t0
        print(f"built {args.lines:,} order lines ({args.format}, {size / 1e6:.1f} MB) in {built:.1f} s")
        timings = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            report = check_source(folder)
            timings.append(time.perf_counter() - t0)
        print(
            f"check_source: best {min(timings):.2f} s, worst {max(timings):.2f} s over {args.repeat} runs; "
            f"ok={report.ok}, errors={report.n_errors:,} in {len(report.errors)} groups"
        )
        if not report.ok:
            print(report.format(5))
        else:
            t0 = time.perf_counter()
            load_source(folder)
            print(f"load_source: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
