"""Shipping a world: the exported bundle with its validation and its baseline results in the README.

An exported bundle (`autovend export-world`, a DVC output under data/) is frozen first; its held-out
validation and baseline runs are made on it; `ship_world` then copies it to worlds/NAME with the
validation's verdict in the README's first lines and in the manifest (`autovend.export.validation`; a world
shipped without a validation says so there), and a "Results" section: the validation's numbers with their
intervals and each baseline seed's net assets and metrics. With oracle runs (`autovend run --agent oracle`,
the privileged reference of `autovend.agents.oracle`) the section adds the headroom: per seed, hold (start
cash less the daily fees), baseline and oracle net assets and the baseline's normalised score, and the
manifest records the oracle's daily net assets under "references" (`autovend.evaluation.headroom` reads
them for the normalised score of any run on the world). The world's content, hence its world_hash, is
untouched; only the README's hash and the manifest change. Runs of another world (by world_hash) or of
another horizon are refused.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autovend.errors import ExportError
from autovend.export.validation import ShippedValidation, read_validation, validation_lines, verdict_lines
from autovend.runlock import hold_output_folder
from autovend.world.bundle import MANIFEST, README, check_output, manifest_hash, verify_bundle, write_bundle

# the oracle's code identity as run.json records it (autovend.agents.identity.ORACLE_ENTRY_POINT; agents sit above
# this layer): a run is the oracle's by its entry point, never by its name
ORACLE_ENTRY_POINT = "autovend.agents.oracle:OracleAgent"

RESULTS_HEADING = "## Results"
VERDICT_PREFIX = "> **Validation verdict:"


@dataclass(frozen=True)
class BaselineRun:
    """The headline of one finished run of the baseline on the world."""

    seed: int
    days: int
    net_assets: float
    metrics: dict[str, Any]


def read_run(run_dir: Path, world_hash: str) -> BaselineRun:
    """A finished run's metrics; ExportError when it is unfinished or was made on another world."""
    path = run_dir / "metrics.json"
    if not path.is_file():
        raise ExportError(f"{run_dir} has no metrics.json: finish the run (autovend run ... --resume) first")
    metrics = json.loads(path.read_text(encoding="utf-8"))
    run = metrics.get("run", {})
    if run.get("world_hash") != world_hash:
        raise ExportError(
            f"{run_dir} was run on world hash {str(run.get('world_hash'))[:12]}..., not on this world "
            f"({world_hash[:12]}...); run the baseline on the bundle being shipped"
        )
    if run.get("days") != run.get("horizon_days"):
        raise ExportError(
            f"{run_dir} played {run.get('days')} of {run.get('horizon_days')} days; run the whole horizon"
        )
    return BaselineRun(int(run["seed"]), int(run["days"]), float(metrics["net_assets"]), metrics)


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return format(value, spec)


def baseline_lines(runs: list[BaselineRun], currency: str) -> list[str]:
    """Each seed's net assets and main metrics, then mean and standard deviation."""
    runs = sorted(runs, key=lambda r: r.seed)
    assets = [r.net_assets for r in runs]
    lines = [
        f"The rule-based baseline (`autovend run --agent baseline --seed S`), {runs[0].days} days:",
        "",
        f"| seed | net assets ({currency}) | assortment | waste rate | pricing regret | shelf use |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        m = r.metrics
        lines.append(
            f"| {r.seed} | {r.net_assets:,.2f} | {_fmt(m.get('assortment'), '.3f')} | "
            f"{_fmt(m.get('waste_rate'), '.1%')} | {_fmt(m.get('pricing_regret'), '.1f')} | "
            f"{_fmt(m.get('shelf_utilization'), '.1%')} |"
        )
    sd = statistics.stdev(assets) if len(assets) > 1 else 0.0
    lines += ["", f"Mean {statistics.fmean(assets):,.2f} {currency}, standard deviation {sd:,.2f}."]
    return lines


@dataclass(frozen=True)
class OracleRun:
    """A finished full-horizon run of the privileged oracle on the world: its daily net assets and the hold's."""

    seed: int
    net_assets: float
    daily: list[float]  # net assets at the close of days 1..horizon
    hold: float  # the hold policy's net assets at the horizon: start cash less every daily fee of the run


def read_oracle_run(run_dir: Path, world_hash: str) -> OracleRun:
    """A finished oracle run (`read_run`'s checks, and the run must be the privileged oracle's)."""
    import pandas as pd

    base = read_run(run_dir, world_hash)
    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    if meta.get("agent_entry_point") != ORACLE_ENTRY_POINT or meta.get("privileged") is not True:
        raise ExportError(
            f"{run_dir} is a run of {meta.get('agent')!r} (code {meta.get('agent_entry_point')}), not of the oracle "
            f"({ORACLE_ENTRY_POINT}, privileged: autovend run --agent oracle)"
        )
    daily = pd.read_csv(run_dir / "daily.csv")
    hold = float(meta["start_cash"]) - float(daily["daily_fee"].sum())
    return OracleRun(base.seed, base.net_assets, [round(float(x), 2) for x in daily["net_assets"]], round(hold, 2))


def references_entry(oracle: list[OracleRun]) -> dict[str, Any]:
    """The manifest's "references": the hold rule and value, the oracle's daily net assets by seed."""
    oracle = sorted(oracle, key=lambda r: r.seed)
    return {
        "horizon_days": len(oracle[0].daily),
        "hold": {"agent": "autovend.agents.hold:HoldAgent", "net_assets": oracle[0].hold},
        "oracle": {
            "agent": "oracle",
            "privileged": True,
            "net_assets": {str(r.seed): r.net_assets for r in oracle},
            "daily_net_assets": {str(r.seed): r.daily for r in oracle},
        },
    }


def headroom_lines(oracle: list[OracleRun], runs: list[BaselineRun], currency: str) -> list[str]:
    """Per seed: hold, baseline and oracle net assets and the baseline's normalised score."""
    oracle = sorted(oracle, key=lambda r: r.seed)
    baseline = {r.seed: r.net_assets for r in runs}
    lines = [
        "The hold policy (`autovend run --agent autovend.agents.hold:HoldAgent`, docs/agents.md's example: buys "
        "nothing, so its net assets are the start cash less the daily fees) and the oracle (`autovend run --agent "
        "oracle`), a **privileged** reference that plans with the hidden demand model no agent may read, over the "
        "whole horizon. Normalised score = "
        "(agent − hold) / (oracle − hold): 0 is holding the cash, 1 the oracle.",
        "",
        f"| seed | hold ({currency}) | baseline ({currency}) | oracle, privileged ({currency}) | baseline normalised |",
        "|---|---|---|---|---|",
    ]
    for r in oracle:
        b = baseline.get(r.seed)
        score = None if b is None or r.net_assets <= r.hold else (b - r.hold) / (r.net_assets - r.hold)
        lines.append(f"| {r.seed} | {r.hold:,.2f} | {_fmt(b, ',.2f')} | {r.net_assets:,.2f} | {_fmt(score, '.3f')} |")
    return lines


def results_section(
    validation: ShippedValidation | None,
    runs: list[BaselineRun],
    currency: str,
    oracle: list[OracleRun] | None = None,
) -> str:
    """The README's Results section."""
    lines = [RESULTS_HEADING, ""]
    if validation is not None:
        lines += ["### Validation", "", *validation_lines(validation), ""]
    if runs:
        lines += ["### Baseline", "", *baseline_lines(runs, currency), ""]
    if oracle:
        lines += ["### Headroom: hold and the privileged oracle", "", *headroom_lines(oracle, runs, currency), ""]
    return "\n".join(lines)


def ship_world(
    bundle_dir: str | Path,
    out_dir: str | Path,
    *,
    validation: str | Path | None = None,
    runs: list[Path] | tuple[Path, ...] = (),
    force: bool = False,
    oracle_runs: list[Path] | tuple[Path, ...] = (),
) -> dict[str, Any]:
    """Copy the bundle at `bundle_dir` to `out_dir` with the Results section; returns the new manifest.

    `out_dir` must be absent, empty or an earlier shipped copy of the same world unless `force`
    (`autovend.world.owner`), and is locked while it is checked and written: a second ship to it meanwhile
    stops at once (`OutputBusyError`).
    """
    with hold_output_folder(out_dir, "autovend world ship"):
        return _ship(Path(bundle_dir), Path(out_dir), validation, list(runs), list(oracle_runs), force)


def _ship(
    src: Path, out: Path, validation: str | Path | None, runs: list[Path], oracle_runs: list[Path], force: bool
) -> dict[str, Any]:
    manifest = verify_bundle(src)
    check_output(out, force, (src, validation, *runs, *oracle_runs), shipping=manifest)
    settings = json.loads((src / "settings.json").read_text(encoding="utf-8"))
    currency = str(settings.get("economics", {}).get("currency", ""))
    shipped = read_validation(validation) if validation is not None else None
    baseline = [read_run(Path(r), manifest["world_hash"]) for r in runs]
    seeds = [r.seed for r in baseline]
    if len(set(seeds)) != len(seeds):
        raise ExportError(f"the runs repeat a seed ({sorted(seeds)}); give one run per seed")
    oracle = [read_oracle_run(Path(r), manifest["world_hash"]) for r in oracle_runs]
    if len({r.seed for r in oracle}) != len(oracle):
        raise ExportError(f"the oracle runs repeat a seed ({sorted(r.seed for r in oracle)}); give one run per seed")
    readme = unshipped_readme((src / README).read_text(encoding="utf-8"))
    title, _, rest = readme.partition("\n")
    opening = (
        verdict_lines(shipped)
        if shipped is not None
        else [f"{VERDICT_PREFIX} none** (shipped without a held-out validation: its demand model is untested)."]
    )
    readme = "\n".join([title, "", *opening, rest])
    text = readme + "\n\n" + results_section(shipped, baseline, currency, oracle)
    new = dict(manifest)
    new["validation"] = shipped.manifest_entry() if shipped is not None else {"verdict": "none"}
    new.pop("references", None)
    if oracle:
        new["references"] = references_entry(oracle)
    new["files"] = {**manifest["files"], README: _sha256_text(text)}
    new.pop("manifest_hash", None)
    new["manifest_hash"] = manifest_hash(new)
    files = {p.name: p.read_bytes() for p in sorted(src.iterdir()) if p.name not in (README, MANIFEST)}
    files[README] = text.encode("utf-8")
    write_bundle(out, files, new, force=force, shipping=True)
    verify_bundle(out)
    return new


def unshipped_readme(text: str) -> str:
    """A shipped README as export wrote it: without the verdict lines and the Results section."""
    return _without_verdict(text.split(f"\n{RESULTS_HEADING}\n")[0].rstrip("\n"))


def _without_verdict(readme: str) -> str:
    """The README without an earlier ship's verdict lines (a re-shipped bundle gets the new ones)."""
    lines = readme.split("\n")
    if len(lines) > 2 and lines[1] == "" and lines[2].startswith(VERDICT_PREFIX):
        return "\n".join([lines[0], *lines[3:]])
    return readme


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
