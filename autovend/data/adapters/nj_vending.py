"""Adapter from the public New Jersey vending export (Kaggle "Vending Machine Sales", 2022) to a source.

The export has one row per order line with 18 columns (see ``../shared/data/raw_public/README.md``). The
adapter maps it onto the raw-records contract (``../shared/spec/raw-records.md``): ``machines.csv``,
``products.csv``, ``orders.csv`` and ``source.yaml``. It has no inventory, weather or calendar tables.

Mappings (raw values are compared after trimming blanks, ignoring case):

- ``Location`` to ``site_type``: see :data:`LOCATION_SITE_TYPES`; any other value becomes ``unknown``.
- ``Category`` to ``(category_l1, category_l2)``: see :data:`CATEGORY_LEVELS`; blank or any other value
  becomes ``("unknown", "unknown")``. A product takes the most frequent non-blank category of its rows.
- ``Status`` to ``status``: see :data:`STATUS_MAP`; any other value (blank included) drops the row.

Each raw row is either written as one order line or dropped for exactly one reason (the first that applies,
in the order of :data:`DROP_REASONS`). Line numbers count the header as line 1, so the first data row is
line 2 (the export has no line breaks inside cells).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from autovend.data.contract import PRODUCTS
from autovend.errors import AdaptError
from autovend.io import OutputKind, check_output_dir, output_dir

SKU_PREFIX = "nj-"

#: Raw columns the adapter reads; the others (RCoil, MPrice, LineTotal, ...) are ignored.
RAW_COLUMNS: tuple[str, ...] = (
    "Status",
    "Device ID",
    "Location",
    "Machine",
    "Product",
    "Category",
    "Transaction",
    "TransDate",
    "Type",
    "RCoil",
    "RPrice",
    "RQty",
)

#: Every ``Location`` in the 2022 export. Guttenplan's is the offices of a company; Earle Asphalt a plant.
LOCATION_SITE_TYPES: Mapping[str, str] = {
    "Brunswick Sq Mall": "commercial",
    "EB Public Library": "public",
    "GuttenPlans": "office",
    "Earle Asphalt": "worksite",
}

#: ``Category`` to (category_l1, category_l2). Food items in this export are packaged snacks.
CATEGORY_LEVELS: Mapping[str, tuple[str, str]] = {
    "Food": ("snacks", "food"),
    "Carbonated": ("drinks", "carbonated"),
    "Non Carbonated": ("drinks", "non_carbonated"),
    "Water": ("drinks", "water"),
}
UNKNOWN_CATEGORY: tuple[str, str] = ("unknown", "unknown")

#: ``Status`` to the contract's status. The 2022 export has only Processed and Unlinked. "Unlinked" is a
#: processed payment whose coil was not linked to a product in the machine's planogram: the sale happened
#: (the export's 3 such rows have no product name, so they are dropped for that reason anyway). The other
#: keys are the usual names of refunds and failed payments in vending telemetry exports.
STATUS_MAP: Mapping[str, str] = {
    "Processed": "completed",
    "Unlinked": "completed",
    "Refunded": "refunded",
    "Refund": "refunded",
    "Declined": "failed",
    "Failed": "failed",
    "Voided": "failed",
    "Void": "failed",
    "Cancelled": "failed",
    "Canceled": "failed",
}

#: Drop reasons in order of precedence; a row is counted under the first one that applies.
DROP_REASONS: tuple[str, ...] = (
    "no product name",
    "unknown Status",
    "no Device ID",
    "no Transaction id",
    "TransDate is not a date (M/D/YYYY or ISO)",
    "RQty is not a whole number >= 1",
    "RPrice is not a number of whole cents >= 0",
    "product never sold at a price > 0 (no ref_price)",
)

SOURCE_META: Mapping[str, str] = {
    "name": "nj-vending-2022",
    "currency": "USD",
    "timezone": "America/New_York",
    "country": "US",
    "description": (
        "Card and cash order lines of 5 snack and drink vending machines at 4 sites in central New Jersey, "
        "2022-01-01 to 2022-12-31: the public Kaggle dataset 'Vending Machine Sales' (awesomeasingh), "
        "full-year version, as copied in GitHub oadeoluwadotun/Vending-Machine-Sales-Report "
        "(vending_machine_sales.csv, commit b529b2c3a2323b18ffefb6b03aaa3ef5695a00a9). Converted by "
        "`autovend adapt nj-vending`; see shared/data/raw_public/README.md and docs/real-data.md."
    ),
    "licence": "unknown; public Kaggle dataset, see README",
}

MACHINE_COLUMNS = ["machine_id", "site_type", "location", "capacity", "name"]
PRODUCT_COLUMNS = list(PRODUCTS.column_names)
#: The last two are extra columns: payment (cash/credit, from Type) and coil (the slot, from RCoil). The coil
#: tells apart the lines of one transaction that sold the same product from two slots.
ORDER_COLUMNS = ["order_id", "machine_id", "sku_id", "ts", "qty", "unit_price", "status", "payment", "coil"]


@dataclass(frozen=True)
class DropGroup:
    """Rows dropped for one reason: the reason and their line numbers in the CSV (header = line 1)."""

    reason: str
    lines: tuple[int, ...]

    @property
    def n_rows(self) -> int:
        """Number of rows in the group."""
        return len(self.lines)


@dataclass(frozen=True, eq=False)
class AdaptResult:
    """The adapted source (tables and source.yaml content) and the report of what the adapter did."""

    source: dict[str, str]
    machines: pd.DataFrame
    products: pd.DataFrame
    orders: pd.DataFrame
    rows_read: int
    dropped: tuple[DropGroup, ...]
    #: raw Location values with no mapping (blank as '') and the number of written rows carrying each
    unmapped_locations: dict[str, int]
    #: raw Category values with no mapping (blank as '') and the number of written rows carrying each
    unmapped_categories: dict[str, int]
    #: names of the products whose category is unknown (all their rows blank or unmapped)
    unknown_category_products: tuple[str, ...]
    #: products whose rows carry more than one non-blank Category: name -> {Category: rows}
    category_conflicts: dict[str, dict[str, int]]
    #: machines whose rows carry more than one Location or Machine: 'device column' -> {value: rows}
    machine_conflicts: dict[str, dict[str, int]]
    #: mapping tables as applied to the values seen
    location_map: dict[str, str] = field(default_factory=dict)
    category_map: dict[str, tuple[str, str]] = field(default_factory=dict)
    status_map: dict[str, str] = field(default_factory=dict)

    @property
    def rows_written(self) -> int:
        """Order lines written to orders.csv."""
        return len(self.orders)

    @property
    def rows_dropped(self) -> int:
        """Raw rows not written, over all reasons."""
        return sum(group.n_rows for group in self.dropped)

    @property
    def n_units(self) -> int:
        """Units over the written order lines (sum of qty)."""
        return int(self.orders["qty"].sum())

    @property
    def n_completed_units(self) -> int:
        """Units over the completed order lines (sales)."""
        return int(self.orders.loc[self.orders["status"] == "completed", "qty"].sum())

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-able values (the tables are summarised by their sizes)."""
        return {
            "source": dict(self.source),
            "rows_read": self.rows_read,
            "rows_written": self.rows_written,
            "rows_dropped": self.rows_dropped,
            "dropped": [{"reason": g.reason, "lines": list(g.lines)} for g in self.dropped],
            "machines": len(self.machines),
            "products": len(self.products),
            "units": self.n_units,
            "unmapped_locations": dict(self.unmapped_locations),
            "unmapped_categories": dict(self.unmapped_categories),
            "unknown_category_products": list(self.unknown_category_products),
            "category_conflicts": {k: dict(v) for k, v in self.category_conflicts.items()},
            "machine_conflicts": {k: dict(v) for k, v in self.machine_conflicts.items()},
            "location_map": dict(self.location_map),
            "category_map": {k: list(v) for k, v in self.category_map.items()},
            "status_map": dict(self.status_map),
        }


def slugify(text: str) -> str:
    """Lower-case ASCII words joined by single dashes: 'Brunswick Sq Mall' -> 'brunswick-sq-mall'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def sku_ids(names: Iterable[str], prefix: str = SKU_PREFIX) -> dict[str, str]:
    """A stable, collision-free sku_id per distinct product name.

    The id is ``prefix + slug(name)``. Names whose slugs collide (or are empty) get ``'--'`` plus the
    shortest prefix (8 hex digits or more) of the SHA-256 of the exact name that separates them. A slug
    never contains ``'--'``, so a suffixed id cannot equal a plain one: distinct names get distinct ids.
    """
    by_slug: dict[str, list[str]] = {}
    for name in sorted(set(names)):
        by_slug.setdefault(slugify(name), []).append(name)
    ids: dict[str, str] = {}
    for slug, group in by_slug.items():
        if slug and len(group) == 1:
            ids[group[0]] = prefix + slug
            continue
        digests = {name: hashlib.sha256(name.encode("utf-8")).hexdigest() for name in group}
        width = 8
        while len({digests[name][:width] for name in group}) < len(group):
            width += 4
        for name in group:
            ids[name] = f"{prefix}{slug or 'unnamed'}--{digests[name][:width]}"
    return ids


def _lookup(values: pd.Series, table: Mapping[str, Any]) -> pd.Series:
    """Map raw values through ``table`` ignoring case; values not in it become NaN."""
    folded = {key.casefold(): value for key, value in table.items()}
    return values.astype(object).str.casefold().map(folded)  # object dtype keeps tuple values intact


def _modal(frame: pd.DataFrame, key: str, value: str) -> pd.Series:
    """Most frequent ``value`` per ``key``; ties go to the lowest value."""
    counts = frame.groupby([key, value], sort=False).size().rename("_n").reset_index()
    counts = counts.sort_values([key, "_n", value], ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates(key).set_index(key)[value]


def _conflicts(frame: pd.DataFrame, key: str, value: str) -> dict[str, dict[str, int]]:
    """Keys whose rows carry more than one distinct ``value``: key -> {value: rows}."""
    counts = frame.groupby([key, value], sort=True).size()
    n_values = counts.groupby(level=0).size()
    out: dict[str, dict[str, int]] = {}
    for k in n_values.index[n_values > 1]:
        out[str(k)] = {str(v): int(n) for v, n in counts.loc[k].items()}
    return out


def _parse_dates(text: pd.Series) -> pd.Series:
    """Parse M/D/YYYY dates (the export's form), falling back to ISO dates; anything else is NaT."""
    dates = pd.to_datetime(text, format="%m/%d/%Y", errors="coerce")
    missing = dates.isna() & (text != "")
    if missing.any():
        iso = pd.to_datetime(text[missing], format="%Y-%m-%d", errors="coerce")
        dates = dates.where(~missing, iso)
    return dates


def adapt_nj_vending(df_raw: pd.DataFrame) -> AdaptResult:
    """Map the raw NJ vending export (every column read as text) onto the raw-records contract.

    ``df_raw`` is the CSV as read by :func:`read_nj_vending_csv`: one row per file line after the header,
    in file order, all cells as strings. Nothing is written; see :func:`write_nj_vending` for the I/O.
    """
    missing_cols = [c for c in RAW_COLUMNS if c not in df_raw.columns]
    if missing_cols:
        raise AdaptError(
            f"the NJ vending CSV lacks the columns {missing_cols}; found {list(df_raw.columns)}. "
            "Use the full-year 2022 'Vending Machine Sales' export (see docs/real-data.md)."
        )
    raw = pd.DataFrame({c: df_raw[c].astype("string").fillna("").str.strip() for c in RAW_COLUMNS}).reset_index(
        drop=True
    )
    n = len(raw)
    line = np.arange(n, dtype=np.int64) + 2

    status = _lookup(raw["Status"], STATUS_MAP)
    dates = _parse_dates(raw["TransDate"])
    qty = pd.to_numeric(raw["RQty"], errors="coerce")
    price = pd.to_numeric(raw["RPrice"], errors="coerce")
    cents = (price * 100).round()
    qty_ok = qty.notna() & np.isfinite(qty) & (qty >= 1) & (qty == qty.round())
    price_ok = price.notna() & np.isfinite(price) & (price >= 0) & ((price * 100 - cents).abs() < 1e-6)

    tests = [
        raw["Product"] == "",
        status.isna(),
        raw["Device ID"] == "",
        raw["Transaction"] == "",
        dates.isna(),
        ~qty_ok,
        ~price_ok,
    ]
    reason = pd.Series(
        np.select([t.to_numpy(dtype=bool) for t in tests], list(DROP_REASONS[: len(tests)]), default=""),
        dtype=object,
    )
    # A product only ever sold at price 0 (among rows otherwise kept) has no ref_price > 0.
    ok = reason == ""
    priced = raw.loc[ok & (cents > 0), "Product"].unique()
    unpriced = ok & ~raw["Product"].isin(priced)
    reason[unpriced] = DROP_REASONS[len(tests)]
    unknown_status = reason == "unknown Status"
    reason[unknown_status] = "unknown Status " + raw.loc[unknown_status, "Status"].map(repr)
    dropped = _drop_groups(reason, line)

    keep = (reason == "").to_numpy()
    kept = raw.loc[keep].reset_index(drop=True)
    kept_status = status[keep].reset_index(drop=True)
    kept_dates = dates[keep].reset_index(drop=True)
    kept["_cents"] = cents[keep].reset_index(drop=True).astype("int64")
    kept["_qty"] = qty[keep].reset_index(drop=True).astype("int64")

    machines, location_map, unmapped_locations, machine_conflicts = _machines(kept)
    products, category_map, unmapped_categories, unknown_products, category_conflicts = _products(kept)
    sku_of = dict(zip(products["name"], products["sku_id"], strict=True))

    orders = pd.DataFrame(
        {
            "order_id": kept["Transaction"],
            "machine_id": kept["Device ID"],
            "sku_id": kept["Product"].map(sku_of),
            "ts": kept_dates.dt.strftime("%Y-%m-%d"),
            "qty": kept["_qty"],
            "unit_price": _money(kept["_cents"]),
            "status": kept_status,
            "payment": kept["Type"].str.lower(),
            "coil": kept["RCoil"],
        },
        columns=ORDER_COLUMNS,
    )
    seen_status = pd.Series(raw["Status"].unique())
    status_map = {
        str(value): str(mapped)
        for value, mapped in zip(seen_status, _lookup(seen_status, STATUS_MAP), strict=True)
        if isinstance(mapped, str)
    }
    return AdaptResult(
        source=dict(SOURCE_META),
        machines=machines,
        products=products,
        orders=orders,
        rows_read=n,
        dropped=dropped,
        unmapped_locations=unmapped_locations,
        unmapped_categories=unmapped_categories,
        unknown_category_products=unknown_products,
        category_conflicts=category_conflicts,
        machine_conflicts=machine_conflicts,
        location_map=location_map,
        category_map=category_map,
        status_map=dict(sorted(status_map.items())),
    )


def _drop_groups(reason: pd.Series, line: np.ndarray) -> tuple[DropGroup, ...]:
    """Group dropped rows by reason, in the order of DROP_REASONS (then by reason text)."""
    dropped = reason != ""
    if not dropped.any():
        return ()
    lines = pd.Series(line[dropped.to_numpy()], index=reason[dropped].to_numpy())
    rank = {r: i for i, r in enumerate(DROP_REASONS)}

    def order(text: str) -> tuple[int, str]:
        base = "unknown Status" if text.startswith("unknown Status ") else text
        return rank.get(base, len(rank)), text

    groups = [DropGroup(str(r), tuple(int(x) for x in lines.loc[[r]])) for r in lines.index.unique()]
    return tuple(sorted(groups, key=lambda g: order(g.reason)))


def _money(cents: pd.Series) -> pd.Series:
    """Integer cents as decimal text with two places: 150 -> '1.50'."""
    c = cents.astype("int64")
    return (c // 100).astype(str) + "." + (c % 100).astype(str).str.zfill(2)


def _machines(
    kept: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[str, str], dict[str, int], dict[str, dict[str, int]]]:
    """machines.csv rows (one per Device ID), the location map, unmapped locations and conflicts."""
    location = _modal(kept, "Device ID", "Location")
    name = _modal(kept, "Device ID", "Machine")
    site_type = _lookup(location, LOCATION_SITE_TYPES).fillna("unknown")
    detail = location.map(slugify)
    label = pd.Series(np.where(detail != "", site_type + "/" + detail, ""), index=location.index, dtype=object)
    machines = pd.DataFrame(
        {
            "machine_id": location.index.astype(str),
            "site_type": site_type.to_numpy(),
            "location": label.to_numpy(),
            "capacity": "",
            "name": name.reindex(location.index).to_numpy(),
        },
        columns=MACHINE_COLUMNS,
    ).sort_values("machine_id", ignore_index=True)

    seen = pd.Series(kept["Location"].unique())
    seen_site = _lookup(seen, LOCATION_SITE_TYPES)
    location_map = {
        str(v): (f"{s}/{slugify(v)}" if slugify(v) else str(s))
        for v, s in zip(seen, seen_site.fillna("unknown"), strict=True)
    }
    row_unmapped = _lookup(kept["Location"], LOCATION_SITE_TYPES).isna()
    unmapped = kept.loc[row_unmapped, "Location"].value_counts().sort_index()
    conflicts = {
        f"{device} {column}": values
        for column in ("Location", "Machine")
        for device, values in _conflicts(kept, "Device ID", column).items()
    }
    return (
        machines,
        dict(sorted(location_map.items())),
        {str(k): int(v) for k, v in unmapped.items()},
        conflicts,
    )


Conflicts = dict[str, dict[str, int]]


def _products(
    kept: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[str, tuple[str, str]], dict[str, int], tuple[str, ...], Conflicts]:
    """products.csv rows (one per product name), the category map, unmapped categories and conflicts."""
    names = pd.Index(sorted(kept["Product"].unique()))
    labelled = kept.loc[kept["Category"] != ""]
    category = _modal(labelled, "Product", "Category").reindex(names).fillna("")
    mapped = _lookup(category, CATEGORY_LEVELS)
    unknown = mapped.isna()
    levels = [lv if isinstance(lv, tuple) else UNKNOWN_CATEGORY for lv in mapped]
    positive = kept.loc[kept["_cents"] > 0]
    ref_cents = _modal(positive, "Product", "_cents").reindex(names)
    ids = sku_ids(names)
    products = pd.DataFrame(
        {
            "sku_id": [ids[name] for name in names],
            "name": names.to_numpy(),
            "category_l1": [lv[0] for lv in levels],
            "category_l2": [lv[1] for lv in levels],
            "ref_price": _money(ref_cents).to_numpy(),
            "unit_cost": "",
            "shelf_life_days": "",
        },
        columns=PRODUCT_COLUMNS,
    ).sort_values("sku_id", ignore_index=True)

    seen = pd.Series(kept["Category"].unique())
    seen_levels = _lookup(seen, CATEGORY_LEVELS)
    category_map = {
        str(v): (tuple(lv) if isinstance(lv, tuple) else UNKNOWN_CATEGORY)
        for v, lv in zip(seen, seen_levels, strict=True)
    }
    row_unmapped = _lookup(kept["Category"], CATEGORY_LEVELS).isna()
    unmapped = kept.loc[row_unmapped, "Category"].value_counts().sort_index()
    return (
        products,
        dict(sorted(category_map.items())),
        {str(k): int(v) for k, v in unmapped.items()},
        tuple(str(n) for n in names[unknown.to_numpy()]),
        _conflicts(labelled, "Product", "Category"),
    )


def read_nj_vending_csv(csv_path: Path) -> pd.DataFrame:
    """Read the export as text (UTF-8 with or without BOM, any line endings); the file is only read."""
    path = Path(csv_path)
    if not path.is_file():
        raise AdaptError(
            f"input CSV not found: {path}. Get vending_machine_sales.csv as described in docs/real-data.md."
        )
    try:
        return pd.read_csv(path, encoding="utf-8-sig", dtype=str, keep_default_na=False)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise AdaptError(f"cannot read {path} as a UTF-8 CSV with a header row: {exc}") from exc


def source_files(result: AdaptResult) -> dict[str, str]:
    """The text of each file of the source folder: file name -> content."""
    return {
        "source.yaml": yaml.safe_dump(result.source, sort_keys=False, allow_unicode=True, width=100),
        "machines.csv": result.machines.to_csv(index=False, lineterminator="\n"),
        "products.csv": result.products.to_csv(index=False, lineterminator="\n"),
        "orders.csv": result.orders.to_csv(index=False, lineterminator="\n"),
    }


def write_source_atomically(files: Mapping[str, str], out_dir: Path, *, force: bool = False) -> None:
    """Write ``files`` into ``out_dir`` via a temporary sibling folder renamed into place.

    A failure leaves ``out_dir`` as it was. ``out_dir`` must be absent, empty or an earlier source folder
    (``autovend.io.output_dir``) unless ``force``, in which case it is replaced as a whole (its old content
    is removed only after the new folder is in place).
    """
    with output_dir(out_dir, OutputKind.SOURCE, force=force) as tmp:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8", newline="")


def write_nj_vending(csv_path: Path, out_dir: Path, *, force: bool = False) -> AdaptResult:
    """Read the export at ``csv_path``, adapt it and write the source folder ``out_dir`` atomically."""
    csv_path, out_dir = Path(csv_path), Path(out_dir)
    check_output_dir(out_dir, OutputKind.SOURCE, force=force, inputs=(csv_path,))
    result = adapt_nj_vending(read_nj_vending_csv(csv_path))
    write_source_atomically(source_files(result), out_dir, force=force)
    return result
