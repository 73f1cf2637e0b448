"""Writing a validation: metrics.json, plot data (CSV), figures and validation.md beside the paper's numbers.

A metric that was not computed is NaN in memory, null in metrics.json and "not computed" in validation.md,
with its reason; nothing non-finite is written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from autovend.errors import NonFiniteError
from autovend.io import OutputKind, output_dir
from autovend.validation.figures import PLOT_FILES, draw_all
from autovend.validation.validate import ValidationResult

# The paper's held-out results (§3.3, Figure 3).
PAPER = {
    "volume_error": "within 0.7%",
    "wape": 0.473,
    "wape_persistence": 0.561,
    "wape_naive": 0.606,
    "tvd": 0.153,
    "tvd_naive": 0.206,
    "spearman_median": 0.577,
    "ablation_uniform_popularity.tvd": 0.238,
    "n_machines": 67,
    "test_weeks": 8,
    "seeds": 100,
}

# Significant digits of the floats in metrics.json: a float's last digits can differ between machines
# (summation order, libraries), and the committed report should change only when a number does.
METRIC_DIGITS = 6


NOT_COMPUTED = "not computed"


def _f(v: Any, pct: bool = False) -> str:
    if v is None:
        return NOT_COMPUTED
    if isinstance(v, float):
        if math.isnan(v):
            return NOT_COMPUTED
        return f"{v:+.2%}" if pct else f"{v:.3f}"
    return str(v)


def rounded(value: Any, digits: int = METRIC_DIGITS) -> Any:
    """`value` with every finite float in it (in nested dicts and lists too) rounded to `digits` significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, digits) for v in value]
    return value


def json_ready(value: Any, path: str = "metrics") -> Any:
    """`value` with NaN as None (null: not computed), in nested dicts and lists too.

    An infinity raises NonFiniteError: no metric is infinite, so one would be a bug to report, not to hide.
    """
    if isinstance(value, float):
        if math.isinf(value):
            raise NonFiniteError(f"{path} is infinite; a validation metric must be finite or not computed")
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {k: json_ready(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def _references_section(m: dict[str, Any]) -> list[str]:
    refs = m.get("references") or {}
    if not refs:
        return []
    verdict = m.get("beats_all_references")
    if verdict is True:
        head = "The model beats every reference on this source."
    elif verdict is False:
        lost = sum(1 for c in refs.values() if c["model_beats_reference"] is False)
        head = f"**The model does not beat {lost} of the {len(refs)} references on this source.**"
    else:
        head = "Some comparisons could not be made (a metric was not computed)."
    return ["## Against the references", "", head, ""] + [f"- {c['summary']}" for c in refs.values()] + [""]


def _not_computed_section(m: dict[str, Any]) -> list[str]:
    missing = m.get("not_computed") or {}
    if not missing:
        return []
    return ["## Not computed", ""] + [f"- `{key}`: {reason}" for key, reason in sorted(missing.items())] + [""]


def _estimators_section(m: dict[str, Any]) -> list[str]:
    """Each estimator's training calibration scored on the same held-out shelves and seeds."""
    est = m.get("estimators") or {}
    if not est:
        return []
    lines = [
        "## Estimators on the same held-out weeks",
        "",
        "The training window calibrated with each estimator (`autovend calibrate --estimator`): structural (the "
        "default: u and the machine scales from a structural fit of imputed demand, r pooled) and paper (the "
        "paper's definitions: kappa from observed mean daily units, e the log-log slope, r the median r_m, "
        "u = x e / (1 - e)), each replayed on the same shelves with the same seeds.",
        "",
        "| estimator | u | x | e | r | volume error | WAPE | TVD | Spearman |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, v in est.items():
        scalars = " | ".join(f"{v[k]:.4g}" if isinstance(v[k], float) else NOT_COMPUTED for k in ("u", "x", "e", "r"))
        lines.append(
            f"| {name} | {scalars} | {_f(v['volume_error'], pct=True)} | {_f(v['wape'])} | {_f(v['tvd'])} "
            f"| {_f(v['spearman_median'])} |"
        )
    return lines + [""]


def render_markdown(m: dict[str, Any], source_name: str, notes: list[str], limits: str = "") -> str:
    """validation.md: the numbers of this source next to the paper's."""

    def spread(key: str, pct: bool = False) -> str:
        mean, sd = m[f"{key}_seed_mean"], m[f"{key}_seed_sd"]
        if mean is None or sd is None or math.isnan(mean) or math.isnan(sd):
            return NOT_COMPUTED
        return f"{mean:+.2%} ± {sd:.2%}" if pct else f"{_f(mean)} ± {_f(sd)}"

    rows = [
        (
            "total volume error",
            _f(m["volume_error"], pct=True),
            spread("volume_error", pct=True),
            PAPER["volume_error"],
        ),
        ("machine-week WAPE (seed-mean forecast)", _f(m["wape"]), spread("wape"), PAPER["wape"]),
        ("WAPE, persistence reference", _f(m["wape_persistence"]), "", PAPER["wape_persistence"]),
        ("WAPE, naive reference", _f(m["wape_naive"]), "", PAPER["wape_naive"]),
        ("subcategory TVD", _f(m["tvd"]), spread("tvd"), PAPER["tvd"]),
        ("TVD, naive reference", _f(m["tvd_naive"]), "", PAPER["tvd_naive"]),
        (
            "median within-machine Spearman",
            _f(m["spearman_median"]),
            spread("spearman_median"),
            PAPER["spearman_median"],
        ),
        (
            "ablation, no shock: WAPE / TVD",
            f"{_f(m['ablation_no_shock']['wape'])} / {_f(m['ablation_no_shock']['tvd'])}",
            "",
            "",
        ),
        (
            "ablation, uniform popularity: TVD",
            _f(m["ablation_uniform_popularity"]["tvd"]),
            "",
            PAPER["ablation_uniform_popularity.tvd"],
        ),
        (
            "ablation, uniform popularity: Spearman",
            _f(m["ablation_uniform_popularity"]["spearman_median"]),
            "",
            "",
        ),
    ]
    shelves = "reconstructed from inventory records" if m["shelves_known"] else "from the sales rule (no inventory)"
    train = m["train"]
    lines = [
        f"# Held-out validation: {source_name}",
        "",
        f"Test window {m['test_start']} to {m['test_end']} ({m['test_weeks']} weeks), {m['n_machines']} machines "
        f"({m['n_machine_weeks']} machine-weeks), {m['seeds']} replay seeds; shelves "
        f"{shelves}. "
        "Every data-derived parameter was re-estimated on the records before the window "
        f"(u = {train['u']:.4g} ({train['u_source']}), r = {train['r']:.3g}, rho = {train['rho']:.3g}). "
        "Replay at reference prices and neutral weather (the calendar applies). "
        "Point metrics use the forecast averaged over seeds; ± gives the mean and spread of the per-seed metric.",
        "",
        "| metric | this source | per seed | paper |",
        "|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    lines += [
        "",
        f"Realised units in the window: {m['units_realised']:,.0f}; simulated (mean): {m['units_simulated']:,.0f}.",
        "",
    ]
    lines += _references_section(m)
    lines += _estimators_section(m)
    lines += _not_computed_section(m)
    if limits:
        lines += ["## What limits these numbers", "", limits, ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    lines += [
        "## Figures",
        "",
        "![weekly](weekly.png)",
        "",
        "![subcategory](subcategory.png)",
        "",
        "![ablation](ablation.png)",
        "",
        "Figures are drawn from `plots/*.csv` alone: `autovend validate --figures-only DIR` redraws them.",
        "",
    ]
    return "\n".join(lines)


def write_validation(
    res: ValidationResult,
    out_dir: str | Path,
    source_name: str,
    limits: str = "",
    other_share: float = 0.005,
    *,
    force: bool = False,
) -> None:
    """Write metrics.json, plots/*.csv, the figures and validation.md.

    metrics.json holds floats to `METRIC_DIGITS` significant digits and null where a metric was not computed.
    The folder `out_dir` is replaced atomically; it must be absent, empty or an earlier validation report
    (`autovend.io.output_dir`) unless `force`. Nothing written depends on the machine's speed or the date.
    """
    with output_dir(out_dir, OutputKind.VALIDATION_REPORT, force=force) as tmp:
        metrics = json.dumps(json_ready(rounded(res.metrics)), indent=2, sort_keys=True, allow_nan=False) + "\n"
        (tmp / "metrics.json").write_text(metrics, encoding="utf-8")
        (tmp / "plots").mkdir()
        res.weekly.to_csv(tmp / "plots" / PLOT_FILES["weekly"], index=False, float_format="%.4f")
        res.subcategory.to_csv(tmp / "plots" / PLOT_FILES["subcategory"], index=False, float_format="%.6f")
        res.ablation.to_csv(tmp / "plots" / PLOT_FILES["ablation"], index=False, float_format="%.6f")
        draw_all(tmp, other_share)
        (tmp / "validation.md").write_text(
            render_markdown(res.metrics, source_name, res.notes, limits), encoding="utf-8"
        )
