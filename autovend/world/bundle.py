"""Frozen world bundles: export a calibration to a versioned folder, verify it and load it as a `World`.

A bundle is a folder of nine files:

- `machines.parquet`: the devices (network rule in `autovend.export.network`) with U, kappa, R and
  the source machine each came from;
- `catalog.parquet`: the products with prices, unit costs and shelf lives (`autovend.export.catalog`);
- `base_attraction.parquet`: b_{m,k} in long form (device_id, sku_id, b), devices in device order
  and, within a device, products in catalog order. Long form is kept because it is about 2.5 times
  smaller on disk than one column per product (the default cn20: 263 KB against 657 KB, zstd);
- `weather.parquet`: settlement weather for the horizon and `forecast_days` beyond;
- `forecast.parquet`: the forecasts issued each day (leads 0..forecast_days; lead 0 = settlement);
- `calendar.parquet`: the country's calendar from the start to `calendar_lookahead_days` +
  `calendar_margin_days` past the last day (holidays and makeup workdays);
- `settings.json`: demand settings (eta, phi, elasticities, environment multipliers), economics,
  shock sigma and rho, start date, timezone and country, and the world's `conditions`
  (`autovend.world.conditions`) when it has any (a derived world; a world as exported has none);
- `README.md`: what the bundle is, how it was made and its numbers;
- `manifest.json`: schema version, name, code version, the content hash of every table and of
  settings.json (`autovend.canonical.frame_hash`: values, not writer bytes) and the README's SHA-256,
  the source's content hash, the calibration's content hash, the params, the canonical precision,
  `world_hash` (SHA-256 over the schema version and the content hashes of the tables and settings: the
  world's identity, the same whichever pyarrow wrote the files) and `manifest_hash` (over the rest of
  the manifest, so edited provenance is caught).

Estimated values (b, U, kappa, R, sigma, rho) are rounded to `autovend.canonical.SIGNIFICANT_DIGITS`
significant digits, so a world rebuilds to the same world_hash on any CPU; money stays exact (fen) and
weather on its 0.1 grid. Export is deterministic: the same calibration, source, params and code version
give byte-identical files with the locked libraries (Parquet without pandas metadata, JSON with sorted
keys, no timestamps). Loading refuses a
bundle whose manifest is missing or unreadable, whose schema is newer than this code, that lacks a
file or holds an unexpected one, or whose files do not match their hashes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from autovend import __version__
from autovend.canonical import (
    SIGNIFICANT_DIGITS,
    canonical_value,
    frame_hash,
    json_bytes,
    json_hash,
    parquet_bytes,
)
from autovend.data.calendar import CALENDAR_COLUMNS
from autovend.data.weather import WEATHER_COLUMNS
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.errors import BundleError, NonFiniteError, OutputExistsError
from autovend.io import OutputKind, check_output_dir, output_dir
from autovend.world.conditions import conditions_of
from autovend.world.model import BUNDLE_SCHEMA_VERSION, CATALOG_COLUMNS, Economics, World
from autovend.world.names import resolve_world
from autovend.world.owner import MANIFEST as MANIFEST  # the name every reader of a bundle imports from here
from autovend.world.owner import bundle_refusal, exported_files, shipped_files

SCHEMA_VERSION = BUNDLE_SCHEMA_VERSION
README = "README.md"
SETTINGS = "settings.json"
TABLE_FILES: tuple[str, ...] = (
    "base_attraction.parquet",
    "calendar.parquet",
    "catalog.parquet",
    "forecast.parquet",
    "machines.parquet",
    "weather.parquet",
)
BUNDLE_FILES: tuple[str, ...] = (README, *TABLE_FILES, SETTINGS)  # every file but the manifest
FORECAST_COLUMNS = ["issue_date", "target_date", "lead", "t_max_c", "precip_mm"]
DATE_COLUMNS = ("date", "issue_date", "target_date")
DATE_DTYPE = "datetime64[s]"  # dates are midnight timestamps at one-second resolution
REEXPORT = "re-export the bundle with `autovend export-world`"
_MANIFEST_KEYS = (
    "schema_version",
    "name",
    "created_by",
    "files",
    "source_hash",
    "calibration_hash",
    "params",
    "world_hash",
    "manifest_hash",
)


# ---------------------------------------------------------------------------------------------- bytes


def dated(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its date columns at DATE_DTYPE (Parquet readers may pick another resolution)."""
    out = frame.reset_index(drop=True).copy()
    for col in DATE_COLUMNS:
        if col in out:
            out[col] = pd.to_datetime(out[col]).astype(DATE_DTYPE)
    return out


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _long_attraction(world: World) -> pd.DataFrame:
    M, K = world.demand_model.b.shape
    return pd.DataFrame(
        {
            "device_id": np.repeat(world.machines["device_id"].astype(str).to_numpy(), K),
            "sku_id": np.tile(world.catalog["sku_id"].astype(str).to_numpy(), M),
            "b": world.demand_model.b.reshape(-1),
        }
    )


def settings_payload(world: World) -> dict[str, Any]:
    """The contents of settings.json."""
    return {
        "name": world.name,
        "start_date": world.start_date.isoformat(),
        "horizon_days": world.horizon_days,
        "timezone": world.timezone,
        "country": world.country,
        "shock": {"sigma": world.demand_model.shock.sigma, "rho": world.demand_model.shock.rho},
        "demand": world.demand_model.settings.model_dump(mode="json"),
        "economics": world.economics.model_dump(mode="json"),
        **({"made_to_order": True} if world.made_to_order else {}),  # absent otherwise: other worlds keep their hash
        **({} if world.conditions.empty else {"conditions": world.conditions.payload()}),
    }


def _machines_table(world: World) -> pd.DataFrame:
    """The devices with their no-purchase weight U after the capacity (the file's column order)."""
    table = world.machines.reset_index(drop=True).drop(columns=["U"], errors="ignore")
    table.insert(table.columns.get_loc("capacity") + 1, "U", world.demand_model.U)
    return table


def bundle_tables(world: World) -> dict[str, pd.DataFrame]:
    """The bundle's tables as written: canonical values, fixed column and row order."""
    return {
        "base_attraction.parquet": _long_attraction(world),
        "calendar.parquet": dated(world.calendar[CALENDAR_COLUMNS]),
        "catalog.parquet": world.catalog.reset_index(drop=True),
        "forecast.parquet": dated(world.forecast[FORECAST_COLUMNS]),
        "machines.parquet": _machines_table(world),
        "weather.parquet": dated(world.weather[WEATHER_COLUMNS]),
    }


def content_hashes(world: World) -> dict[str, str]:
    """Content hash of every file that defines the world (tables and settings.json), by file name."""
    hashes = {name: frame_hash(table) for name, table in bundle_tables(world).items()}
    hashes[SETTINGS] = json_hash(canonical_value(settings_payload(world)))
    return dict(sorted(hashes.items()))


def world_files(world: World) -> dict[str, bytes]:
    """The bytes of every file that defines the world (the tables and settings.json), by file name."""
    files = {name: parquet_bytes(table) for name, table in bundle_tables(world).items()}
    files[SETTINGS] = json_bytes(canonical_value(settings_payload(world)))
    return dict(sorted(files.items()))


def world_hash(content: dict[str, str]) -> str:
    """The world's identity: SHA-256 over the schema version and the content hashes of its defining files.

    It covers values only (not writer bytes, the README, the name or the provenance), so two exports of
    the same estimates have the same hash whatever library build wrote them.
    """
    return json_hash({"schema_version": SCHEMA_VERSION, "content": {k: content[k] for k in sorted(content)}})


def manifest_hash(manifest: dict[str, Any]) -> str:
    """SHA-256 of the manifest's canonical JSON without `manifest_hash` itself (catches edited provenance)."""
    return json_hash({k: v for k, v in manifest.items() if k != "manifest_hash"})


def make_manifest(
    world: World,
    files: dict[str, bytes],
    source_hash_: str,
    calibration_hash: str,
    params: dict[str, Any],
) -> dict[str, Any]:
    """The manifest of a bundle: content hashes of the defining files, the README's SHA-256, provenance."""
    content = content_hashes(world)
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": world.name,
        "created_by": f"autovend {__version__}",
        "files": {**content, README: _sha256(files[README])},
        "source_hash": source_hash_,
        "calibration_hash": calibration_hash,
        "params": params,
        "canonical_digits": SIGNIFICANT_DIGITS,
        "world_hash": world_hash(content),
    }
    manifest["manifest_hash"] = manifest_hash(manifest)
    return manifest


# ---------------------------------------------------------------------------------------------- write


def write_bundle(
    out_dir: str | Path,
    files: dict[str, bytes],
    manifest: dict[str, Any],
    *,
    force: bool = False,
    shipping: bool = False,
) -> None:
    """Write the files and the manifest to `out_dir`, atomically (an old bundle is replaced whole).

    `out_dir` must be absent, empty or a bundle the same command wrote (`autovend.world.owner`: an exported
    bundle, or with `shipping` a shipped copy of the same world) unless `force`. A bundle holds no output
    marker (loading refuses files its manifest does not list): its manifest recognises it.
    """
    recognise = shipped_files(manifest["world_hash"]) if shipping else exported_files
    with output_dir(out_dir, OutputKind.WORLD, force=force, marker=False, recognise=recognise) as tmp:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        (tmp / MANIFEST).write_bytes(json_bytes(manifest))


def bundle_files(folder: Path) -> frozenset[str] | None:
    """The files any bundle in `folder` holds (its manifest and what it lists), or None if it is none.

    Whoever wrote it: `autovend world install` replaces an installed copy by this (`autovend.world.catalogue`);
    export and ship decide by `autovend.world.owner`.
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(manifest, dict) or "world_hash" not in manifest or not isinstance(manifest.get("files"), dict):
        return None
    return frozenset([MANIFEST, *manifest["files"]])


def check_output(
    out_dir: Path, force: bool, inputs: tuple[str | Path | None, ...] = (), shipping: dict[str, Any] | None = None
) -> None:
    """Refuse, before any work, an output folder that holds an input, or (without `force`) another's output.

    Another's output: a folder that is not empty and holds no bundle this command may replace
    (`autovend.world.owner`; `shipping`: the manifest of the bundle `world ship` ships).
    """
    recognise = exported_files if shipping is None else shipped_files(shipping["world_hash"])
    check_output_dir(out_dir, OutputKind.WORLD, force=True, inputs=inputs)  # an input is never written over
    reason = None if force else bundle_refusal(Path(out_dir), shipping)
    if reason is not None:
        raise OutputExistsError(reason)
    check_output_dir(out_dir, OutputKind.WORLD, force=force, recognise=recognise)


# ---------------------------------------------------------------------------------------------- load


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The parsed manifest of the bundle at `path`, structure checked (not the files)."""
    folder = Path(path)
    if not folder.is_dir():
        raise BundleError(f"no world bundle at {folder} (not a folder); export one with `autovend export-world`")
    file = folder / MANIFEST
    if not file.is_file():
        raise BundleError(
            f"{folder} has no {MANIFEST}: it is not a world bundle or was copied partially; "
            "re-export it with `autovend export-world`"
        )
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(
            f"{file} is not readable JSON ({exc}); re-export the bundle with `autovend export-world`"
        ) from exc
    if not isinstance(manifest, dict):
        raise BundleError(f"{file} is not a JSON object; re-export the bundle with `autovend export-world`")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise BundleError(f"{file} has no valid schema_version (got {version!r}); {REEXPORT}")
    if version < SCHEMA_VERSION:
        raise BundleError(
            f"{folder} has bundle schema {version}, older than this AutoVend ({__version__}) reads (schema "
            f"{SCHEMA_VERSION}: content hashes over canonical values); {REEXPORT}"
        )
    if version > SCHEMA_VERSION:
        raise BundleError(
            f"{folder} has bundle schema {version}, newer than this AutoVend ({__version__}) reads "
            f"(schema {SCHEMA_VERSION}); upgrade AutoVend to load it"
        )
    missing = [k for k in _MANIFEST_KEYS if k not in manifest]
    if missing or not isinstance(manifest.get("files"), dict):
        raise BundleError(f"{file} lacks {missing or ['files']}; re-export the bundle with `autovend export-world`")
    return manifest


def verify_bundle(path: str | Path) -> dict[str, Any]:
    """Check the manifest and every file of the bundle at `path`; return the manifest or raise BundleError."""
    return _verified(Path(path), {})


def _verified(folder: Path, tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """`verify_bundle(folder)`, keeping in `tables` each table as read for its hash (so a loader reads it once)."""
    manifest = read_manifest(folder)
    listed: dict[str, str] = manifest["files"]
    absent_from_manifest = sorted(set(BUNDLE_FILES) - set(listed))
    if absent_from_manifest:
        raise BundleError(f"{folder}/{MANIFEST} does not list {absent_from_manifest}; {REEXPORT}")
    present = {p.name for p in folder.iterdir()} - {MANIFEST}
    missing = sorted(set(listed) - present)
    if missing:
        raise BundleError(
            f"{folder} is partial: {', '.join(missing)} missing; re-export it with `autovend export-world` "
            "(or restore it from git)"
        )
    extra = sorted(present - set(listed))
    if extra:
        raise BundleError(
            f"{folder} holds files its manifest does not list: {', '.join(extra)}; remove them or re-export the bundle"
        )
    for name in sorted(listed):
        file = folder / name
        if not file.is_file():
            raise BundleError(f"{file} is not a file; re-export the bundle with `autovend export-world`")
    hashes = _file_hashes(folder, sorted(listed), tables)
    changed = [name for name, digest in hashes.items() if digest != listed[name]]
    if changed:
        raise BundleError(
            f"{folder / changed[0]} was changed after export (its content hash does not match the manifest); a "
            "frozen world must not be edited: restore it (git checkout) or re-export it with `autovend export-world`"
        )
    content = {k: v for k, v in listed.items() if k != README}
    if world_hash(content) != manifest["world_hash"]:
        raise BundleError(
            f"{folder}/{MANIFEST} was edited (its world_hash does not match the files' content hashes); restore "
            "it or re-export the bundle with `autovend export-world`"
        )
    if manifest_hash(manifest) != manifest.get("manifest_hash"):
        raise BundleError(
            f"{folder}/{MANIFEST} was edited (its manifest_hash does not match its provenance); restore it or "
            "re-export the bundle with `autovend export-world`"
        )
    return manifest


def _file_hashes(folder: Path, names: list[str], tables: dict[str, pd.DataFrame]) -> dict[str, str]:
    """The hash each listed file is recorded under: content hashes of tables and settings, the README's bytes.

    Each table read is kept in `tables` by file name (an unreadable one is hashed as "" and not kept).
    """
    out: dict[str, str] = {}
    for name in names:
        path = folder / name
        if name == README:
            out[name] = _sha256(path.read_bytes())
        elif name == SETTINGS:
            try:
                out[name] = json_hash(canonical_value(json.loads(path.read_text(encoding="utf-8"))))
            except (UnicodeDecodeError, json.JSONDecodeError, TypeError, NonFiniteError):
                out[name] = ""
        else:
            try:
                tables[name] = _read_table(path)
            except (OSError, pa.ArrowException):
                out[name] = ""
            else:
                out[name] = frame_hash(tables[name])
    return out


def _read_table(path: Path) -> pd.DataFrame:
    """One Parquet file as a frame (read as one file: the same values as `pq.read_table`, without pyarrow.dataset)."""
    with pq.ParquetFile(path) as file:
        return file.read().to_pandas()


def _read_parquet(folder: Path, name: str, columns: list[str], tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The table `name` (as kept by `_verified`, else read now) with its `columns` checked."""
    frame = tables.get(name)
    if frame is None:
        try:
            frame = _read_table(folder / name)
        except (OSError, pa.ArrowException) as exc:
            raise BundleError(f"{folder / name} cannot be read as Parquet ({exc}); re-export the bundle") from exc
    lacking = [c for c in columns if c not in frame]
    if lacking:
        raise BundleError(f"{folder / name} lacks columns {lacking}; re-export the bundle")
    return frame


def _attraction_matrix(long: pd.DataFrame, machines: pd.DataFrame, catalog: pd.DataFrame, where: Path) -> np.ndarray:
    M, K = len(machines), len(catalog)
    ok = (
        len(long) == M * K
        and np.array_equal(
            long["device_id"].astype(str).to_numpy(),
            np.repeat(machines["device_id"].astype(str).to_numpy(), K),
        )
        and np.array_equal(long["sku_id"].astype(str).to_numpy(), np.tile(catalog["sku_id"].astype(str).to_numpy(), M))
    )
    if not ok:
        raise BundleError(
            f"{where} does not hold one row per device and product in device and catalog order; {REEXPORT}"
        )
    return np.ascontiguousarray(long["b"].to_numpy(dtype=np.float64).reshape(M, K))


def load_world(path: str | os.PathLike[str]) -> World:
    """Verify the bundle at `path` (`verify_bundle`) and return its `World` (with `world_hash` set)."""
    folder = Path(path)
    tables: dict[str, pd.DataFrame] = {}
    manifest = _verified(folder, tables)
    try:
        settings = json.loads((folder / SETTINGS).read_text(encoding="utf-8"))
        demand = DemandSettings.model_validate(settings["demand"])
        economics = Economics.model_validate(settings["economics"])
        start = dt.date.fromisoformat(settings["start_date"])
        shock = ShockProcess(sigma=float(settings["shock"]["sigma"]), rho=float(settings["shock"]["rho"]))
        timezone, country = str(settings["timezone"]), str(settings["country"])
        made_to_order = settings.get("made_to_order", False)
        if not isinstance(made_to_order, bool):
            raise ValueError(f"made_to_order must be true or false, got {made_to_order!r}")
        conditions = conditions_of(settings.get("conditions"))
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, ValidationError) as exc:
        raise BundleError(f"{folder / SETTINGS} is not valid ({exc}); re-export the bundle") from exc
    machines = _read_parquet(
        folder, "machines.parquet", ["device_id", "location", "site_type", "capacity", "U"], tables
    )
    catalog = _read_parquet(folder, "catalog.parquet", CATALOG_COLUMNS, tables)
    long = _read_parquet(folder, "base_attraction.parquet", ["device_id", "sku_id", "b"], tables)
    b = _attraction_matrix(long, machines, catalog, folder / "base_attraction.parquet")
    try:
        model = DemandModel(
            b=b,
            U=machines["U"].to_numpy(dtype=float),
            capacity=machines["capacity"].to_numpy(dtype=float),
            site_types=tuple(machines["site_type"].astype(str)),
            categories=tuple(catalog["category_l1"].astype(str)),
            settings=demand,
            shock=shock,
        )
        return World(
            name=str(manifest["name"]),
            machines=machines.drop(columns=["U"]),
            catalog=catalog,
            demand_model=model,
            start_date=start,
            weather=dated(_read_parquet(folder, "weather.parquet", WEATHER_COLUMNS, tables)),
            forecast=dated(_read_parquet(folder, "forecast.parquet", FORECAST_COLUMNS, tables)),
            calendar=dated(_read_parquet(folder, "calendar.parquet", CALENDAR_COLUMNS, tables)),
            economics=economics,
            timezone=timezone,
            country=country,
            world_hash=str(manifest["world_hash"]),
            made_to_order=made_to_order,
            conditions=conditions,
        )
    except ValueError as exc:
        raise BundleError(f"{folder} does not make a valid world ({exc}); re-export the bundle") from exc


def as_world(world: World | str | os.PathLike[str]) -> World:
    """`world` itself, or the world of a bundle folder or a shipped world's name (`resolve_world`, `load_world`)."""
    if isinstance(world, World):
        return world
    if isinstance(world, (str, os.PathLike)):
        return load_world(resolve_world(world))
    raise TypeError(f"expected a World or the path of a world bundle folder, got {type(world).__name__}")
