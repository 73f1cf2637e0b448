"""The mark for a missing value in the command line's tables.

`MISSING` is what a table prints for a value that is missing or not a finite number; `number_cell` formats
numbers with it (`autovend run`'s summary line, `compare`'s tables, `summary`, `world list`).
"""

from __future__ import annotations

import math
from typing import Any

MISSING = "–"  # en dash, as in validation.md and the run reports


def number_cell(value: Any, fmt: str = "{:,.2f}", scale: float = 1.0) -> str:
    """`value` times `scale` formatted with `fmt`; `MISSING` for None, text that is no number, NaN or infinity."""
    try:
        number = float(value) * scale
    except (TypeError, ValueError):
        return MISSING
    return fmt.format(number) if math.isfinite(number) else MISSING


def counted(n: Any, one: str, many: str | None = None) -> str:
    """`n` with its noun in the right number: "1 machine", "3 machines", "1,200 machines".

    `many` is an irregular plural; a value that is no whole number is shown as given, with the plural.
    """
    try:
        k = int(n)
    except (TypeError, ValueError):
        return f"{n} {many or one + 's'}"
    return f"{k:,} {one if k == 1 else (many or one + 's')}"
