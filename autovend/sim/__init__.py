"""The simulator: a run of the benchmark on a frozen world (`Simulator`), its results and records."""

from autovend.sim.actions import PHYSICAL_ACTIONS
from autovend.sim.money import from_fen, to_fen
from autovend.sim.queries import EXPIRING_WITHIN_DAYS
from autovend.sim.records import SCHEMA_DOC
from autovend.sim.results import (
    REJECTION_CODES,
    Accepted,
    Arrival,
    Balance,
    BatchResult,
    DayInfo,
    DayReport,
    DayStart,
    Rejected,
)
from autovend.sim.scripted import KeepStocked
from autovend.sim.simulator import Simulator

__all__ = [
    "EXPIRING_WITHIN_DAYS",
    "PHYSICAL_ACTIONS",
    "REJECTION_CODES",
    "SCHEMA_DOC",
    "Accepted",
    "Arrival",
    "Balance",
    "BatchResult",
    "DayInfo",
    "DayReport",
    "DayStart",
    "KeepStocked",
    "Rejected",
    "Simulator",
    "from_fen",
    "to_fen",
]
