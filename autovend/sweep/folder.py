"""A sweep's output folder: what a sweep did not write there it never overwrites without `--force`.

This is the rule of every output folder (`autovend.io`).
A sweep writes its folder bit by bit and is run again to finish it, so it is not replaced whole like the
other outputs: at its start the folder must be absent, empty, or an earlier sweep's, recognised by the
marker (`OUTPUT_MARKER`, kind `sweep`) written there before anything else; a folder holding nothing but run
folders under runs/ is taken too. An earlier sweep's folder holds the marker, results.csv, paired.csv,
leaderboard.md, leaderboard.html (with variants also robustness.md, .json and .html, and under variants/ their
bundles), under runs/ the run folders (each guarded by the runner's own rules) and under verified/ the records of
the replays it made of them. Anything else (a user's own results.csv, a folder of other files, a folder of another
kind of output) is refused unless `force`; with `force` the result files are replaced and every other file is left
as it is. The folder never is, holds or lies inside an input (a world, the spec).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from autovend.errors import OutputExistsError
from autovend.io import (
    FORCE_FIX,
    OUTPUT_MARKER,
    OutputKind,
    OutputMarker,
    atomic_write_bytes,
    check_output_dir,
    read_marker,
    tree_files,
)
from autovend.sweep.leaderboard import LEADERBOARD_FILE
from autovend.sweep.leaderboard_html import LEADERBOARD_HTML_FILE
from autovend.sweep.results import RESULTS_FILE
from autovend.sweep.robustness import ROBUSTNESS_FILES
from autovend.sweep.standing import PAIRED_FILE
from autovend.sweep.variants import VARIANTS_DIR

SWEEP_FILES = (RESULTS_FILE, PAIRED_FILE, LEADERBOARD_FILE, LEADERBOARD_HTML_FILE, *ROBUSTNESS_FILES)
RUNS_DIR = "runs"
VERIFIED_DIR = "verified"  # the sweep's records of its replays (`autovend.sweep.tasks.verification_record`)
MAX_NAMES_SHOWN = 5


def sweep_refusal(out: Path) -> str | None:
    """Why `out` may not take (or continue) a sweep without --force, or None if it may."""
    if not out.exists():
        return None
    if not out.is_dir():
        return f"{out} is a file, not a folder; {FORCE_FIX}"
    files, dirs = tree_files(out)
    if not files:
        return None
    marker = read_marker(out)
    runs = f"{RUNS_DIR}/"
    if marker is None and all(f.startswith(runs) for f in files):
        return None  # only run folders (each guarded by the runner): e.g. runs copied in, or a sweep of old
    if marker is None:
        return (
            f"output folder {out} is not empty and is not an earlier sweep's folder (no {OUTPUT_MARKER} marker; a "
            f"sweep would overwrite {', '.join(n for n in SWEEP_FILES if n in files) or 'its result files'} there); "
            f"{FORCE_FIX}"
        )
    if marker.kind != OutputKind.SWEEP:
        return f"output folder {out} holds a {marker.kind} output, not a sweep; {FORCE_FIX}"
    ours = (runs, f"{VERIFIED_DIR}/", f"{VARIANTS_DIR}/")  # runs, replay records, the variants' bundles
    foreign = sorted(
        [f for f in files if f not in (OUTPUT_MARKER, *SWEEP_FILES) and not f.startswith(ours)]
        + [d for d in dirs if d not in (RUNS_DIR, VERIFIED_DIR, VARIANTS_DIR) and not d.startswith(ours)]
    )
    if foreign:
        shown = ", ".join(foreign[:MAX_NAMES_SHOWN]) + (" ..." if len(foreign) > MAX_NAMES_SHOWN else "")
        return f"output folder {out} holds files a sweep did not write there: {shown}; move them out, {FORCE_FIX}"
    return None


def check_sweep_folder(out: str | Path, *, force: bool = False, inputs: Iterable[str | Path | None] = ()) -> None:
    """Raise `OutputExistsError` unless `out` may take a sweep (see the module docstring); nothing is written."""
    out = Path(out)
    check_output_dir(out, OutputKind.SWEEP, force=True, inputs=inputs)  # inputs only: refused even with force
    reason = sweep_refusal(out) if not force else None
    if force and out.exists() and not out.is_dir():
        reason = f"{out} is a file, not a folder; choose another --out"
    if reason is not None:
        raise OutputExistsError(reason)


def mark_sweep_folder(out: str | Path) -> None:
    """Make `out` and write the sweep's marker in it (once the sweep is checked and about to write)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    marker = OutputMarker(kind=OutputKind.SWEEP, files=SWEEP_FILES)
    if read_marker(out) != marker:
        atomic_write_bytes(out / OUTPUT_MARKER, marker.to_bytes())
