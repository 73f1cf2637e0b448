"""Where each agent of a sweep stands: paired differences over seeds, tie-aware ranks and normalised scores.

Per comparable group of runs (one world hash at one length, as the leaderboard pools them: `group_key`):

- `paired`: every pair of agents on net assets and every headline metric over their common seeds
  (`autovend.evaluation.paired`: mean difference, 95% t interval, unpaired Welch interval, the minimum
  detectable difference at the seeds used and at 5 and 10 seeds), best agent first;
- `ranks`: by mean net assets, an agent sharing its rank with those its paired interval cannot tell apart;
- each run's normalised score (agent - hold) / (oracle - hold) (`autovend.evaluation.headroom`): hold is the
  start cash less the run's daily fees; the oracle's net assets come from the sweep's own oracle run of that
  seed, else from the world's manifest (`autovend world ship --oracle-run`); none otherwise;
- each run's paired difference to the group's leader on the same seed (`paired_vs`, `paired_difference`).

results.csv carries the last two per run (`standing_cells`); paired.csv (`write_paired`) holds every paired
difference, one line per group, pair of agents and metric, with the fields of comparison.json's `paired`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autovend.evaluation.definitions import HEADLINE
from autovend.evaluation.headroom import manifest_references, normalised_score
from autovend.evaluation.paired import PairedDifference, paired_differences, rank_order, ranks
from autovend.io import atomic_write_text
from autovend.sweep.results import ResultRow

GroupKey = tuple[str, str, int, int]
PAIRED_METRICS = tuple(HEADLINE)


def group_key(row: ResultRow) -> GroupKey:
    """The comparable group of a run: world label, world hash, days played, horizon."""
    return (row.world, row.world_hash, row.days, row.horizon_days)


@dataclass(frozen=True)
class RowStanding:
    """What a results.csv row adds from the other runs of its group."""

    normalised_score: float | None
    paired_vs: str | None  # the group's leader, against which the row is paired (None for the leader itself)
    paired_difference: float | None  # net assets minus the leader's on the same seed


@dataclass(frozen=True)
class GroupStanding:
    """The paired differences and ranks of one group."""

    order: tuple[str, ...]  # agents by mean net assets, best first
    paired: tuple[PairedDifference, ...]
    ranks: dict[str, str]


def _results(rows: Sequence[ResultRow]) -> dict[str, dict[int, dict[str, float | int | None]]]:
    out: dict[str, dict[int, dict[str, float | int | None]]] = {}
    for r in rows:
        out.setdefault(r.agent, {})[r.seed] = dict(r.metrics)
    return out


def group_standing(rows: Sequence[ResultRow]) -> GroupStanding:
    """Paired differences and ranks of the runs of one group."""
    results = _results(rows)
    order = rank_order(results)
    paired = paired_differences(results, PAIRED_METRICS, order)
    return GroupStanding(tuple(order), tuple(paired), ranks(order, paired))


def standings(rows: Sequence[ResultRow]) -> dict[GroupKey, GroupStanding]:
    """`group_standing` of every group, by its key."""
    groups: dict[GroupKey, list[ResultRow]] = {}
    for r in rows:
        groups.setdefault(group_key(r), []).append(r)
    return {key: group_standing(group) for key, group in groups.items()}


def _hold(row: ResultRow) -> float | None:
    start, fees = row.meta.get("start_cash"), row.daily_fees
    return None if start is None or fees is None else float(start) - fees


def _oracle(row: ResultRow, rows: Sequence[ResultRow]) -> float | None:
    for r in rows:
        # the oracle's run by its entry point, and one this sweep's replay found equal: a reference sets every score
        if group_key(r) == group_key(row) and r.seed == row.seed and r.privileged and r.verified is True:
            return r.net_assets
    series = manifest_references(row.meta.get("world_path")).get(row.seed)
    return series[row.days - 1] if series is not None and len(series) >= row.days >= 1 else None


def row_standings(rows: Sequence[ResultRow]) -> list[RowStanding]:
    """Each row's normalised score and paired difference to its group's leader (module docstring)."""
    leaders = {key: g.order[0] if g.order else None for key, g in standings(rows).items()}
    net = {(group_key(r), r.agent, r.seed): r.net_assets for r in rows}
    out = []
    for r in rows:
        hold, oracle = _hold(r), _oracle(r, rows)
        score = None if hold is None or oracle is None else normalised_score(r.net_assets, hold, oracle)
        leader = leaders[group_key(r)]
        mine = r.net_assets
        theirs = None if leader is None else net.get((group_key(r), leader, r.seed))
        if leader is None or leader == r.agent or mine is None or theirs is None:
            out.append(RowStanding(score, None, None))
        else:
            out.append(RowStanding(score, leader, mine - theirs))
    return out


def standing_cells(rows: Sequence[ResultRow]) -> list[tuple[float | str | None, ...]]:
    """Each row's values of results.csv's `STANDING_KEYS` (normalised_score, paired_vs, paired_difference)."""
    return [(s.normalised_score, s.paired_vs, s.paired_difference) for s in row_standings(rows)]


PAIRED_FILE = "paired.csv"
PAIRED_COLUMNS = (
    "world",
    "world_hash",
    "days",
    "a",
    "b",
    "metric",
    "n_seeds",
    "mean_difference",
    "ci_low",
    "ci_high",
    "unpaired_low",
    "unpaired_high",
    "min_detectable_difference",
    "min_detectable_difference_5",
    "min_detectable_difference_10",
    "interval",
)


def paired_csv(rows: Sequence[ResultRow]) -> str:
    """The text of paired.csv: every group's paired differences, one line per pair of agents and metric."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(PAIRED_COLUMNS)
    for (world, world_hash, days, _), g in standings(rows).items():
        for p in g.paired:
            entry = p.to_json()
            cells = [world, world_hash, days, *(entry[k] for k in PAIRED_COLUMNS[3:])]
            writer.writerow(["" if v is None else repr(v) if isinstance(v, float) else str(v) for v in cells])
    return buf.getvalue()


def write_paired(rows: Sequence[ResultRow], out_dir: str | Path) -> Path:
    """Write OUT/paired.csv (replaced atomically); return its path."""
    path = Path(out_dir) / PAIRED_FILE
    atomic_write_text(path, paired_csv(rows))
    return path
