"""Fixture helper: a small source folder that follows the raw-records contract, written into a tmp dir.

`source_tables()` returns the tables as text frames (what a CSV holds) so a test can break one cell
and call `write_source`. The numbers are small enough to check by hand:

- machines: M01 worksite, M02 campus, M03 residential (M03 has no inventory rows);
- products: S1, S2 (drinks: water, tea), S3 (snacks: chips);
- orders: 8 lines, 1 refunded, 1 failed, status blank on 2 (= completed); 6 completed lines with
  qty 1, 2, 1, 3, 1, 1 -> 9 units sold; ts 2025-03-03T08:15:00 .. 2025-03-05T18:40:00;
- the last two order lines are exact duplicates (1 duplicate row).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

META: dict[str, str] = {
    "name": "tiny-op-2025",
    "currency": "CNY",
    "timezone": "Asia/Shanghai",
    "country": "CN",
    "description": "hand-made test source",
}


def source_tables() -> dict[str, pd.DataFrame]:
    """The six tables of the valid test source, every cell as text."""
    machines = pd.DataFrame(
        {
            "machine_id": ["M01", "M02", "M03"],
            "site_type": ["worksite", "campus", "residential"],
            "location": ["worksite/canteen", "", "residential/lobby"],
            "capacity": ["300", "", "250"],
        }
    )
    products = pd.DataFrame(
        {
            "sku_id": ["S1", "S2", "S3"],
            "name": ["Water 550ml", "Green tea", ""],
            "category_l1": ["drinks", "drinks", "snacks"],
            "category_l2": ["bottled_water", "tea", "chips"],
            "ref_price": ["2.00", "4.50", "6"],
            "unit_cost": ["0.80", "", "3.1"],
            "shelf_life_days": ["365", "270", ""],
        }
    )
    orders = pd.DataFrame(
        {
            "order_id": ["o1", "o1", "o2", "o3", "o4", "o5", "o6", "o6"],
            "machine_id": ["M01", "M01", "M02", "M03", "M01", "M02", "M03", "M03"],
            "sku_id": ["S1", "S2", "S3", "S1", "S2", "S1", "S3", "S3"],
            "ts": [
                "2025-03-03T08:15:00",
                "2025-03-03T08:15:00",
                "2025-03-03T12:01:30",
                "2025-03-04T09:00:00",
                "2025-03-04T10:20:00",
                "2025-03-04T17:45:10",
                "2025-03-05T18:40:00",
                "2025-03-05T18:40:00",
            ],
            "qty": ["1", "2", "1", "1", "3", "2", "1", "1"],
            "unit_price": ["2.00", "4.50", "6.00", "2.00", "4.00", "2.00", "6.00", "6.00"],
            "status": ["completed", "completed", "", "refunded", "completed", "failed", "", ""],
        }
    )
    inventory = pd.DataFrame(
        {
            "machine_id": ["M01", "M01", "M02"],
            "ts": ["2025-03-03T07:00:00", "2025-03-03T07:00:00", "2025-03-03T07:30:00"],
            "sku_id": ["S1", "S2", "S3"],
            "shelf_qty": ["20", "0", "15"],
        }
    )
    weather = pd.DataFrame(
        {
            "date": ["2025-03-03", "2025-03-04", "2025-03-05"],
            "t_max_c": ["12.5", "14", "-1.5"],
            "precip_mm": ["0", "3.2", "0.0"],
        }
    )
    calendar = pd.DataFrame(
        {
            "date": ["2025-03-03", "2025-03-04", "2025-03-05"],
            "is_workday": ["true", "true", "false"],
            "holiday_name": ["", "", "Test day"],
        }
    )
    return {
        "machines": machines,
        "products": products,
        "orders": orders,
        "inventory": inventory,
        "weather": weather,
        "calendar": calendar,
    }


def daily_tables(start: str, days: int, lines_per_day: int) -> dict[str, pd.DataFrame]:
    """Orders, inventory and weather over `days` days from `start`, every cell as text, to replace the tiny ones.

    Each day has `lines_per_day` completed lines at 10:00, qty 1, cycling over machines M01..M03 and
    products S1..S3 at their ref_price; weather covers every day; inventory counts M01's S1 on day 1.
    """
    dates = pd.date_range(start, periods=days, freq="D").strftime("%Y-%m-%d")
    n = days * lines_per_day
    refs = {"S1": "2.00", "S2": "4.50", "S3": "6"}
    skus = [f"S{i % 3 + 1}" for i in range(n)]
    orders = pd.DataFrame(
        {
            "order_id": [f"o{i}" for i in range(n)],
            "machine_id": [f"M0{(i // 3) % 3 + 1}" for i in range(n)],
            "sku_id": skus,
            "ts": [f"{d}T10:00:00" for d in dates for _ in range(lines_per_day)],
            "qty": "1",
            "unit_price": [refs[k] for k in skus],
            "status": "",
        }
    )
    inventory = pd.DataFrame(
        {"machine_id": ["M01"], "ts": [f"{dates[0]}T07:00:00"], "sku_id": ["S1"], "shelf_qty": ["20"]}
    )
    weather = pd.DataFrame({"date": list(dates), "t_max_c": "20", "precip_mm": "0"})
    return {"orders": orders, "inventory": inventory, "weather": weather, "calendar": None}


def write_source(
    folder: Path,
    tables: dict[str, pd.DataFrame | None] | None = None,
    meta: dict[str, object] | None = None,
    fmt: str = "csv",
) -> Path:
    """Write a source into `folder` (created) and return it.

    `tables` overrides or, with None as value, drops tables of `source_tables()`; `meta` replaces
    source.yaml's mapping. fmt is 'csv' or 'parquet'; Parquet tables are written with typed columns
    (numbers, timestamps, booleans) as an operator's export would hold them.
    """
    folder.mkdir(parents=True, exist_ok=True)
    all_tables: dict[str, pd.DataFrame | None] = {**source_tables(), **(tables or {})}
    (folder / "source.yaml").write_text(yaml.safe_dump(meta if meta is not None else META, sort_keys=False))
    for stem, frame in all_tables.items():
        if frame is None:
            continue
        if fmt == "csv":
            frame.to_csv(folder / f"{stem}.csv", index=False)
        else:
            typed_frame(frame).to_parquet(folder / f"{stem}.parquet", index=False)
    return folder


def typed_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns of the test tables turned into the types a Parquet export would store."""
    out = frame.copy()
    for name in out.columns:
        text = out[name].replace("", None)
        if name in {"capacity", "shelf_life_days", "qty", "shelf_qty"}:
            out[name] = pd.to_numeric(text).astype("Int64")
        elif name in {"ref_price", "unit_cost", "unit_price", "t_max_c", "precip_mm"}:
            out[name] = pd.to_numeric(text)
        elif name in {"ts", "date"}:
            out[name] = pd.to_datetime(text)
        elif name == "is_workday":
            out[name] = text == "true"
    return out
