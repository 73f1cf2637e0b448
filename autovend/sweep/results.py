"""results.csv of a sweep: one row per finished run, and one per run the time limit stopped.

A finished run's row is read back from its run folder (run.json and metrics.json); a run the spec's `timeout_s`
stopped has a row of status "timed out" with its values empty (it resumes when the sweep runs again).

Columns: world (label), world_hash, agent (label), agent_name (as run.json records it), seed, days,
horizon_days, every headline metric of metrics.json (`autovend.evaluation.definitions.HEADLINE`, in its
stored units: net assets in the world's currency, shares as fractions), net_asset_growth, what the run's group adds
(`autovend.sweep.standing`): normalised_score ((agent - hold) / (oracle - hold)), paired_vs (the agent
of the group with the highest mean net assets) and paired_difference (net assets minus that agent's on
the same seed), then the failure-mode counts, the token counts and api_cost_usd of LLM runs,
wall_time_s, resumed_from_day, privileged (true for the oracle, which reads the hidden demand model),
verified (true / false: `autovend verify` re-simulated the run and found it equal / not; empty: not
verified), status ("finished", or "timed out" for a run stopped by the time limit, whose other values are empty)
and the run folder relative to the sweep's folder. Rows follow the spec's order; an empty
cell is a value the run does not have (a metric that cannot be computed, tokens of a baseline).
Nothing non-finite is written.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autovend.evaluation.definitions import FAILURE_LABELS, HEADLINE
from autovend.evaluation.verify import recorded_verification
from autovend.io import atomic_write_text
from autovend.sweep.tasks import TIMED_OUT_FILE, RunTask, read_run_json, verification_record

RESULTS_FILE = "results.csv"
TOKEN_KEYS = ("requests", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens")
METRIC_KEYS = (*HEADLINE, "net_asset_growth")
STANDING_KEYS = ("normalised_score", "paired_vs", "paired_difference")
COLUMNS = (
    "world",
    "world_hash",
    "agent",
    "agent_name",
    "seed",
    "days",
    "horizon_days",
    *METRIC_KEYS,
    *STANDING_KEYS,
    *FAILURE_LABELS,
    *TOKEN_KEYS,
    "api_cost_usd",
    "wall_time_s",
    "resumed_from_day",
    "privileged",
    "verified",
    "status",
    "run_dir",
)
FINISHED, TIMED_OUT = "finished", "timed out"  # the values of the status column

Number = int | float | None


@dataclass(frozen=True)
class ResultRow:
    """One finished run of a sweep (see the module docstring for the fields)."""

    world: str
    world_hash: str
    agent: str
    agent_name: str
    seed: int
    days: int
    horizon_days: int
    metrics: dict[str, Number]  # METRIC_KEYS
    failures: dict[str, Number]  # FAILURE_LABELS keys
    tokens: dict[str, Number]  # TOKEN_KEYS (None for agents without token usage)
    api_cost_usd: float | None
    wall_time_s: float | None
    resumed_from_day: int | None
    run_dir: str  # relative to the sweep's folder
    meta: dict[str, Any]  # run.json, for the comparability rules of the leaderboard
    verified: bool | None = None  # the sweep's record of its replay (`tasks.verification_record`); None: none
    daily_fees: float | None = None  # the daily fees paid over the run (what the hold policy pays)
    status: str = FINISHED  # or TIMED_OUT: a run stopped by the spec's timeout_s (no values but its identity)
    note: str = ""  # why a run that did not finish stopped

    @property
    def finished(self) -> bool:
        """True for a finished run (a row with values); False for a timed-out one."""
        return self.status == FINISHED

    @property
    def privileged(self) -> bool:
        """True for a run of the privileged oracle: marked so, by the oracle's own entry point (never a name)."""
        from autovend.agents.identity import PRIVILEGED_ENTRY_POINTS

        return self.meta.get("privileged") is True and self.meta.get("agent_entry_point") in PRIVILEGED_ENTRY_POINTS

    @property
    def currency(self) -> str:
        """The world's currency as run.json records it ("" for a run folder written before it did)."""
        return str(self.meta.get("currency") or "")

    @property
    def net_assets(self) -> float | None:
        """Net assets at the close of the last day (in the world's currency)."""
        value = self.metrics.get("net_assets")
        return None if value is None else float(value)

    def cells(self, standing: tuple[Number | str, ...] = (None, None, None)) -> list[Number | str | bool | None]:
        """The row's values in `COLUMNS` order; `standing`: the values of `STANDING_KEYS`."""
        head: list[Number | str | bool | None] = [self.world, self.world_hash, self.agent, self.agent_name]
        head += [self.seed, self.days, self.horizon_days]
        return [
            *head,
            *(self.metrics.get(k) for k in METRIC_KEYS),
            *standing,
            *(self.failures.get(k) for k in FAILURE_LABELS),
            *(self.tokens.get(k) for k in TOKEN_KEYS),
            self.api_cost_usd,
            self.wall_time_s,
            self.resumed_from_day,
            self.privileged,
            self.verified,
            self.status,
            self.run_dir,
        ]


def _number(value: Any) -> Number:
    """A finite int or float, else None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _relative(run_dir: Path, out_dir: str | Path) -> str:
    try:
        return str(run_dir.relative_to(Path(out_dir).resolve()))
    except ValueError:
        return str(run_dir)


def timed_out_row(task: RunTask, out_dir: str | Path) -> ResultRow | None:
    """The row of a run the spec's time limit stopped (RUN/timed_out.json), or None if the last try was not."""
    run_dir = Path(task.run_dir)
    try:
        note = json.loads((run_dir / TIMED_OUT_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    why = str(note.get("why", "")) if isinstance(note, dict) else ""
    empty = dict.fromkeys(METRIC_KEYS)
    return ResultRow(
        world=task.world,
        world_hash=task.world_hash,
        agent=task.agent.label,
        agent_name="",
        seed=task.seed,
        days=task.days,
        horizon_days=task.horizon_days,
        metrics=empty,
        failures=dict.fromkeys(FAILURE_LABELS),
        tokens=dict.fromkeys(TOKEN_KEYS),
        api_cost_usd=None,
        wall_time_s=None,
        resumed_from_day=None,
        run_dir=_relative(run_dir, out_dir),
        meta={},
        status=TIMED_OUT,
        note=why,
    )


def read_result(task: RunTask, out_dir: str | Path) -> ResultRow | None:
    """The row of a task whose run folder holds a finished run (or one the time limit stopped), else None."""
    run_dir = Path(task.run_dir)
    meta = read_run_json(run_dir)
    if meta is None or not meta.get("finished"):
        return timed_out_row(task, out_dir)
    try:
        metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        metrics = {}
    usage = meta.get("token_usage") or {}
    failures = metrics.get("failure_counts") or {}
    resumed = meta.get("resumed_from_day")
    rel = _relative(run_dir, out_dir)
    return ResultRow(
        world=task.world,
        world_hash=str(meta.get("world_hash") or ""),
        agent=task.agent.label,
        agent_name=str(meta.get("agent") or ""),
        seed=int(meta.get("seed", task.seed)),
        days=int(meta.get("days", 0)),
        horizon_days=int(meta.get("horizon_days", 0)),
        metrics={k: _number(metrics.get(k)) for k in METRIC_KEYS},
        failures={k: _number(failures.get(k)) for k in FAILURE_LABELS},
        tokens={k: _number(usage.get(k)) for k in TOKEN_KEYS},
        api_cost_usd=_number(meta.get("api_cost_usd")),
        wall_time_s=_number(meta.get("wall_time_s")),
        resumed_from_day=None if resumed is None else int(resumed),
        run_dir=rel,
        meta=meta,
        verified=recorded_verification(run_dir, verification_record(task)),
        daily_fees=_number(((metrics.get("details") or {}).get("totals") or {}).get("daily_fee")),
    )


def _cell(value: Number | str | bool | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    return str(value)


def results_csv(rows: list[ResultRow], standing: list[tuple[Number | str, ...]] | None = None) -> str:
    """The text of results.csv (header and one line per row); `standing`: each row's `STANDING_KEYS` values."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for i, row in enumerate(rows):
        extra = standing[i] if standing is not None else (None, None, None)
        writer.writerow([_cell(v) for v in row.cells(extra)])
    return buf.getvalue()


def write_results(
    rows: list[ResultRow], out_dir: str | Path, standing: list[tuple[Number | str, ...]] | None = None
) -> Path:
    """Write OUT/results.csv (replaced atomically); return its path."""
    path = Path(out_dir) / RESULTS_FILE
    atomic_write_text(path, results_csv(rows, standing))
    return path
