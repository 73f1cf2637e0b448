"""A run folder loaded back as one `RunData` (its files and their writing: `autovend.evaluation.runsave`).

`RunData.load(run_dir)` reads a folder written by `save_run_data`; `RunData.from_simulator` / `from_session`
build the same object in memory (no files). The folder's names, `save_run_data`, `daily_frame` and `run_meta`
are importable from here too, as before.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autovend.env.boundary import simulator_of
from autovend.errors import AutoVendError, RunFolderError
from autovend.evaluation.runsave import (
    CALLER_KEYS,
    COST_COLUMNS,
    DAILY_COLUMNS,
    DAILY_FILE,
    HIDDEN_FILE,
    HTML_REPORT_FILE,
    METRICS_FILE,
    RECORDS_FILE,
    REPORT_FILE,
    RUN_FILE,
    RUN_FILES,
    RUN_FORMAT,
    RUN_VERSION,
    TRAJECTORY_FILE,
    WORLD_DIR,
    WORLD_PICKLE,
    daily_frame,
    run_meta,
    save_run_data,
)
from autovend.sim.hidden import HIDDEN_COLUMNS
from autovend.sim.records import RECORD_TABLES
from autovend.world.model import World

if TYPE_CHECKING:
    from autovend.evaluation.economics import ShelfEconomics
    from autovend.evaluation.shelves import ShelfPanel
    from autovend.session import ToolSession
    from autovend.sim import Simulator

__all__ = [
    "CALLER_KEYS",
    "COST_COLUMNS",
    "DAILY_COLUMNS",
    "DAILY_FILE",
    "HIDDEN_FILE",
    "HTML_REPORT_FILE",
    "METRICS_FILE",
    "RECORDS_FILE",
    "REPORT_FILE",
    "RUN_FILE",
    "RUN_FILES",
    "RUN_FORMAT",
    "RUN_VERSION",
    "TRAJECTORY_FILE",
    "WORLD_DIR",
    "WORLD_PICKLE",
    "LazyTables",
    "RunData",
    "daily_frame",
    "read_calls",
    "run_meta",
    "save_run_data",
]

_TEXT_COLUMNS = frozenset({"date", "device_id", "sku_id", "location", "site_type", "name", "category_l1"})
_TEXT_COLUMNS |= {"category_l2", "supplier_id", "kind"}
_REAL_COLUMNS = frozenset({"price", "rate", "xi", "revenue", "gross_profit", "expected_units"})
_RECORD_TYPES = {t.name: {c: typ.split()[0] for c, typ in t.columns} for t in RECORD_TABLES}


def _typed(table: str, frame: pd.DataFrame, hidden: bool) -> pd.DataFrame:
    """Give a table's columns their types whatever the source (an empty table comes back untyped).

    TEXT -> str, REAL -> float64, INTEGER -> int64 (float64 when the column holds NULLs, e.g. an
    order's arrived_day before arrival).
    """
    out = frame.copy()
    for col in out.columns:
        if hidden:
            kind = "TEXT" if col in _TEXT_COLUMNS else "REAL" if col in _REAL_COLUMNS else "INTEGER"
        else:
            kind = _RECORD_TYPES[table].get(col, "TEXT")
        if kind == "TEXT":
            out[col] = out[col].astype(object)
        elif kind == "REAL" or out[col].isna().any():
            out[col] = pd.to_numeric(out[col]).astype("float64")
        else:
            out[col] = pd.to_numeric(out[col]).astype("int64")
    return out


class LazyTables(Mapping[str, pd.DataFrame]):
    """The tables of a SQLite file by name, each read (and typed) on first access, then kept."""

    def __init__(self, path: Path, names: tuple[str, ...], hidden: bool) -> None:
        if not path.exists():
            raise RunFolderError(
                f"{path} is missing; the run folder is incomplete (re-run, or save it with save_run_data)"
            )
        self.path, self._names, self._hidden = path, names, hidden
        self._cache: dict[str, pd.DataFrame] = {}
        self._read(names[0])  # fail early on a damaged file

    def _read(self, name: str) -> pd.DataFrame:
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise RunFolderError(f"cannot open {self.path}: {exc}") from exc
        try:
            frame = pd.read_sql_query(f"SELECT * FROM {name}", conn)
        except (sqlite3.Error, pd.errors.DatabaseError) as exc:
            raise RunFolderError(
                f"{self.path} is not a complete AutoVend database ({exc}); re-run to rewrite it"
            ) from exc
        finally:
            conn.close()
        self._cache[name] = _typed(name, frame, hidden=self._hidden)
        return self._cache[name]

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._names:
            raise KeyError(name)
        return self._cache[name] if name in self._cache else self._read(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def read_calls(path: str | Path) -> list[dict[str, Any]]:
    """The call records of a trajectory file (lines with kind == "call"), in order; [] if absent.

    A last line cut short (no newline, not valid JSON: a crash while writing) is left out; any
    other invalid line is an error.
    """
    path = Path(path)
    if not path.exists():
        return []
    calls = []
    with path.open(encoding="utf-8") as fh:
        lines = fh.readlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines) and not line.endswith("\n"):
                break  # a call cut short by a crash: the calls before it are complete
            raise RunFolderError(f"{path}:{n} is not valid JSON ({exc}); the trajectory is damaged") from exc
        if rec.get("kind") == "call":
            calls.append(rec)
    return calls


def _load_world(run_dir: Path, meta: Mapping[str, Any], world: World | None) -> World:
    """The run's world: given, else its bundle (world_path), else the folder's own bundle (`WORLD_DIR`).

    Bundles are data files whose hashes `load_world` checks. A pickled world (`WORLD_PICKLE`, kept by older
    versions) is never read: unpickling a file from a run folder could run code of the folder's choosing.
    """
    from autovend.world.bundle import load_world

    want = str(meta.get("world_hash") or "")
    if world is None:
        path = meta.get("world_path")
        candidates = [Path(path), run_dir / path] if isinstance(path, str) and path else []
        candidates.append(run_dir / WORLD_DIR)
        found = next((p for p in candidates if (p / "manifest.json").is_file()), None)
        if found is not None:
            world = load_world(found)
        elif (run_dir / WORLD_PICKLE).exists():
            raise RunFolderError(
                f"{run_dir} keeps its world only as {WORLD_PICKLE}, a pickle, which AutoVend does not read from a "
                "run folder (loading it could run code); pass the world explicitly (RunData.load(run_dir, "
                "world=...), or --world with the bundle the run was made on)"
            )
        else:
            raise RunFolderError(
                f"cannot find the world of {run_dir}: world_path {path!r} holds no bundle and there is no "
                f"{WORLD_DIR}/ bundle in the folder; pass the world explicitly (RunData.load(run_dir, world=...))"
            )
    if want and world.world_hash and world.world_hash != want:
        raise RunFolderError(
            f"{run_dir} was run on world hash {want[:12]}…, but the world given has {world.world_hash[:12]}…; "
            "load the run with the world it was made on"
        )
    return world


@dataclass(eq=False)
class RunData:
    """Everything the evaluation reads about one run.

    world: the world it ran on (its demand model is the hidden truth the metrics may use).
    meta: run.json (see `run_meta`). records: the agent-visible tables by name (RECORD_TABLES).
    hidden: the evaluation-only tables by name (demand, shocks, machine_days, lead_times).
    Loaded runs read each table on first use (`LazyTables`).
    calls: the trajectory's call records in order (empty when the run kept no trajectory).
    run_dir: the folder it was loaded from (None when built in memory).
    """

    world: World
    meta: dict[str, Any]
    records: Mapping[str, pd.DataFrame]
    hidden: Mapping[str, pd.DataFrame]
    calls: list[dict[str, Any]] = field(default_factory=list)
    run_dir: Path | None = None

    @classmethod
    def load(cls, run_dir: str | Path, world: World | None = None) -> RunData:
        """Read a run folder written by `save_run_data`; `world` skips locating and loading the bundle."""
        run_dir = Path(run_dir)
        run_file = run_dir / RUN_FILE
        if not run_file.exists():
            raise RunFolderError(f"{run_dir} has no {RUN_FILE}; it is not a run folder (see `autovend run`)")
        try:
            meta = json.loads(run_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunFolderError(f"cannot read {run_file}: {exc}") from exc
        if meta.get("format") != RUN_FORMAT:
            raise RunFolderError(f"{run_file} is not an AutoVend run description (format {meta.get('format')!r})")
        try:
            world = _load_world(run_dir, meta, world)
        except RunFolderError:
            raise
        except (AutoVendError, OSError) as exc:
            raise RunFolderError(f"cannot load the world of {run_dir}: {exc}") from exc
        records = LazyTables(run_dir / RECORDS_FILE, tuple(t.name for t in RECORD_TABLES), hidden=False)
        hidden = LazyTables(run_dir / HIDDEN_FILE, tuple(HIDDEN_COLUMNS), hidden=True)
        return cls(world, meta, records, hidden, read_calls(run_dir / TRAJECTORY_FILE), run_dir)

    @classmethod
    def from_tables(
        cls,
        world: World,
        tables: Mapping[str, pd.DataFrame],
        meta: Mapping[str, Any] | None = None,
        calls: list[dict[str, Any]] | None = None,
    ) -> RunData:
        """A run from tables given by name (record and hidden tables; missing ones are empty), e.g. for tests."""
        unknown = set(tables) - {t.name for t in RECORD_TABLES} - set(HIDDEN_COLUMNS)
        if unknown:
            raise ValueError(f"unknown tables {sorted(unknown)}")
        records = {}
        for t in RECORD_TABLES:
            frame = tables.get(t.name, pd.DataFrame(columns=list(t.column_names)))
            records[t.name] = _typed(t.name, frame[list(t.column_names)], hidden=False)
        hidden = {}
        for name, cols in HIDDEN_COLUMNS.items():
            frame = tables.get(name, pd.DataFrame(columns=list(cols)))
            hidden[name] = _typed(name, frame[list(cols)], hidden=True)
        info = {"format": RUN_FORMAT, "version": RUN_VERSION, "world_name": world.name, **dict(meta or {})}
        return cls(world, info, records, hidden, list(calls or []))

    @classmethod
    def from_simulator(
        cls,
        sim: Simulator,
        meta: Mapping[str, Any] | None = None,
        calls: list[dict[str, Any]] | None = None,
        counters: Mapping[str, Any] | None = None,
    ) -> RunData:
        """The run so far of a simulator, in memory (`calls`: trajectory call records, if any)."""
        records = {t.name: _typed(t.name, sim.records.frame(t.name), hidden=False) for t in RECORD_TABLES}
        hidden = {t: _typed(t, sim.hidden.frame(t), hidden=True) for t in HIDDEN_COLUMNS}
        return cls(sim.world, run_meta(sim, meta, counters), records, hidden, list(calls or []))

    @classmethod
    def from_session(cls, session: ToolSession, meta: Mapping[str, Any] | None = None) -> RunData:
        """The run so far of a ToolSession, in memory (calls read from its trajectory file, if it has one)."""
        path = session.trajectory_path
        calls = read_calls(path) if path is not None else []
        return cls.from_simulator(simulator_of(session), meta, calls, session.counters)

    # ------------------------------------------------------------------ convenience

    @cached_property
    def daily(self) -> pd.DataFrame:
        """The daily ledger (`DAILY_COLUMNS`), one row per settled day."""
        return daily_frame(self.records["daily_summary"])

    @cached_property
    def panel(self) -> ShelfPanel:
        """The stocked shelf slots of every settled day, rebuilt from the records (`shelves.shelf_panel`)."""
        from autovend.evaluation.shelves import shelf_panel

        return shelf_panel(self.world, self.records, self.days)

    @cached_property
    def economics(self) -> ShelfEconomics:
        """The world's demand model, ready to value shelves (`economics.ShelfEconomics`)."""
        from autovend.evaluation.economics import ShelfEconomics

        return ShelfEconomics.from_world(self.world)

    @property
    def days(self) -> int:
        """Number of settled days."""
        return len(self.records["daily_summary"])

    @property
    def agent(self) -> str:
        """The agent's name ("unknown" when run.json does not say)."""
        return str(self.meta.get("agent") or "unknown")

    @property
    def seed(self) -> int:
        """The run's seed."""
        return int(self.meta.get("seed", 0))

    @property
    def world_hash(self) -> str:
        """The hash of the world the run was made on, as run.json records it (in-memory worlds: their content's)."""
        return str(self.meta.get("world_hash") or self.world.world_hash or "")

    @property
    def name(self) -> str:
        """A label: the folder name, or agent-s<seed> for runs in memory."""
        return self.run_dir.name if self.run_dir is not None else f"{self.agent}-s{self.seed}"

    @property
    def start_cash(self) -> float:
        """Cash at the start of the episode (CNY)."""
        return float(self.world.economics.start_cash)

    @property
    def final_net_assets(self) -> float:
        """Net assets at the close of the last settled day (the start cash if no day was settled)."""
        d = self.daily
        return float(d["net_assets"].iloc[-1]) if len(d) else self.start_cash
