"""A validation as a world carries it: read from a validation folder, checked, and written into README and manifest.

`autovend world ship --validation DIR` reads `metrics.json`, `verdict.json` and `provenance.json` of the
source's held-out validation (`autovend validate`). Every number it prints must be finite or absent; the
verdict and the shelves must be the documented values. The world's README then opens with the verdict and
its key intervals (so a world that is not "validated" says so in its first lines), and the manifest keeps
the verdict for `autovend world list` and `world info`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autovend.errors import ExportError
from autovend.marks import counted

VERDICTS = ("validated", "not_distinguishable", "worse_than_reference")
SHELVES = ("inventory", "pre_window", "mixed")
# the verdict's key comparisons (autovend.validation.verdict.KEY_COMPARISONS, a part this layer cannot import)
KEY = (
    ("persistence", "wape"),
    ("naive", "wape"),
    ("persistence", "wape_product"),
    ("reversed_popularity", "wape_product"),
)
WORDS = {
    "validated": "validated",
    "not_distinguishable": "not distinguishable",
    "worse_than_reference": "worse than a reference",
}
SHELF_WORDS = {
    "inventory": "shelves from inventory records",
    "pre_window": "pre-window shelves (sales-only records)",
    "mixed": "inventory and pre-window shelves",
}
REVALIDATE = "re-run `autovend validate SOURCE -o DIR` and pass DIR"


@dataclass(frozen=True)
class ShippedValidation:
    """What a world keeps of its source's validation."""

    verdict: str
    shelves: str
    test_weeks: int
    test_start: str
    test_end: str
    n_machines: int
    metrics: dict[str, Any]
    key: list[dict[str, Any]]  # the verdict's three comparisons
    resampling: dict[str, Any] | None = None  # a one- or two-machine source's week bootstrap (None: machines)

    def manifest_entry(self) -> dict[str, Any]:
        """The manifest's `validation` object (with `resampling` only when the intervals are over weeks)."""
        entry = {
            "verdict": self.verdict,
            "shelves": self.shelves,
            "test_weeks": self.test_weeks,
            "n_machines": self.n_machines,
            "key": self.key,
        }
        if self.resampling is not None:
            entry["resampling"] = self.resampling
        return entry

    @property
    def interval_words(self) -> str:
        """Which bootstrap the intervals come from, for the README."""
        return interval_words(self.resampling)


def interval_words(resampling: Any) -> str:
    """The README's words for the intervals: machine-cluster, or the week bootstrap of verdict.json's `resampling`."""
    if not isinstance(resampling, dict) or resampling.get("unit") != "weeks":
        return "95% machine-cluster bootstrap interval"
    if not resampling.get("resamples"):
        return "no interval (too few machines and test weeks to resample)"
    these = "this machine" if resampling.get("n_machines") == 1 else "these machines"
    return (
        f"95% week-bootstrap interval (circular blocks of {resampling.get('block_weeks')} of the "
        f"{resampling.get('n_weeks')} test weeks, the machines held together: it speaks for {these} only)"
    )


def _resampling(verdict: dict[str, Any], where: Path) -> dict[str, Any] | None:
    """verdict.json's `resampling` (absent: the machine-cluster bootstrap), checked."""
    r = verdict.get("resampling")
    if r is None:
        return None
    fields = ("n_weeks", "block_weeks", "resamples", "n_machines")
    if not isinstance(r, dict) or r.get("unit") != "weeks" or not all(isinstance(r.get(f), int) for f in fields):
        raise ExportError(f"{where}: resampling {r!r} is not a week bootstrap's description; {REVALIDATE}")
    return {"unit": "weeks", **{f: r[f] for f in fields}}


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ExportError(f"{path} is missing: --validation needs a validation folder; {REVALIDATE}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExportError(f"{path} is not readable JSON ({exc}); {REVALIDATE}") from exc


def _finite_or_none(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ExportError(f"{where} is {value!r}, not a finite number or null; {REVALIDATE}")
    return float(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ExportError(f"{where} is {value!r}, not a positive whole number; {REVALIDATE}")
    return value


def read_validation(path: str | Path) -> ShippedValidation:
    """The validation in folder `path` (or the folder of `path` if it names its metrics.json), checked."""
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    metrics, verdict, prov = (_load(folder / f"{n}.json") for n in ("metrics", "verdict", "provenance"))
    for name, obj in (("metrics.json", metrics), ("verdict.json", verdict), ("provenance.json", prov)):
        if not isinstance(obj, dict):
            raise ExportError(f"{folder / name} is not a JSON object; {REVALIDATE}")
    if verdict.get("verdict") not in VERDICTS:
        raise ExportError(f"{folder / 'verdict.json'}: verdict {verdict.get('verdict')!r} is not one of {VERDICTS}")
    if verdict.get("shelves") not in SHELVES:
        raise ExportError(f"{folder / 'verdict.json'}: shelves {verdict.get('shelves')!r} is not one of {SHELVES}")
    comps = verdict.get("comparisons")
    if not isinstance(comps, list) or not all(isinstance(c, dict) for c in comps):
        raise ExportError(f"{folder / 'verdict.json'} has no list of comparisons; {REVALIDATE}")
    key = []
    for against, metric in KEY:
        c = next((c for c in comps if c.get("against") == against and c.get("metric") == metric), None)
        if c is None:
            raise ExportError(f"{folder / 'verdict.json'} lacks the comparison with {against} on {metric}")
        entry = {"against": against, "metric": metric, "better": c.get("better")}
        for field in ("model", "other", "difference", "ci_low", "ci_high", "p_value"):
            entry[field] = _finite_or_none(c.get(field), f"{folder / 'verdict.json'}: {against} {metric} {field}")
        if entry["better"] not in (True, False, None):
            raise ExportError(f"{folder / 'verdict.json'}: {against} {metric} better is {entry['better']!r}")
        key.append(entry)
    shown = {}
    for k in ("volume_error", "wape", "wape_product", "tvd", "spearman"):
        shown[k] = _finite_or_none(metrics.get(k), f"{folder / 'metrics.json'}: {k}")
        ci = metrics.get("intervals", {}).get(k, {}) if isinstance(metrics.get("intervals"), dict) else {}
        for side in ("low", "high"):
            shown[f"{k}_{side}"] = _finite_or_none(ci.get(side), f"{folder / 'metrics.json'}: intervals.{k}.{side}")
        for ref in ("persistence", "naive"):
            ref_metrics = metrics.get(ref) if isinstance(metrics.get(ref), dict) else {}
            shown[f"{ref}_{k}"] = _finite_or_none(ref_metrics.get(k), f"{folder / 'metrics.json'}: {ref}.{k}")
    for field in ("test_start", "test_end"):
        if not isinstance(prov.get(field), str):
            raise ExportError(f"{folder / 'provenance.json'} lacks {field}; {REVALIDATE}")
    return ShippedValidation(
        verdict=verdict["verdict"],
        shelves=verdict["shelves"],
        test_weeks=_count(metrics.get("test_weeks"), f"{folder / 'metrics.json'}: test_weeks"),
        test_start=prov["test_start"],
        test_end=prov["test_end"],
        n_machines=_count(metrics.get("n_machines"), f"{folder / 'metrics.json'}: n_machines"),
        metrics=shown,
        key=key,
        resampling=_resampling(verdict, folder / "verdict.json"),
    )


def _n(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def key_text(key: list[dict[str, Any]]) -> str:
    """The verdict's comparisons in one line: difference [interval] per comparison."""
    parts = []
    for c in key:
        side = {True: "better", False: "worse", None: "not distinguishable"}[c["better"]]
        p = f", sign-flip p = {c['p_value']:.3g}" if c.get("p_value") is not None else ""
        parts.append(
            f"{c['metric']} against {c['against']} {_n(c['difference'], '+.3f')} "
            f"[{_n(c['ci_low'], '+.3f')}, {_n(c['ci_high'], '+.3f')}] ({side}{p})"
        )
    return "; ".join(parts)


def verdict_lines(v: ShippedValidation) -> list[str]:
    """The README's opening lines: the verdict and its key intervals."""
    return [
        f"> **Validation verdict: {WORDS[v.verdict]}** ({SHELF_WORDS[v.shelves]}, "
        f"{counted(v.n_machines, 'machine')}, the last {v.test_weeks} weeks of the source held out). Model minus "
        f"other, {v.interval_words}: {key_text(v.key)}. See Results below.",
    ]


def validation_lines(v: ShippedValidation) -> list[str]:
    """The Results section's validation table."""
    m = v.metrics

    def row(label: str, k: str, pct: bool = False) -> str:
        spec = "+.1%" if pct else ".3f"
        ci = f"[{_n(m[f'{k}_low'], spec)}, {_n(m[f'{k}_high'], spec)}]"
        refs = f"{_n(m[f'persistence_{k}'], spec)} / {_n(m[f'naive_{k}'], spec)}"
        return f"| {label} | {_n(m[k], spec)} | {ci} | {refs} |"

    return [
        f"Held-out validation on the last {v.test_weeks} weeks of the source ({v.test_start} to {v.test_end}, "
        f"{counted(v.n_machines, 'machine')}, {SHELF_WORDS[v.shelves]}): **{WORDS[v.verdict]}**.",
        "",
        f"| statistic | model | {'95% interval' if v.resampling is None else '95% week-bootstrap interval'} "
        "| persistence / naive |",
        "|---|---|---|---|",
        row("volume error", "volume_error", pct=True),
        row("machine-week WAPE", "wape"),
        row("product-level WAPE", "wape_product"),
        row("subcategory TVD", "tvd"),
        row("median within-machine Spearman", "spearman"),
        "",
        f"The verdict's comparisons (model minus other): {key_text(v.key)}.",
        *([] if v.resampling is None else ["", f"Intervals: {v.interval_words}."]),
    ]


def validation_text(manifest: dict[str, Any]) -> str:
    """One line for `autovend world info`: the shipped verdict, its shelves and key intervals."""
    v = manifest.get("validation")
    if not isinstance(v, dict) or v.get("verdict") not in VERDICTS:
        return "none (shipped without a held-out validation)"
    raw = v.get("key")
    fields = ("against", "metric", "better", "difference", "ci_low", "ci_high")
    key: list[dict[str, Any]] = [
        c
        for c in (raw if isinstance(raw, list) else [])
        if isinstance(c, dict)
        and all(f in c for f in fields)
        and c["better"] in (True, False, None)
        and all(c[f] is None or (isinstance(c[f], int | float) and math.isfinite(c[f])) for f in fields[3:])
    ]
    shelves = SHELF_WORDS.get(str(v.get("shelves")), str(v.get("shelves")))
    weeks = f"; {interval_words(v['resampling'])}" if "resampling" in v else ""
    return f"{WORDS[v['verdict']]} ({shelves}, {counted(v.get('n_machines'), 'machine')}{weeks}): {key_text(key)}"
