"""Paired comparisons of agents over seeds: the mean difference, its interval and the difference the seeds can detect.

Runs of two agents on the same world, horizon and seed see the same demand draws (the simulator's
uniforms depend only on the seed, the day, the machine and the product: common random numbers), so
the difference of their results on one seed is mostly the agents' doing. Pairing by seed removes the
seed-to-seed swing both share; the paired interval is then narrower than the unpaired one whenever
the agents' results move together over seeds.

For agents a and b, a metric, and the n seeds both were run on (d_s = a_s - b_s):

- `mean_difference` = mean of d_s; `ci_low`, `ci_high`: its 95% **t interval**, mean +- t(0.975, n - 1) sd(d) / sqrt(n)
  (Student's t over seeds; no bootstrap: with 3-10 seeds a bootstrap interval is too narrow);
- `unpaired_low`, `unpaired_high`: the 95% Welch t interval of mean(a) - mean(b) on the same runs, as if
  the seeds had been drawn independently for each agent (beside the paired one, to show what pairing buys);
- `min_detectable_difference`: the smallest true mean difference a two-sided paired t-test at the 5% level
  detects with 80% power with n seeds, (t(0.975, n - 1) + t(0.80, n - 1)) sd(d) / sqrt(n), with the
  observed sd(d); `min_detectable_difference_5`, `_10`: the same at 5 and 10 seeds.

With one common seed nothing but the difference is defined (the rest is None); with sd(d) = 0 the
interval is the point. `rank` turns intervals into leaderboard ranks: an agent's rank is one plus the
number of agents whose paired interval against it lies wholly above zero, so agents whose intervals
overlap zero share a rank (shown "2=").
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

INTERVAL = "t"  # the method of `ci_low`/`ci_high`: Student's t over seeds
LEVEL = 0.95
POWER = 0.80
SEED_COUNTS = (5, 10)  # the other seed counts a minimum detectable difference is given for

# a run's results as `paired_differences` reads them: agent label -> seed -> metric -> value
Results = Mapping[str, Mapping[int, Mapping[str, float | int | None]]]


@dataclass(frozen=True)
class PairedDifference:
    """Agent a minus agent b on one metric over their common seeds (see the module docstring)."""

    a: str
    b: str
    metric: str
    n_seeds: int
    seeds: tuple[int, ...]
    mean_difference: float
    ci_low: float | None
    ci_high: float | None
    sd_difference: float | None
    unpaired_low: float | None
    unpaired_high: float | None
    min_detectable_difference: float | None
    min_detectable_difference_5: float | None
    min_detectable_difference_10: float | None
    interval: str = INTERVAL

    @property
    def significant(self) -> bool:
        """Whether the paired interval excludes zero (False when there is no interval)."""
        return self.ci_low is not None and self.ci_high is not None and (self.ci_low > 0 or self.ci_high < 0)

    def to_json(self) -> dict[str, Any]:
        """The JSON entry of comparison.json's `paired` list (the issue's fields first, then the rest)."""
        out = asdict(self)
        out["seeds"] = list(self.seeds)
        return out


def _t(q: float, df: float) -> float:
    from scipy import stats  # here, not at import: reading runs stays free of scipy

    return float(stats.t.ppf(q, df))


def min_detectable(sd: float, n: int, level: float = LEVEL, power: float = POWER) -> float | None:
    """The smallest mean difference a two-sided paired t-test detects with `power` at n seeds (None below 2 seeds)."""
    if n < 2:
        return None
    return (_t(1 - (1 - level) / 2, n - 1) + _t(power, n - 1)) * sd / math.sqrt(n)


def welch_interval(xa: Sequence[float], xb: Sequence[float], level: float = LEVEL) -> tuple[float, float] | None:
    """The Welch t interval of mean(xa) - mean(xb) (None with fewer than 2 values each)."""
    na, nb = len(xa), len(xb)
    if na < 2 or nb < 2:
        return None
    va, vb = statistics.variance(xa) / na, statistics.variance(xb) / nb
    diff = statistics.fmean(xa) - statistics.fmean(xb)
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, diff
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = _t(1 - (1 - level) / 2, df) * se
    return diff - half, diff + half


def paired_difference(
    a: str, b: str, metric: str, xa: Mapping[int, float], xb: Mapping[int, float]
) -> PairedDifference:
    """a minus b on `metric` over the seeds both have (values by seed)."""
    seeds = tuple(sorted(set(xa) & set(xb)))
    if not seeds:
        raise ValueError(f"{a} and {b} have no seed in common")
    d = [float(xa[s]) - float(xb[s]) for s in seeds]
    n = len(d)
    mean = statistics.fmean(d)
    if n < 2:
        return PairedDifference(a, b, metric, n, seeds, mean, None, None, None, None, None, None, None, None)
    sd = statistics.stdev(d)
    half = _t(1 - (1 - LEVEL) / 2, n - 1) * sd / math.sqrt(n)
    unpaired = welch_interval([float(xa[s]) for s in seeds], [float(xb[s]) for s in seeds])
    assert unpaired is not None
    return PairedDifference(
        a,
        b,
        metric,
        n,
        seeds,
        mean,
        mean - half,
        mean + half,
        sd,
        unpaired[0],
        unpaired[1],
        min_detectable(sd, n),
        min_detectable(sd, SEED_COUNTS[0]),
        min_detectable(sd, SEED_COUNTS[1]),
    )


def _values(results: Results, agent: str, metric: str) -> dict[int, float]:
    out = {}
    for seed, row in results[agent].items():
        v = row.get(metric)
        if v is not None and not (isinstance(v, float) and not math.isfinite(v)):
            out[int(seed)] = float(v)
    return out


def paired_differences(
    results: Results, metrics: Sequence[str], order: Sequence[str] | None = None
) -> list[PairedDifference]:
    """Every pair of agents (a before b in `order`, default: by mean net assets, best first) on every metric.

    A metric is left out for a pair when either agent lacks it on a common seed (e.g. API efficiency of
    agents without API cost); a pair without a common seed is left out.
    """
    agents = list(order) if order is not None else rank_order(results)
    out = []
    for i, a in enumerate(agents):
        for b in agents[i + 1 :]:
            common = set(results[a]) & set(results[b])
            if not common:
                continue
            for metric in metrics:
                xa, xb = _values(results, a, metric), _values(results, b, metric)
                if not common <= set(xa) or not common <= set(xb):
                    continue
                out.append(paired_difference(a, b, metric, xa, xb))
    return out


def rank_order(results: Results, metric: str = "net_assets") -> list[str]:
    """Agents by their mean of `metric` over their seeds, best first (agents without it last, in given order)."""

    def key(agent: str) -> float:
        xs = list(_values(results, agent, metric).values())
        return -statistics.fmean(xs) if xs else math.inf

    return sorted(results, key=key)


def ranks(order: Sequence[str], paired: Sequence[PairedDifference], metric: str = "net_assets") -> dict[str, str]:
    """Each agent's rank (module docstring): '1', '2=', ... ('=' where it is shared)."""
    better = {a: 0 for a in order}
    for p in paired:
        if p.metric != metric or not p.significant:
            continue
        winner, loser = (p.a, p.b) if p.mean_difference > 0 else (p.b, p.a)
        better[loser] += 1
    numbers = {a: 1 + better[a] for a in order}
    counts = {n: list(numbers.values()).count(n) for n in numbers.values()}
    return {a: f"{n}=" if counts[n] > 1 else str(n) for a, n in numbers.items()}


MAX_LABEL_CHARS = 60


def agent_labels(agents: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[list[str], dict[str, str]]:
    """A label per run from its agent's name and configuration, telling configurations of one name apart.

    An agent name run with one configuration keeps its name; with several, each gets the settings that
    differ among them, `baseline (cycle_rule="fixed")`, or `baseline (config 2)` when that is longer than
    `MAX_LABEL_CHARS` (configurations numbered in order of appearance). Returns the labels and, for each
    label that is not a bare name, its differing settings as text.
    """
    configs: dict[str, list[str]] = {}
    texts = [json.dumps(dict(config), sort_keys=True, default=str) for _, config in agents]
    for (name, _), text in zip(agents, texts, strict=True):
        if text not in configs.setdefault(name, []):
            configs[name].append(text)
    labels: list[str] = []
    settings: dict[str, str] = {}
    for (name, _), text in zip(agents, texts, strict=True):
        seen = configs[name]
        if len(seen) == 1:
            labels.append(name)
            continue
        parsed = [json.loads(t) for t in seen]
        keys = sorted({k for c in parsed for k in c if len({json.dumps(c.get(k), sort_keys=True) for c in parsed}) > 1})
        cfg = json.loads(text)
        differing = ", ".join(f"{k}={json.dumps(cfg.get(k))}" for k in keys)
        label = f"{name} ({differing})"
        if len(label) > MAX_LABEL_CHARS:
            label = f"{name} (config {seen.index(text) + 1})"
        labels.append(label)
        settings[label] = differing
    return labels, settings


def paired_json(paired: Sequence[PairedDifference]) -> list[dict[str, Any]]:
    """comparison.json's `paired` list."""
    return [p.to_json() for p in paired]


def dumps(obj: Any) -> str:
    """JSON text with NaN/inf as null (never written: the statistics are finite or None)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
