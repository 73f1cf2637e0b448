"""The record of a verification (verify.json) and whether it still holds for the folder as it is now.

A record names the verifier (its rules and AutoVend's version) and the SHA-256 of every file it compared. It
holds only for those bytes: `recorded_verification` answers True only when the record says verified, was made
by this verifier, and every file it names still has its hash (and no compared file was added or removed); a
folder changed after its verification, or verified by an older verify, counts as not verified (None). A record
is written by whoever ran the replay: a sweep keeps its own copy outside the run folder (`autovend.sweep`),
since a record inside a folder that came from elsewhere is only the folder's word.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autovend import __version__
from autovend.evaluation.runsave import (
    DAILY_FILE,
    HIDDEN_FILE,
    HTML_REPORT_FILE,
    METRICS_FILE,
    RECORDS_FILE,
    REPORT_FILE,
    RUN_FILE,
    TRAJECTORY_FILE,
)

if TYPE_CHECKING:
    from autovend.evaluation.verify.diff import Verification

VERIFY_FILE = "verify.json"  # where a verification is recorded in the run folder (`record_verification`)
RULES = 2  # 2: every file re-derived (records, hidden log, reports, tokens), lines as text, privilege by entry point
VERIFIER = {"rules": RULES, "code_version": __version__}
COMPARED: tuple[str, ...] = (RUN_FILE, TRAJECTORY_FILE, RECORDS_FILE, HIDDEN_FILE, DAILY_FILE, METRICS_FILE)
COMPARED += (REPORT_FILE, HTML_REPORT_FILE, "llm.jsonl", "llm.discarded.jsonl")


def digests(run_dir: str | Path) -> dict[str, str]:
    """SHA-256 of each file `autovend verify` compares that the folder holds."""
    out = {}
    for name in COMPARED:
        path = Path(run_dir) / name
        if path.is_file():
            h = hashlib.sha256()
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            out[name] = h.hexdigest()
    return out


def record_verification(run_dir: str | Path, result: Verification, *, also: str | Path | None = None) -> Path:
    """Write the outcome to RUN/verify.json (and to `also`, a copy kept by whoever ran it); returns RUN/verify.json."""
    from autovend.io import atomic_write_text

    content = result.to_json()
    content = {"verified": content.pop("verified"), "verifier": VERIFIER, **content}
    text = json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    path = Path(run_dir) / VERIFY_FILE
    atomic_write_text(path, text)
    if also is not None:
        Path(also).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(also), text)
    return path


def _read(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def recorded_verification(run_dir: str | Path, record: str | Path | None = None) -> bool | None:
    """True (verified) or False (differs) when the record holds for the folder now (module docstring), else None.

    record: the record to trust (default RUN/verify.json, the folder's own).
    """
    found = _read(Path(record) if record is not None else Path(run_dir) / VERIFY_FILE)
    if found is None or found.get("verifier") != VERIFIER:
        return None
    value = found.get("verified")
    if not isinstance(value, bool):
        return None
    if value and found.get("files") != digests(run_dir):
        return None  # changed since it was verified
    return value
