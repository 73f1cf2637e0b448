"""The result of a calibration: its estimates and parameter tables, their content hash, and their folder on disk.

`CalibrationResult` is what `autovend.calibration.calibrate.calibrate` returns and what the world export reads
back: its scalars are one typed `Estimates` (`autovend.calibration.estimates`, which also reads and writes
calibration.json); `canonical_result` rounds its estimates to the canonical significant digits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autovend.calibration.estimates import CALIBRATION_FILE, Estimates, read_estimates
from autovend.calibration.normalise import Factors
from autovend.canonical import (
    canonical_frame,
    canonical_value,
    diagnostic_frame,
    frame_hash,
    json_bytes,
    json_hash,
    parquet_bytes,
)
from autovend.io import OutputKind, output_dir

if TYPE_CHECKING:
    from autovend.calibration.availability import Availability

SCHEMA_VERSION = 2
TABLES = ("popularity", "site_preference", "subcategory", "machines")
INPUT_SCALARS = frozenset({"params", "settings"})  # what the calibration was given, kept as given
# scalars that describe the run rather than the estimates: not part of the content hash
DIAGNOSTIC_SCALARS = frozenset({"code_version", "choice_iterations", "notes", "content_hash", "identification"})
# (the scalars kept in memory but not written, UNWRITTEN_SCALARS, are `autovend.calibration.estimates`'s)


@dataclass(frozen=True)
class CalibrationResult:
    """The estimates (every scalar, typed) and the parameter tables of a calibration."""

    estimates: Estimates
    popularity: (
        pd.DataFrame
    )  # sku_id, category_l1, category_l2, units, demand, exposure, machine_days, omega_raw, omega
    site_preference: pd.DataFrame  # site_type, category_l1, pi
    subcategory: pd.DataFrame  # category_l2, category_l1, gamma
    machines: pd.DataFrame  # machine_id, site_type, location?, capacity, kappa, R, U, mean_daily_units, ...
    diagnostics: dict[str, pd.DataFrame] = field(default_factory=dict)
    # sales-only sources: the latent availability (in memory only, not written): what validation forecasts from
    availability: Availability | None = field(default=None, repr=False, compare=False)
    # the daily panel's diagnostic table, block by block and rounded (`canonical.diagnostic_frame`), written as
    # diagnostics/panel.parquet (its blocks may be held on a cluster's workers, so it is never gathered whole)
    panel_rows: Callable[[], Iterator[pd.DataFrame]] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The scalars and tables as plain Python (tables as lists of records)."""
        return {
            "scalars": self.estimates.stored(written=False),
            "popularity": self.popularity.to_dict(orient="records"),
            "site_preference": self.site_preference.to_dict(orient="records"),
            "subcategory": self.subcategory.to_dict(orient="records"),
            "machines": self.machines.to_dict(orient="records"),
        }

    def base_attraction(self, machine_ids: list[str] | None = None) -> pd.DataFrame:
        """b_{m,k} = kappa * pi * gamma * omega for the given machines (all by default) and all products."""
        mach = (
            self.machines
            if machine_ids is None
            else self.machines.set_index("machine_id").loc[machine_ids].reset_index()
        )
        return _factors(self, mach).base_attraction()

    def content_hash(self) -> str:
        """SHA-256 over the estimates' values: the scalars but DIAGNOSTIC_SCALARS, and every table's values.

        Writer bytes (Parquet metadata, compressor) and diagnostics do not enter it, so the same estimates
        have the same hash whichever library build wrote them.
        """
        scalars = {k: v for k, v in self.estimates.stored().items() if k not in DIAGNOSTIC_SCALARS}
        tables = {name: frame_hash(getattr(self, name)) for name in TABLES}
        return json_hash({"scalars": scalars, "tables": tables})

    def write(self, out_dir: str | Path, *, force: bool = False) -> None:
        """Write calibration.json (with its content hash) and the Parquet tables to `out_dir`, atomically.

        `out_dir` must be absent, empty or an earlier calibration (`autovend.io.output_dir`) unless `force`.
        """
        scalars = self.estimates.stored(content_hash=self.content_hash())
        with output_dir(out_dir, OutputKind.CALIBRATION, force=force) as tmp:
            (tmp / CALIBRATION_FILE).write_bytes(json_bytes(scalars))
            for name in TABLES:
                (tmp / f"{name}.parquet").write_bytes(parquet_bytes(getattr(self, name)))
            if self.diagnostics or self.panel_rows is not None:
                (tmp / "diagnostics").mkdir()
                for name, table in self.diagnostics.items():  # rounded: their last bits depend on the CPU
                    (tmp / "diagnostics" / f"{name}.parquet").write_bytes(parquet_bytes(diagnostic_frame(table)))
                if self.panel_rows is not None:
                    write_parts(tmp / "diagnostics" / "panel.parquet", self.panel_rows())  # rounded where held

    @classmethod
    def read(cls, out_dir: str | Path) -> CalibrationResult:
        """Read a folder written by `write` (`EstimatesError` names calibration.json and what it lacks)."""
        out_dir = Path(out_dir)
        estimates = read_estimates(out_dir / CALIBRATION_FILE)
        diag_dir = out_dir / "diagnostics"
        diagnostics = (
            {p.stem: pd.read_parquet(p) for p in sorted(diag_dir.glob("*.parquet"))} if diag_dir.exists() else {}
        )
        return cls(
            estimates=estimates,
            popularity=pd.read_parquet(out_dir / "popularity.parquet"),
            site_preference=pd.read_parquet(out_dir / "site_preference.parquet"),
            subcategory=pd.read_parquet(out_dir / "subcategory.parquet"),
            machines=pd.read_parquet(out_dir / "machines.parquet"),
            diagnostics=diagnostics,
        )


def write_parts(path: Path, frames: Iterator[pd.DataFrame]) -> None:
    """Write frames of one schema as one Parquet file, a row group each (zstd, no pandas metadata, as parquet_bytes).

    Only one frame is held at a time (the iterator's, and its Arrow copy); without frames nothing is written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for frame in frames:
            table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
            del frame
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="zstd")
            writer.write_table(table)
            del table
    finally:
        if writer is not None:
            writer.close()


def _factors(res: CalibrationResult, machines: pd.DataFrame) -> Factors:
    pop = res.popularity.set_index("sku_id")
    pi = res.site_preference.pivot(index="site_type", columns="category_l1", values="pi")
    return Factors(
        omega=pop["omega"],
        gamma=res.subcategory.set_index("category_l2")["gamma"],
        pi=pi,
        kappa=machines.set_index("machine_id")["kappa"],
        products=pop[["category_l1", "category_l2"]],
        machines=machines.set_index("machine_id")["site_type"],
    )


def canonical_result(res: CalibrationResult) -> CalibrationResult:
    """The result with every estimate rounded to `autovend.canonical.SIGNIFICANT_DIGITS` significant digits.

    The settings and params the calibration was made with are inputs and stay as given; diagnostics
    (per machine-day tables) are kept at full precision and are not part of the content hash.
    Raises NonFiniteError when an estimate is NaN or infinite where a value is required.
    """
    return dataclasses.replace(
        res,
        estimates=canonical_estimates(res.estimates),
        popularity=canonical_frame(res.popularity, what="popularity"),
        site_preference=canonical_frame(res.site_preference, what="site preference"),
        subcategory=canonical_frame(res.subcategory, what="subcategory coefficients"),
        machines=canonical_frame(res.machines, what="machine scales"),
    )


def canonical_estimates(estimates: Estimates) -> Estimates:
    """The estimates rounded as `canonical_result` rounds them (inputs kept as given; NaN becomes None).

    Raises NonFiniteError when one is infinite.
    """
    stored = estimates.stored(written=False)
    return Estimates.from_stored(
        {k: v if k in INPUT_SCALARS else canonical_value(v, path=f"calibration.{k}") for k, v in stored.items()}
    )
