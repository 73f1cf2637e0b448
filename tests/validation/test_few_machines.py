"""One- and two-machine sources: intervals from a block bootstrap over weeks, and a report that follows its table.

Two synthetic operators (seed 3, 24 weeks from 2024-06-03, the last 8 held out, 20 replay seeds, 2000 resamples):
one canteen machine with sales records only (6,000 units), and a canteen and an office machine with inventory
records (8,000 units). Neither has machines to resample, so every interval is a circular block bootstrap over the
8 test weeks in blocks of 2, and each comparison is decided by it (the sign-flip p cannot go below 0.5 or 0.25).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from autovend.calibration.config import CalibrationConfig
from autovend.data.load import load_source
from autovend.data.synth.config import SynthConfig
from autovend.data.synth.generate import synthesize, write_source
from autovend.validation.bootstrap import Comparison
from autovend.validation.config import ValidationConfig
from autovend.validation.controls import CONTROLS
from autovend.validation.report import write_validation
from autovend.validation.validate import validate
from autovend.validation.verdict import decide

WEEKS_TEXT = (
    "95% percentile interval over 2000 circular block bootstrap resamples of 8 weeks in blocks of 2 weeks "
    "(round(W^(1/3))), the machines held together: weeks, not machines, are the resampled unit; with {machines} "
    "the result speaks for {these} only"
)


def _validated(folder, locations: dict[str, int], with_inventory: int, units: int, test_weeks: int = 8):
    cfg = SynthConfig(
        seed=3,
        start=dt.date(2024, 6, 3),
        end=dt.date(2024, 6, 3) + dt.timedelta(days=167),
        locations=locations,
        n_with_inventory=with_inventory,
        target_units=units,
    )
    write_source(synthesize(cfg), folder / "src", folder / "truth")
    res = validate(
        load_source(folder / "src"),
        CalibrationConfig(),
        ValidationConfig(seeds=20, test_weeks=test_weeks),
        estimators=("structural",),
    )
    write_validation(res, folder / "val", "few")
    return res, folder / "val"


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory):
    return _validated(tmp_path_factory.mktemp("one"), {"worksite/canteen": 1}, 0, 6000)


@pytest.fixture(scope="module")
def two_machines(tmp_path_factory):
    locations = {"worksite/canteen": 1, "office/office_building": 1}
    return _validated(tmp_path_factory.mktemp("two"), locations, 2, 8000)


@pytest.fixture(scope="module")
def one_machine_three_weeks(tmp_path_factory):
    return _validated(tmp_path_factory.mktemp("three"), {"worksite/canteen": 1}, 0, 6000, test_weeks=3)


def _comps(verdict) -> dict[tuple[str, str], dict]:
    return {(c["against"], c["metric"]): c for c in verdict["comparisons"]}


def _shown(c) -> tuple[str, ...]:
    """A comparison's difference and interval as the report prints them (– for none)."""
    return tuple(
        "–" if c[k] is None or not math.isfinite(c[k]) else f"{c[k]:+.3f}" for k in ("difference", "ci_low", "ci_high")
    )


def test_one_machine_gets_finite_week_intervals_that_contain_each_difference(one_machine):
    """One machine: the model beats persistence on machine-week WAPE by -0.096 [-0.167, -0.037] over the week
    resamples, and reversed popularity on product WAPE by -1.774 [-1.785, -1.730]; against naive on machine-week
    WAPE it is +0.031 [-0.062, +0.188], so the verdict is not_distinguishable. With one machine the flat machine
    scale is the model itself: +0.000 [+0.000, +0.000], not distinguishable."""
    res, _ = one_machine
    v, m = res.verdict, res.metrics
    assert m["n_machines"] == 1 and m["test_weeks"] == 8 and v["shelves"] == "pre_window"
    assert v["interval"].startswith(WEEKS_TEXT.format(machines="1 machine", these="this machine"))
    assert v["resampling"] == {
        "unit": "weeks",
        "method": "circular_block",
        "n_weeks": 8,
        "block_weeks": 2,
        "resamples": 2000,
        "min_weeks": 4,
        "n_machines": 1,
    }
    for c in v["comparisons"]:
        assert math.isfinite(c["ci_low"]) and math.isfinite(c["ci_high"]), c
        assert c["ci_low"] - 1e-12 <= c["difference"] <= c["ci_high"] + 1e-12, c
        assert c["p_value"] is None or c["p_value"] >= 0.5  # one machine: the sign-flip test cannot decide
    comps = _comps(v)
    assert _shown(comps[("persistence", "wape")]) == ("-0.096", "-0.167", "-0.037")
    assert comps[("persistence", "wape")]["better"] is True
    assert _shown(comps[("reversed_popularity", "wape_product")]) == ("-1.774", "-1.785", "-1.730")
    assert comps[("reversed_popularity", "wape_product")]["better"] is True  # the planted bad mix: worse
    assert _shown(comps[("naive", "wape")]) == ("+0.031", "-0.062", "+0.188")
    assert comps[("naive", "wape")]["better"] is None and v["verdict"] == "not_distinguishable"
    for metric in ("wape", "tvd", "wape_product", "crps"):  # a forecast equal to the model
        c = comps[("flat_machine_scale", metric)]
        assert (c["difference"], c["ci_low"], c["ci_high"], c["better"]) == (0.0, 0.0, 0.0, None), metric
    for key in ("wape", "wape_product", "tvd", "spearman", "crps", "volume_error"):
        ci = m["intervals"][key]
        assert math.isfinite(ci["low"]) and ci["low"] < ci["high"], key
    assert (round(m["intervals"]["wape"]["low"], 3), round(m["intervals"]["wape"]["high"], 3)) == (0.135, 1.242)
    assert not any(k.startswith("intervals.") for k in res.provenance["not_computed"])


def test_two_machines_get_week_intervals_for_these_machines_only(two_machines):
    """Two inventory machines: product WAPE beats product persistence by -0.233 [-0.265, -0.140] and reversed
    popularity by -0.882 [-0.931, -0.720]; machine-week WAPE against naive, -0.009 [-0.094, +0.065], is not a
    result, so the verdict is not_distinguishable; the sign-flip p is 0.25 at best and decides nothing."""
    res, _ = two_machines
    v = res.verdict
    assert res.metrics["n_machines"] == 2 and v["shelves"] == "inventory"
    assert v["interval"].startswith(WEEKS_TEXT.format(machines="2 machines", these="these machines"))
    comps = _comps(v)
    for c in v["comparisons"]:
        assert c["ci_low"] - 1e-12 <= c["difference"] <= c["ci_high"] + 1e-12, c
    assert _shown(comps[("persistence", "wape_product")]) == ("-0.233", "-0.265", "-0.140")
    assert comps[("persistence", "wape_product")]["p_value"] == 0.25
    assert comps[("persistence", "wape_product")]["better"] is True
    assert _shown(comps[("reversed_popularity", "wape_product")]) == ("-0.882", "-0.931", "-0.720")
    assert _shown(comps[("naive", "wape")]) == ("-0.009", "-0.094", "+0.065")
    assert comps[("naive", "wape")]["better"] is None and v["verdict"] == "not_distinguishable"


@pytest.mark.parametrize("case", ["one_machine", "two_machines"])
def test_every_forecast_keeps_its_pairs_week_by_week(case, request):
    """The replays (on cells and, with inventory records, simulated from visits) and both references: each pair's
    weeks add up to its window total, as the realised sales' do."""
    res, _ = request.getfixturevalue(case)
    grid = res.grid
    np.testing.assert_array_equal(grid.real_pw.sum(axis=1), grid.real_pair)
    for name, f in res.forecasts.items():
        assert f.pair_week.shape == (len(grid.pair_key), 8), name
        np.testing.assert_allclose(f.pair_week.sum(axis=1), f.pair, rtol=1e-9, atol=1e-9, err_msg=name)


def test_one_machine_over_three_weeks_has_no_interval_and_says_why(one_machine_three_weeks):
    res, out = one_machine_three_weeks
    v = res.verdict
    assert v["resampling"]["resamples"] == 0 and all(c["better"] is None for c in v["comparisons"])
    assert v["interval"].startswith(
        "no interval: 1 machine is too few for the machine-cluster bootstrap (it needs 3) and 3 test weeks too few "
        "for a block bootstrap over weeks (it needs 4)"
    )
    reason = res.provenance["not_computed"]["intervals.wape.low"]
    assert reason == (
        "intervals need at least 3 machines (a machine-cluster bootstrap) or 4 test weeks (a block bootstrap over "
        "weeks); 1 machine and 3 weeks evaluated"
    )
    text = (out / "validation.md").read_text()
    assert "**Too few machines and weeks to decide**" in text and "there are no intervals" in text


# ---- the report says what verdict.json says -------------------------------------------------------------------

SIDE = {"better": True, "worse": False, "not distinguishable": None}
PART = re.compile(
    r"^(?P<metric>\w+) against (?P<against>\w+) (?P<diff>[+-]\d+\.\d{3})"
    r"(?: \[(?P<lo>[+-]\d+\.\d{3}), (?P<hi>[+-]\d+\.\d{3})\] \((?P<side>better|worse|not distinguishable)"
    r"(?:, sign-flip p = (?P<p>[\d.e-]+))?\)| \(no interval\))$"
)
CELL = re.compile(r"^(?P<diff>[+-]\d+\.\d{3}|–) \[(?P<lo>[+-]\d+\.\d{3}|–), (?P<hi>[+-]\d+\.\d{3}|–)\] (?P<side>.+)$")
WORDS = {"validated": "**Validated**", "not_distinguishable": "**Not distinguishable**"}


def _headline_parts(line: str) -> list[re.Match]:
    m = re.match(r"^(\*\*[^*]+\*\*): (.*) \(model - other, 95% (?:week-bootstrap )?interval\)\.$", line)
    assert m, line
    parts = [PART.match(p) for p in m.group(2).split("; ")]
    assert all(parts), m.group(2)
    return [p for p in parts if p is not None]


def check_report(text: str, verdict: dict) -> int:
    """Every sentence of validation.md that takes a side, held to verdict.json; returns how many were checked."""
    comps = _comps(verdict)
    lines = text.splitlines()
    checked = 0
    # the verdict is the rule applied to the written comparisons, and the first line says it
    objects = [Comparison(**c) for c in verdict["comparisons"]]
    assert decide(objects) == verdict["verdict"]
    assert lines[2].startswith(WORDS.get(verdict["verdict"], "**Worse than a reference**") + ":")
    # the headline's key comparisons: numbers and side as in verdict.json, and as in the table below
    table: dict[tuple[str, str], re.Match] = {}
    header = lines.index("| model against | wape | tvd | spearman | wape_product | crps |")
    for row in lines[header + 2 : header + 2 + 2 + len(CONTROLS)]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for metric, cell in zip(("wape", "tvd", "spearman", "wape_product", "crps"), cells[1:], strict=True):
            if cell == "equal by construction":
                assert (cells[0], metric) not in comps
                continue
            m = CELL.match(cell)
            assert m, cell
            c = comps[(cells[0], metric)]
            side = {"**better**": True, "**worse**": False, "n.d.": None}[m["side"]]
            assert side is c["better"], (cells[0], metric, cell, c)
            assert (m["diff"], m["lo"], m["hi"]) == _shown(c), (cell, c)
            table[(cells[0], metric)] = m
            checked += 1
    for part in _headline_parts(lines[2]):
        c = comps[(part["against"], part["metric"])]
        assert part["diff"] == f"{c['difference']:+.3f}"
        if part["side"] is None:
            assert c["ci_low"] is None or not math.isfinite(c["ci_low"])
            assert c["better"] is None
        else:
            assert SIDE[part["side"]] is c["better"], (part.group(0), c)
            assert (part["lo"], part["hi"]) == _shown(c)[1:]
            row = table[(part["against"], part["metric"])]
            assert (row["diff"], row["lo"], row["hi"]) == (part["diff"], part["lo"], part["hi"])  # same comparison
        checked += 1
    # sentences that claim nothing can be decided appear only when nothing was
    decided = any(c["better"] is not None for c in verdict["comparisons"])
    for claim in ("no comparison can be called better or worse", "no comparison is a result"):
        assert not (decided and claim in text), claim
        checked += 1
    weeks = verdict.get("resampling")
    decides = "each comparison is decided by its week-bootstrap interval"
    assert (decides in text) is bool(weeks and weeks["resamples"])
    # reversed popularity, and the controls the data could or could not reject
    rev = comps.get(("reversed_popularity", "wape_product"))
    assert ("**This validation cannot reject reversed popularity**" in text) is (
        rev is None or rev["better"] is not True
    )
    rejected = {k: [m for (a, m), c in comps.items() if a == k and c["better"] is True] for k in CONTROLS}
    bullets = [line for line in lines if line.startswith("- `") and line.split("`")[1] in CONTROLS]
    assert len(bullets) == len(CONTROLS)
    for line in bullets:
        name = line.split("`")[1]
        said = re.search(r": rejected on ([\w, ]+)\.$", line)
        assert (said.group(1).split(", ") if said else []) == rejected[name], line
        assert (said is None) is line.endswith("**not rejected on any metric**.")
        checked += 1
    not_rejected = [k for k in CONTROLS if not rejected[k]]
    listed = next((line for line in lines if line.startswith("Controls the data could not reject")), None)
    if not_rejected:
        assert (
            listed
            == "Controls the data could not reject on any metric: " + ", ".join(f"`{k}`" for k in not_rejected) + "."
        )
    else:
        assert listed is None
    # the level section's explanation of a lost comparison with persistence
    persist = comps[("persistence", "wape")]
    if "does not beat persistence on WAPE" in text:
        assert persist["better"] is not True
    return checked + 2


@pytest.mark.parametrize("case", ["one_machine", "two_machines", "one_machine_three_weeks"])
def test_every_sentence_of_the_report_follows_verdict_json(case, request):
    """validation.md is written from verdict.json's comparisons: the headline's four, the table's 34 cells, the
    controls' bullets and the claims that nothing could be decided all agree with them."""
    _, out = request.getfixturevalue(case)
    verdict = json.loads((out / "verdict.json").read_text())
    text = (out / "validation.md").read_text()
    assert check_report(text, verdict) >= 4 + 34 + len(CONTROLS)


def test_the_one_machine_report_names_the_week_bootstrap_everywhere_it_gives_an_interval(one_machine):
    _, out = one_machine
    text = (out / "validation.md").read_text()
    lines = text.splitlines()
    assert lines[2].endswith("(model - other, 95% week-bootstrap interval).")
    assert lines[2].startswith(
        "**Not distinguishable**: wape against persistence -0.096 [-0.167, -0.037] (better, sign-flip p = 0.5); "
        "wape against naive +0.031 [-0.062, +0.188] (not distinguishable, sign-flip p = 0.5)"
    )
    assert lines[3].startswith(
        "**Too few machines for the sign-flip test** (with 1 machine its smallest p is 0.5), so each comparison is "
        "decided by its week-bootstrap interval: a circular block bootstrap over the 8 test weeks in blocks of 2"
    )
    assert "speaks for this machine only, not for the operator's other machines" in lines[3]
    assert "intervals are 95% circular block bootstrap intervals over weeks (2000 resamples of the 8 test weeks" in text
    assert "machine-cluster bootstrap intervals" not in text and "1 machines" not in text
    assert "**Too few machines to decide**" not in text
    table = pd.read_csv(out / "plots" / "comparisons.csv")
    assert (table["resampled"] == "weeks").all()  # the figure's title names the week bootstrap from it
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["rule"].startswith("validated: better than the persistence and naive references")
    assert "circular block bootstrap over the test window's weeks" in verdict["rule"]
