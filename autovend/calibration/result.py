"""The result of a calibration: its scalars and parameter tables, their content hash, and their folder on disk.

`CalibrationResult` is what `autovend.calibration.calibrate.calibrate` returns and what the world export reads
back; `canonical_result` rounds its estimates to the canonical significant digits.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from autovend.calibration.estimates import Estimates
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

SCHEMA_VERSION = 2
TABLES = ("popularity", "site_preference", "subcategory", "machines")
INPUT_SCALARS = frozenset({"params", "settings"})  # what the calibration was given, kept as given
# scalars that describe the run rather than the estimates: not part of the content hash
DIAGNOSTIC_SCALARS = frozenset({"code_version", "choice_iterations", "notes", "content_hash", "identification"})
# kept in memory but not written: the MM fit's sweep count moves with the last bits of numpy's SIMD kernels, and
# calibration.json is a DVC output that must be the same bytes on every CPU
UNWRITTEN_SCALARS = frozenset({"choice_iterations"})


@dataclass(frozen=True)
class CalibrationResult:
    """Scalars (with their definitions' names) and the parameter tables of a calibration."""

    scalars: dict[str, Any]
    popularity: (
        pd.DataFrame
    )  # sku_id, category_l1, category_l2, units, demand, exposure, machine_days, omega_raw, omega
    site_preference: pd.DataFrame  # site_type, category_l1, pi
    subcategory: pd.DataFrame  # category_l2, category_l1, gamma
    machines: pd.DataFrame  # machine_id, site_type, location?, capacity, kappa, R, U, mean_daily_units, ...
    diagnostics: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def estimates(self) -> Estimates:
        """The typed demand scalars downstream uses (`EstimatesError` if one is missing or not finite)."""
        return Estimates.of(self.scalars)

    def to_dict(self) -> dict[str, Any]:
        """The scalars and tables as plain Python (tables as lists of records)."""
        return {
            "scalars": self.scalars,
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
        scalars = {k: v for k, v in self.scalars.items() if k not in DIAGNOSTIC_SCALARS}
        tables = {name: frame_hash(getattr(self, name)) for name in TABLES}
        return json_hash({"scalars": scalars, "tables": tables})

    def write(self, out_dir: str | Path, *, force: bool = False) -> None:
        """Write calibration.json (with its content hash) and the Parquet tables to `out_dir`, atomically.

        `out_dir` must be absent, empty or an earlier calibration (`autovend.io.output_dir`) unless `force`.
        """
        scalars = {k: v for k, v in self.scalars.items() if k not in UNWRITTEN_SCALARS}
        scalars["content_hash"] = self.content_hash()
        with output_dir(out_dir, OutputKind.CALIBRATION, force=force) as tmp:
            (tmp / "calibration.json").write_bytes(json_bytes(scalars))
            for name in TABLES:
                (tmp / f"{name}.parquet").write_bytes(parquet_bytes(getattr(self, name)))
            if self.diagnostics:
                (tmp / "diagnostics").mkdir()
                for name, table in self.diagnostics.items():  # rounded: their last bits depend on the CPU
                    (tmp / "diagnostics" / f"{name}.parquet").write_bytes(parquet_bytes(diagnostic_frame(table)))

    @classmethod
    def read(cls, out_dir: str | Path) -> CalibrationResult:
        """Read a folder written by `write`."""
        out_dir = Path(out_dir)
        scalars = json.loads((out_dir / "calibration.json").read_text(encoding="utf-8"))
        scalars.pop("content_hash", None)
        diag_dir = out_dir / "diagnostics"
        diagnostics = (
            {p.stem: pd.read_parquet(p) for p in sorted(diag_dir.glob("*.parquet"))} if diag_dir.exists() else {}
        )
        return cls(
            scalars=scalars,
            popularity=pd.read_parquet(out_dir / "popularity.parquet"),
            site_preference=pd.read_parquet(out_dir / "site_preference.parquet"),
            subcategory=pd.read_parquet(out_dir / "subcategory.parquet"),
            machines=pd.read_parquet(out_dir / "machines.parquet"),
            diagnostics=diagnostics,
        )


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
    scalars = {
        k: v if k in INPUT_SCALARS else canonical_value(v, path=f"calibration.{k}") for k, v in res.scalars.items()
    }
    return dataclasses.replace(
        res,
        scalars=scalars,
        popularity=canonical_frame(res.popularity, what="popularity"),
        site_preference=canonical_frame(res.site_preference, what="site preference"),
        subcategory=canonical_frame(res.subcategory, what="subcategory coefficients"),
        machines=canonical_frame(res.machines, what="machine scales"),
    )
