"""`autovend verify RUN`: re-simulate a run from its folder and check that it gives what the folder records.

A run is deterministic given its world, its seed and its tool calls: the simulator's demand draws
depend only on the seed, the day, the machine and the product, and every change of state is a tool
call. So a folder can be re-checked without its agent (no model is called for an LLM run): `verify_run`

1. finds the world by the hash run.json records (`find_world`): the bundle given with --world, else the
   run's `world_path`, then the installed worlds (./worlds and the shipped ones); never a world inside the
   run folder, and nothing in the folder is unpickled or executed; a run whose world is not there is
   refused with the hash it needs;
2. replays the trajectory's calls in order on a fresh episode of that world and seed (`ToolSession`),
   checking each call's day and its result (ok, error and the JSON content; a query's `elapsed_ms` is
   left out) against the recorded ones;
3. writes the replayed run as the runner does (`save_run_data`, in a temporary folder) and checks run.json's
   final figures, every cell of daily.csv and every value of metrics.json (the run's folder name left out).

Numbers are equal when they agree to 1e-9 relative (money is in fen, so this is to the fen and closer).
The first difference stops the check and is reported with its day, call (seq and tool) and field.
Calls whose arguments were too large to record (the trajectory holds a note instead) are replayed as
the refused calls they were: only their `ok` is compared.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from autovend.errors import AutoVendError, RunFolderError
from autovend.evaluation.rundata import (
    CALLER_KEYS,
    DAILY_FILE,
    METRICS_FILE,
    RUN_FILE,
    RUN_FORMAT,
    TRAJECTORY_FILE,
    RunData,
    read_calls,
    save_run_data,
)
from autovend.world.bundle import identity_hash
from autovend.world.model import World

VERIFY_FILE = "verify.json"  # where a sweep records a run's verification (`record_verification`)
RELATIVE = 1e-9
NOT_RECORDED = "<not recorded"  # how the trajectory notes arguments it could not hold (autovend.tools.guard)
IGNORED_RESULT_KEYS = {"query_sql": ("elapsed_ms",)}  # wall-clock fields of a result
RUN_FIGURES = ("days", "final_net_assets", "final_cash", "done", "seed", "horizon_days")


class WorldNotFoundError(AutoVendError):
    """The world a run was made on is not installed (the message names its hash)."""


@dataclass(frozen=True)
class Difference:
    """The first place where the replay and the folder disagree."""

    where: str  # trajectory.jsonl, run.json, daily.csv or metrics.json
    field: str  # e.g. result.accepted[0].qty, net_assets, the column of daily.csv
    recorded: Any
    replayed: Any
    day: int | None = None
    call: int | None = None  # the call's seq
    tool: str | None = None

    def message(self) -> str:
        """One line: where, day, call, field, both values."""
        at = [f"day {self.day}"] if self.day is not None else []
        if self.call is not None:
            at.append(f"call {self.call} ({self.tool})")
        place = f"{self.where}, {', '.join(at)}" if at else self.where
        return f"{place}: {self.field}: recorded {_show(self.recorded)}, replayed {_show(self.replayed)}"

    def to_json(self) -> dict[str, Any]:
        """The difference as JSON-ready values."""
        return {
            "where": self.where,
            "day": self.day,
            "call": self.call,
            "tool": self.tool,
            "field": self.field,
            "recorded": _jsonable(self.recorded),
            "replayed": _jsonable(self.replayed),
        }


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify_run`."""

    run_dir: Path
    world_hash: str
    seed: int
    days: int
    calls: int  # calls replayed
    difference: Difference | None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when everything compared equal."""
        return self.difference is None

    def to_json(self) -> dict[str, Any]:
        """What `record_verification` writes (verify.json)."""
        return {
            "verified": self.ok,
            "world_hash": self.world_hash,
            "seed": self.seed,
            "days": self.days,
            "calls": self.calls,
            "difference": None if self.difference is None else self.difference.to_json(),
            "notes": list(self.notes),
        }


def _show(value: Any) -> str:
    text = json.dumps(_jsonable(value), ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "…"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if hasattr(value, "item"):
        return value.item()
    return value


def same(a: Any, b: Any) -> bool:
    """Equal values: numbers to `RELATIVE` (bools and ints exactly), everything else exactly."""
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float) or not isinstance(b, int | float):
        return type(a) is type(b) and bool(a == b)
    if math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= RELATIVE * max(1.0, abs(a), abs(b))


def first_difference(recorded: Any, replayed: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The path of the first leaf where two JSON values differ, with both values; None when equal."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in list(dict.fromkeys([*recorded, *replayed])):
            sub = f"{path}.{key}" if path else str(key)
            if key not in recorded or key not in replayed:
                return sub, recorded.get(key, "<absent>"), replayed.get(key, "<absent>")
            found = first_difference(recorded[key], replayed[key], sub)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i, (x, y) in enumerate(zip(recorded, replayed, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        if len(recorded) != len(replayed):
            return f"{path} (length)", len(recorded), len(replayed)
        return None
    if isinstance(recorded, int | float) and isinstance(replayed, int | float) and not isinstance(recorded, bool):
        return None if same(float(recorded), float(replayed)) else (path, recorded, replayed)
    return None if recorded == replayed else (path, recorded, replayed)


# ------------------------------------------------------------------------------------------------ the world


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it (symbolic links resolved)."""
    try:
        path.resolve().relative_to(folder.resolve())
    except (OSError, ValueError):
        return False
    return True


def find_world(run_dir: Path, meta: dict[str, Any], world: str | Path | None = None) -> tuple[World, str]:
    """The world of the run, found by the hash run.json records, and where it was found.

    Only worlds this machine vouches for are candidates: `world` (a bundle folder or a world's name, given by
    the caller), the bundle at the recorded `world_path`, and the shipped and installed worlds. Nothing inside
    the run folder is one (its own `world/` bundle, a `world.pkl`, a `world_path` that points back into it):
    the folder is what is being checked, so the world it was scored on cannot come from it.
    """
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import bundle_hash, installed_bundles
    from autovend.world.names import resolve_world

    want = str(meta.get("world_hash") or "")
    if not want:
        raise RunFolderError(f"{run_dir}/{RUN_FILE} records no world_hash: without it no world can be checked")
    candidates: list[Path] = []
    if world is not None:
        given = resolve_world(world)
        if _inside(given, run_dir):
            raise WorldNotFoundError(
                f"{given} lies inside the run folder {run_dir}: the world a run is checked against must come from "
                "elsewhere (a shipped or installed world, or a bundle you keep); copy it out if you trust it"
            )
        candidates.append(given)
    recorded = meta.get("world_path")
    if isinstance(recorded, str) and recorded and world is None:
        candidates.append(Path(recorded))
    if world is None:
        candidates += installed_bundles()
    for folder in candidates:
        if _inside(folder, run_dir):
            continue
        if bundle_hash(folder) == want:
            return load_world(folder), str(folder)
    derived = _derived_world(run_dir, meta, [c for c in candidates if not _inside(c, run_dir)])
    if derived is not None:
        return derived
    if world is not None:
        raise WorldNotFoundError(f"{world} is not the world of {run_dir}: the run was made on world hash {want}")
    raise WorldNotFoundError(
        f"the world of {run_dir} is not installed: the run was made on world "
        f"{meta.get('world_name')!r} with world hash {want}; install the bundle with that hash in ./worlds "
        "(or give its folder with --world) and verify again"
    )


def _derived_world(run_dir: Path, meta: dict[str, Any], candidates: list[Path]) -> tuple[World, str] | None:
    """The world of a run on a world derived in memory, rebuilt from its recorded base and scenario; None if not.

    The base is a candidate of the recorded base hash; the world is that base changed by the recorded scenario, if
    that gives the run's world hash.

    The scenario is plain data, checked as a scenario file is (`autovend.world.scenario`); applying it runs no code.
    """
    from autovend.errors import ConfigError
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import bundle_hash
    from autovend.world.derive import derive_world
    from autovend.world.scenario import parse_scenario

    how = meta.get("derivation")
    if not isinstance(how, dict) or not isinstance(how.get("base_world_hash"), str):
        return None
    base = next((c for c in candidates if bundle_hash(c) == how["base_world_hash"]), None)
    if base is None:
        return None
    try:
        scenario = parse_scenario(how.get("scenario"), f"{run_dir}/{RUN_FILE}, derivation.scenario")
        world = derive_world(load_world(base), scenario)
    except ConfigError as exc:
        raise RunFolderError(f"{run_dir}/{RUN_FILE} records a derivation that cannot be applied: {exc}") from None
    if identity_hash(world) != meta.get("world_hash"):
        return None
    return world, f"{base} changed by scenario {scenario.name}"


# ------------------------------------------------------------------------------------------------ replay


def _result_of(tool: str, content: Any) -> Any:
    if isinstance(content, dict) and tool in IGNORED_RESULT_KEYS:
        return {k: v for k, v in content.items() if k not in IGNORED_RESULT_KEYS[tool]}
    return content


def _replay(session: Any, calls: list[dict[str, Any]], notes: list[str]) -> Difference | None:
    """Replay the calls in order; the first call whose day or result differs from the recorded one."""
    unrecorded = 0
    for rec in calls:
        seq, tool, day = rec.get("seq"), str(rec.get("tool")), rec.get("day")
        if session.day != day and not session.done:
            return Difference(TRAJECTORY_FILE, "day", day, session.day, day, seq, tool)
        args = rec.get("arguments")
        res = session.call(tool, args)
        if isinstance(args, str) and args.startswith(NOT_RECORDED):
            unrecorded += 1
            if res.ok != bool(rec.get("ok")):
                return Difference(TRAJECTORY_FILE, "ok", rec.get("ok"), res.ok, day, seq, tool)
            continue
        replayed = {"ok": res.ok, "error": res.error, "result": _result_of(tool, json.loads(res.text))}
        wanted = {"ok": rec.get("ok"), "error": rec.get("error"), "result": _result_of(tool, rec.get("result"))}
        found = first_difference(wanted, replayed)
        if found is not None:
            return Difference(TRAJECTORY_FILE, found[0], found[1], found[2], day, seq, tool)
    if unrecorded:
        notes.append(f"{unrecorded} refused calls had arguments too large to record: only their ok was compared")
    return None


def _compare_daily(recorded: Path, replayed: Path) -> Difference | None:
    if not recorded.is_file():
        return Difference(DAILY_FILE, "file", "missing", "present")
    a, b = pd.read_csv(recorded), pd.read_csv(replayed)
    if list(a.columns) != list(b.columns):
        return Difference(DAILY_FILE, "columns", list(a.columns), list(b.columns))
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b):
            return Difference(DAILY_FILE, "rows", len(a), len(b), day=i + 1)
        ra, rb = a.iloc[i].to_dict(), b.iloc[i].to_dict()
        for col in a.columns:
            va, vb = _jsonable(ra[col]), _jsonable(rb[col])
            if not same(va, vb):
                return Difference(DAILY_FILE, str(col), va, vb, day=int(rb["day"]))
    return None


def _compare_metrics(recorded: dict[str, Any], replayed: dict[str, Any]) -> Difference | None:
    for metrics in (recorded, replayed):
        metrics.get("run", {}).pop("name", None)  # the folder's name, not a result
    found = first_difference(recorded, replayed)
    return None if found is None else Difference(METRICS_FILE, found[0], found[1], found[2])


def read_meta(run_dir: Path) -> dict[str, Any]:
    """run.json of a finished run (RunFolderError otherwise)."""
    path = run_dir / RUN_FILE
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunFolderError(f"{run_dir} has no readable {RUN_FILE}; give a run folder written by autovend") from exc
    if not isinstance(meta, dict) or meta.get("format") != RUN_FORMAT:
        raise RunFolderError(f"{path} is not an AutoVend run description")
    if not meta.get("finished"):
        raise RunFolderError(f"{run_dir} holds an unfinished run; finish it (--resume) before verifying it")
    if not (run_dir / TRAJECTORY_FILE).is_file():
        raise RunFolderError(f"{run_dir} has no {TRAJECTORY_FILE}: without its tool calls the run cannot be replayed")
    return meta


def verify_run(run_dir: str | Path, world: str | Path | None = None) -> Verification:
    """Re-simulate the run in `run_dir` and compare (module docstring); `world`: its bundle, if not installed."""
    from autovend.evaluation.metrics import compute_metrics
    from autovend.session import ToolSession

    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    w, where = find_world(run_dir, meta, world)
    notes = [f"world: {where}"]
    calls = read_calls(run_dir / TRAJECTORY_FILE)
    seed, days = int(meta.get("seed", 0)), int(meta.get("days", 0))

    def done(diff: Difference | None) -> Verification:
        return Verification(run_dir, identity_hash(w), seed, days, len(calls), diff, tuple(notes))

    with tempfile.TemporaryDirectory(prefix="autovend-verify-") as tmp:
        out = Path(tmp) / run_dir.name
        session = ToolSession(w, seed=seed, trajectory_path=Path(tmp) / TRAJECTORY_FILE)
        try:
            diff = _replay(session, calls, notes)
            if diff is not None:
                return done(diff)
            save_run_data(session, out, {k: meta[k] for k in CALLER_KEYS if k in meta})
        finally:
            session.close()
        again = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
        for key in RUN_FIGURES:
            if not same(meta.get(key), again.get(key)):
                return done(Difference(RUN_FILE, key, meta.get(key), again.get(key)))
        diff = _compare_daily(run_dir / DAILY_FILE, out / DAILY_FILE)
        if diff is not None:
            return done(diff)
        metrics_path = run_dir / METRICS_FILE
        if not metrics_path.is_file():
            notes.append(f"no {METRICS_FILE} (run without its report): metrics not compared")
            return done(None)
        recorded = json.loads(metrics_path.read_text(encoding="utf-8"))
        replayed = compute_metrics(RunData.load(out, world=w))
        return done(_compare_metrics(recorded, json.loads(json.dumps(replayed))))


def record_verification(run_dir: str | Path, result: Verification) -> Path:
    """Write the outcome to RUN/verify.json (a sweep's rows and leaderboards read it)."""
    from autovend.io import atomic_write_text

    path = Path(run_dir) / VERIFY_FILE
    atomic_write_text(path, json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n")
    return path


def recorded_verification(run_dir: str | Path) -> bool | None:
    """What RUN/verify.json says: True (verified), False (differs) or None (not verified, or unreadable)."""
    try:
        value = json.loads((Path(run_dir) / VERIFY_FILE).read_text(encoding="utf-8")).get("verified")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None
