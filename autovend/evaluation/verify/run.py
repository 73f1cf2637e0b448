"""`verify_run`: the steps of `autovend verify`, in order, each stopping at the first difference (see the package)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from autovend.evaluation.runsave import (
    CALLER_KEYS,
    DAILY_FILE,
    HIDDEN_FILE,
    METRICS_FILE,
    RECORDS_FILE,
    RUN_FILE,
    TRAJECTORY_FILE,
    save_run_data,
)
from autovend.evaluation.verify.diff import Difference, Tampered, Verification
from autovend.evaluation.verify.folder import HEADER_KEYS, Line, json_object, read_meta, read_trajectory
from autovend.evaluation.verify.outputs import (
    OUTPUT_FILES,
    check_identity,
    check_usage,
    compare_outputs,
    compare_run_json,
)
from autovend.evaluation.verify.record import digests
from autovend.evaluation.verify.replay import CheckedSession, Checker, build_agent, replay_agent, replay_calls
from autovend.evaluation.verify.tables import compare_daily, compare_sqlite, missing
from autovend.evaluation.verify.world import find_world
from autovend.world.model import World

_NAME = re.compile(r"^[^/\\\x00]{1,255}$")


class _Steps:
    """What one verification has checked so far, its notes, and how it ends."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.notes: list[str] = []
        self.checked: list[str] = []
        self.world_hash, self.seed, self.days, self.calls = "", 0, 0, 0

    def done(self, difference: Difference | None) -> Verification:
        files = digests(self.run_dir)
        return Verification(self.run_dir, self.world_hash, self.seed, self.days, self.calls, difference,
                            tuple(self.notes), tuple(self.checked), files)  # fmt: skip


def verify_run(run_dir: str | Path, world: str | Path | None = None) -> Verification:
    """Re-derive the run in `run_dir` from its world, seed and calls, and compare every file (see the package).

    world: the run's world bundle (or a world's name), when it is not installed. Raises `RunFolderError` for a
    folder that holds no finished run and `WorldNotFoundError` when the world is not here; everything else the
    folder gets wrong is the returned `Verification`'s difference.
    """
    steps = _Steps(Path(run_dir))
    try:
        return _verify(steps, world)
    except Tampered as exc:
        return steps.done(exc.difference)


def _verify(steps: _Steps, world: str | Path | None) -> Verification:
    run_dir = steps.run_dir
    meta = read_meta(run_dir)
    steps.world_hash, steps.seed, steps.days = meta["world_hash"], meta["seed"], meta["days"]
    steps.checked.append(f"{RUN_FILE}: keys and types")
    diff = check_identity(meta)
    steps.checked.append(f"{RUN_FILE}: privilege follows the entry point {meta['agent_entry_point']}")
    if diff is not None:
        return steps.done(diff)
    evaluated = meta.get("evaluated", True)
    for name in (RECORDS_FILE, HIDDEN_FILE, DAILY_FILE, *(OUTPUT_FILES if evaluated else ())):
        if not (run_dir / name).is_file():
            return steps.done(missing(name))
    if not evaluated and not (run_dir / METRICS_FILE).exists():
        steps.notes.append("saved without its report on purpose (evaluated: false): no metrics.json or reports")
    w, where = find_world(run_dir, meta, world)
    steps.notes.insert(0, f"world: {where}")
    header, lines = read_trajectory(run_dir)
    steps.calls = len(lines)
    with tempfile.TemporaryDirectory(prefix="autovend-verify-") as tmp:
        out = Path(tmp) / _run_name(run_dir)
        return _replay_and_compare(steps, meta, w, where, header, lines, out)


def _run_name(run_dir: Path) -> str:
    """The name the run had when its report was written (metrics.json says it), else the folder's own name."""
    try:
        name = json_object(0, (run_dir / METRICS_FILE).read_text(encoding="utf-8")).get("run", {}).get("name")
    except (OSError, UnicodeDecodeError, Tampered, AttributeError):
        name = None
    ok = isinstance(name, str) and _NAME.match(name) and name not in (".", "..")
    return str(name) if ok else run_dir.resolve().name


def _replay_and_compare(
    steps: _Steps, meta: dict[str, Any], world: World, where: str, header: str, lines: list[Line], out: Path
) -> Verification:
    from autovend.evaluation.report import run_output_texts
    from autovend.evaluation.rundata import LazyTables, RunData
    from autovend.sim.hidden import HIDDEN_COLUMNS
    from autovend.sim.records import RECORD_TABLES

    run_dir = steps.run_dir
    agent, diff = build_agent(meta, world)
    if diff is not None:
        return steps.done(diff)
    out.mkdir(parents=True)
    session = CheckedSession(world, seed=meta["seed"], trajectory_path=out / TRAJECTORY_FILE)
    session.checker = checker = Checker(lines, out / TRAJECTORY_FILE)
    try:
        diff = _header(header, checker.header)
        if diff is None and agent is not None:
            steps.checked.append(f"{TRAJECTORY_FILE}: each call is the one {meta['agent_entry_point']} makes")
            diff = replay_agent(session, agent, str(meta["agent_entry_point"]))
        elif diff is None:
            diff = replay_calls(session)
        steps.checked.append(f"{TRAJECTORY_FILE}: every line (seq, day, tool, arguments, ok, result, error)")
        _count_notes(steps, checker)
        if diff is not None:
            return steps.done(diff)
        save_run_data(session, out, {k: meta[k] for k in CALLER_KEYS if k in meta})
        again = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
    finally:
        checker.close()
        session.close()
    for check, label in (
        (lambda: compare_run_json(meta, again, lines), f"{RUN_FILE}: figures, call counts, wall time"),
        (lambda: check_usage(run_dir, meta, steps.notes), f"{RUN_FILE}: token usage and cost"),
        (lambda: compare_sqlite(RECORDS_FILE, run_dir / RECORDS_FILE, out / RECORDS_FILE), RECORDS_FILE),
        (lambda: compare_sqlite(HIDDEN_FILE, run_dir / HIDDEN_FILE, out / HIDDEN_FILE), HIDDEN_FILE),
        (lambda: compare_daily(DAILY_FILE, run_dir / DAILY_FILE, out / DAILY_FILE), DAILY_FILE),
    ):
        steps.checked.append(label)
        diff = check()
        if diff is not None:
            return steps.done(diff)
    if not any((run_dir / name).exists() for name in OUTPUT_FILES):
        return steps.done(None)
    # the report is made from run.json as the runner had it then: its own facts, the replay's figures, and the
    # world this verify vouches for (never a world_path of the folder's choosing: it names the reference)
    report_meta = {**meta, **{k: again[k] for k in again if k not in CALLER_KEYS}, "world_path": where}
    report_meta["finished"] = False
    records = LazyTables(out / RECORDS_FILE, tuple(t.name for t in RECORD_TABLES), hidden=False)
    hidden = LazyTables(out / HIDDEN_FILE, tuple(HIDDEN_COLUMNS), hidden=True)
    run = RunData(world, report_meta, records, hidden, [line.rec for line in lines], out)
    _, texts = run_output_texts(run)
    steps.checked.append(", ".join(OUTPUT_FILES) + ": regenerated")
    return steps.done(compare_outputs(run_dir, texts, bool(meta.get("evaluated", True)), steps.notes))


def _header(recorded: str, replayed: str) -> Difference | None:
    """The trajectory's first line against the replay's (the AutoVend version that wrote it aside)."""
    a, b = json.loads(recorded), json.loads(replayed)
    for key in HEADER_KEYS:
        if key != "autovend_version" and a.get(key) != b.get(key):
            return Difference(TRAJECTORY_FILE, f"header.{key}", a.get(key), b.get(key), line=1)
    return None


def _count_notes(steps: _Steps, checker: Checker) -> None:
    if checker.counts["unrecorded"]:
        steps.notes.append(
            f"{checker.counts['unrecorded']} refused calls had arguments too large to record: the line holds why, "
            "and their error text was re-derived from it"
        )
    if checker.counts["tolerance"]:
        steps.notes.append(f"{checker.counts['tolerance']} trajectory lines equal to 1e-9 relative, not to the digit")
