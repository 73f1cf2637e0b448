"""The run folder's files, and writing a finished (or partial) episode to it (read back by `rundata`).

A run folder holds (names in `RUN_FILES`):

- `run.json`: what was run (world name, path and hash, agent, its config and its code identity
  `agent_entry_point`, `privileged` for the oracle's class only, seed, days settled, horizon, code version,
  tool-call counters, token usage, API cost in USD, wall time, `evaluated`: whether the report was written) and
  what it was run with (`provenance`: Python, package versions, numpy's CPU features; `autovend.provenance`);
  see `run_meta`.
- `trajectory.jsonl`: the ToolSession's call log (`autovend.tools.trajectory`), when there is one.
- `records.sqlite`: the agent-visible records (`Simulator.records`, schema in `autovend.sim.records`).
- `hidden.sqlite`: the evaluation-only log (`Simulator.hidden`: demand, shocks, machine_days, lead_times).
- `daily.csv`: one row per settled day (`DAILY_COLUMNS`), derived from the records' daily_summary.
- `world/`: the world itself, as a bundle of data files (`autovend.world.runcopy.write_world_copy`), when
  run.json cannot point to its bundle (a world built in memory, or no `world_path` given), so the run can
  always be reloaded and compared. Nothing in a run folder is ever unpickled: older folders kept a pickle
  here (`world.pkl`), which AutoVend no longer reads.
- `metrics.json`, `report.md`, `report.html` and figures are written by `autovend.evaluation.report`.

`save_run_data(session_or_sim, run_dir, meta=...)` writes the first five; `RunData.load(run_dir)` reads
them back. `RunData.from_simulator` / `from_session` build the same object in memory (no files).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autovend import __version__
from autovend.env.boundary import simulator_of
from autovend.provenance import current_provenance
from autovend.world.runcopy import identity_hash, write_world_copy

if TYPE_CHECKING:
    from autovend.env import VendingEnv
    from autovend.session import ToolSession
    from autovend.sim import Simulator

RUN_FORMAT = "autovend-run"
RUN_VERSION = 1

RUN_FILE = "run.json"
TRAJECTORY_FILE = "trajectory.jsonl"
RECORDS_FILE = "records.sqlite"
HIDDEN_FILE = "hidden.sqlite"
DAILY_FILE = "daily.csv"
WORLD_DIR = "world"  # the world's own bundle, when run.json cannot point to one
WORLD_PICKLE = "world.pkl"  # what older folders kept instead: never read (a pickle can run code)
METRICS_FILE = "metrics.json"
REPORT_FILE = "report.md"
HTML_REPORT_FILE = "report.html"
RUN_FILES = (
    RUN_FILE,
    TRAJECTORY_FILE,
    RECORDS_FILE,
    HIDDEN_FILE,
    DAILY_FILE,
    METRICS_FILE,
    REPORT_FILE,
    HTML_REPORT_FILE,
)

COST_COLUMNS = ("purchase", "warehouse_rent", "daily_fee", "visit", "expired_fine")
DAILY_COLUMNS = [
    "day",
    "date",
    "cash",
    "net_assets",
    "inventory_at_cost",
    "revenue",
    "cogs",
    "gross_profit",
    "units_sold",
    *COST_COLUMNS,
    "expiry_writeoff",
    "discard_writeoff",
    "net",
    "visits",
    "shelf_units",
    "warehouse_units",
    "in_transit_units",
    "shelf_value",
    "warehouse_value",
    "in_transit_value",
]

# run.json keys a caller (the runner) may set; everything else is filled in from the simulator (and the process).
CALLER_KEYS = ("agent", "agent_config", "world_path", "token_usage", "api_cost_usd", "wall_time_s", "provenance")


def daily_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """The daily ledger (`DAILY_COLUMNS`) from the records' daily_summary table, one row per settled day.

    inventory_at_cost = shelf + warehouse + in-transit value (unexpired units at cost, at the close of
    the day), so net_assets = cash + inventory_at_cost; visits = machines visited that day.
    """
    s = summary.sort_values("day").reset_index(drop=True)
    out = pd.DataFrame(
        {
            "day": s["day"].astype("int64"),
            "date": s["date"].astype(str),
            "cash": s["cash"].astype(float),
            "net_assets": s["net_assets"].astype(float),
            "inventory_at_cost": (s["shelf_value"] + s["warehouse_value"] + s["in_transit_value"]).round(2),
            "revenue": s["revenue"].astype(float),
            "cogs": s["cogs"].astype(float),
            "gross_profit": s["gross_profit"].astype(float),
            "units_sold": s["units_sold"].astype("int64"),
        }
    )
    for col in (*COST_COLUMNS, "expiry_writeoff", "discard_writeoff", "net"):
        out[col] = s[col].astype(float)
    out["visits"] = s["n_visits"].astype("int64")
    for col in ("shelf_units", "warehouse_units", "in_transit_units"):
        out[col] = s[col].astype("int64")
    for col in ("shelf_value", "warehouse_value", "in_transit_value"):
        out[col] = s[col].astype(float)
    return out[DAILY_COLUMNS]


def run_meta(sim: Simulator, meta: Mapping[str, Any] | None = None, counters: Mapping[str, Any] | None = None) -> dict:
    """The content of run.json: facts read from `sim`, the caller's `meta` on top, tool-call `counters`.

    Caller keys (CALLER_KEYS): agent (name), agent_config (dict), world_path (the bundle folder it
    was loaded from), token_usage (dict of token counts), api_cost_usd (float), wall_time_s (float),
    provenance (`Provenance.to_json()`; default: this process's, which is what a run saved in one go
    was made with; the runner passes the record of the run's first session); other caller keys are
    kept as given. Keys read from the simulator cannot be overridden.
    """
    world = sim.world
    reports = sim.reports
    balance = sim.balance() if not reports else reports[-1].balance
    out: dict[str, Any] = {
        "agent": None,
        "agent_config": {},
        "world_path": None,
        "token_usage": {},
        "api_cost_usd": None,
        "wall_time_s": None,
    }
    out.update(dict(meta or {}))
    if out.get("provenance") is None:
        out["provenance"] = current_provenance().to_json()
    out.update(
        {
            "format": RUN_FORMAT,
            "version": RUN_VERSION,
            "world_name": world.name,
            "world_hash": identity_hash(world),
            "seed": sim.seed,
            "days": len(reports),
            "horizon_days": sim.horizon_days,
            "done": sim.done,
            "currency": world.economics.currency,
            "start_cash": world.economics.start_cash,
            "final_cash": balance.cash,
            "final_net_assets": balance.net_assets,
            "code_version": __version__,
        }
    )
    if world.derivation is not None:  # a world changed by a scenario in memory: how `verify` rebuilds it
        out["derivation"] = world.derivation
    if counters is not None:
        out["tool_calls"] = dict(counters)
    return out


@contextlib.contextmanager
def _atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary sibling of `path` that replaces it only if the block succeeds."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _write_sqlite(conn: sqlite3.Connection, path: Path) -> None:
    """Copy a SQLite database (e.g. in memory) to a file, atomically."""
    with _atomic_path(path) as tmp:
        tmp.unlink()
        dst = sqlite3.connect(tmp)
        try:
            conn.backup(dst)
        finally:
            dst.close()


WORLD_README = (
    "# {name}\n\nThe world this run was made on, kept beside its records by `save_run_data` because run.json "
    "names no bundle to load it from. Data files only: `autovend.world.bundle.load_world` reads and checks them.\n"
)


def save_run_data(
    source: ToolSession | VendingEnv | Simulator,
    run_dir: str | Path,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write run.json, records.sqlite, hidden.sqlite, daily.csv (and the trajectory) of a run to `run_dir`.

    `source` is a `ToolSession` or `VendingEnv` (its simulator, call counters and trajectory file are
    used) or a bare `Simulator`. A session's trajectory is copied into the folder unless it is already
    written there. `meta` adds the caller's facts to run.json (see `run_meta`); without a `world_path`
    there (or for a world built in memory) the world is written into the folder as a bundle (`WORLD_DIR`).
    Safe to call after every day: each file is replaced atomically. Returns the run folder.
    """
    from autovend.sim import Simulator

    sim = source if isinstance(source, Simulator) else simulator_of(source)
    counters = getattr(source, "counters", None)
    out = Path(run_dir)
    out.mkdir(parents=True, exist_ok=True)
    traj = getattr(source, "trajectory_path", None)
    target = out / TRAJECTORY_FILE
    if traj is not None and Path(traj).exists() and Path(traj).resolve() != target.resolve():
        with _atomic_path(target) as tmp:
            shutil.copyfile(traj, tmp)
    with _atomic_path(out / RECORDS_FILE) as tmp:
        tmp.write_bytes(sim.records.serialize())
    hidden = sim.hidden.to_sqlite()
    try:
        _write_sqlite(hidden, out / HIDDEN_FILE)
    finally:
        hidden.close()
    daily = daily_frame(sim.records.frame("daily_summary"))
    with _atomic_path(out / DAILY_FILE) as tmp:
        daily.to_csv(tmp, index=False)
    if not sim.world.world_hash or not (meta or {}).get("world_path"):
        write_world_copy(sim.world, out / WORLD_DIR, WORLD_README.format(name=sim.world.name))
    info = run_meta(sim, meta, counters)
    with _atomic_path(out / RUN_FILE) as tmp:
        tmp.write_text(json.dumps(info, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return out
