"""Where the tests marked `realdata` find the public NJ vending CSV (docs/real-data.md says where it comes from)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ROOT / "data" / "external" / "vending_machine_sales.csv"  # where the real-data pipeline reads it
# the development workspace keeps a read-only copy beside the repository; a user's checkout has only data/external
WORKSPACE_COPY = ROOT.parent / "shared" / "data" / "raw_public" / "vending_machine_sales.csv"
REAL_CSV_MISSING = (
    f"the public NJ vending CSV is not at {EXPECTED.relative_to(ROOT)}; docs/real-data.md says where it comes from"
)


def real_csv() -> Path:
    """The CSV at data/external, else the workspace's copy; the data/external path when neither exists."""
    return next((p for p in (EXPECTED, WORKSPACE_COPY) if p.is_file()), EXPECTED)
