"""Scenario files and derived worlds (`autovend.world.scenario`, `autovend.world.derive`): each shipped scenario
changes what it says and nothing else; a null scenario keeps the world; bad files are refused in words."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ConfigError
from autovend.world.bundle import bundle_tables, load_world, settings_payload
from autovend.world.derive import derive_world, write_derived
from autovend.world.runcopy import identity_hash
from autovend.world.scenario import load_scenario, parse_scenario, shipped_scenarios

ROOT = Path(__file__).resolve().parents[2]
CN20 = ROOT / "worlds" / "cn20"
TEXT = {"summary": "s", "tests": "t", "shows": "w"}


@pytest.fixture(scope="module")
def cn20():
    return load_world(CN20)


def changed(base, derived) -> set[str]:
    """The parts of a world that differ: table files and the top-level keys of settings.json (economics by field)."""
    tb, td = bundle_tables(base), bundle_tables(derived)
    out = {name for name in tb if not tb[name].equals(td[name])}
    sb, sd = settings_payload(base), settings_payload(derived)
    for key in set(sb) | set(sd):
        if key == "economics":
            out |= {f"economics.{k}" for k in sb[key] if sb[key][k] != sd[key][k]}
        elif sb.get(key) != sd.get(key):
            out.add(key)
    return out


def derived(world, name: str):
    return derive_world(world, load_scenario(name))


def test_at_least_eight_scenarios_ship_and_each_has_its_texts():
    names = shipped_scenarios()
    assert len(names) >= 8
    for name in names:
        sc = load_scenario(name)
        assert sc.name == name and sc.summary and sc.tests and sc.shows


def test_a_null_scenario_keeps_the_world_and_its_hash(cn20, tmp_path):
    sc = parse_scenario({"name": "nothing", **TEXT})
    assert derive_world(cn20, sc) is cn20
    sc_empty = parse_scenario({"name": "empty", **TEXT, "changes": {"weather": [], "suppliers": []}})
    assert derive_world(cn20, sc_empty) is cn20
    world, manifest = write_derived(CN20, cn20, sc, tmp_path / "same")
    assert manifest["world_hash"] == cn20.world_hash == load_world(tmp_path / "same").world_hash
    assert manifest["params"]["derived_from"]["world_hash"] == cn20.world_hash
    # the original bundle was not touched: still verified, same hash
    assert load_world(CN20).world_hash == cn20.world_hash


def test_express_supplier_adds_one_supplier_and_nothing_else(cn20):
    w = derived(cn20, "express-supplier")
    assert changed(cn20, w) == {"name", "conditions"}
    (s,) = w.conditions.suppliers
    assert (s.supplier_id, s.price_factor, s.promised_days, s.lead_time_pmf) == ("express", 1.15, 1, {1: 0.9, 2: 0.1})
    assert not (w.conditions.splits or w.conditions.outages or w.conditions.demand_shifts or w.conditions.breakdowns)


def test_late_deliveries_changes_the_lead_time_distribution_only(cn20):
    w = derived(cn20, "late-deliveries")
    assert changed(cn20, w) == {"name", "economics.lead_time_pmf"}
    pmf = w.economics.lead_time_pmf
    assert sum(k * p for k, p in pmf.items()) == pytest.approx(5.1)
    assert sum(k * p for k, p in cn20.economics.lead_time_pmf.items()) == pytest.approx(3.23)
    assert w.economics.lead_time_nominal_days == 3


def test_partial_deliveries_adds_a_split_rule_only(cn20):
    w = derived(cn20, "partial-deliveries")
    assert changed(cn20, w) == {"name", "conditions"}
    (split,) = w.conditions.splits
    assert (split.supplier_id, split.probability, split.min_share, split.max_share) == ("default", 0.4, 0.3, 0.7)
    assert (split.min_delay_days, split.max_delay_days) == (3, 7)


def test_supplier_outage_adds_an_outage_and_its_notice(cn20):
    w = derived(cn20, "supplier-outage")
    assert changed(cn20, w) == {"name", "conditions"}
    (o,) = w.conditions.outages
    assert (o.supplier_id, o.first_day, o.last_day) == ("default", 50, 63)
    (n,) = w.conditions.notices
    assert (n.first_day, n.last_day) == (50, 63) and "day 64" in n.text


def test_heatwave_changes_seven_days_of_weather_and_their_forecasts(cn20):
    w = derived(cn20, "heatwave")
    assert changed(cn20, w) == {"name", "weather.parquet", "forecast.parquet"}
    old, new = cn20.weather, w.weather
    days = (pd.to_datetime(old["date"]) - pd.Timestamp(cn20.start_date)).dt.days + 1
    hot = (days >= 141) & (days <= 147)
    assert int(hot.sum()) == 7
    np.testing.assert_allclose(new.loc[hot, "t_max_c"], old.loc[hot, "t_max_c"] + 11, atol=1e-9)
    assert (new.loc[hot, "precip_mm"] == 0).all()
    assert new.loc[~hot].equals(old.loc[~hot])
    target = (pd.to_datetime(cn20.forecast["target_date"]) - pd.Timestamp(cn20.start_date)).dt.days + 1
    in_window = (target >= 141) & (target <= 147)
    diff = w.forecast["t_max_c"] - cn20.forecast["t_max_c"]
    np.testing.assert_allclose(diff[in_window], 11, atol=1e-9)
    assert (diff[~in_window] == 0).all()


def test_holiday_season_marks_ten_days_as_holidays_only(cn20):
    w = derived(cn20, "holiday-season")
    assert changed(cn20, w) == {"name", "calendar.parquet"}
    rows = w.calendar["holiday_name"].astype(str) == "spring festival week"
    days = (pd.to_datetime(w.calendar.loc[rows, "date"]) - pd.Timestamp(cn20.start_date)).dt.days + 1
    assert days.tolist() == list(range(91, 101))
    assert not w.calendar.loc[rows, "is_workday"].any() and (w.calendar.loc[rows, "day_type"] == "holiday").all()
    assert w.calendar.loc[~rows].equals(cn20.calendar.loc[~rows])


def test_competitor_shifts_demand_at_the_six_commercial_machines_from_day_46(cn20):
    w = derived(cn20, "competitor-commercial")
    assert changed(cn20, w) == {"name", "conditions"}
    (shift,) = w.conditions.demand_shifts
    commercial = cn20.machines.loc[cn20.machines["site_type"] == "commercial", "device_id"].tolist()
    assert list(shift.device_ids) == commercial and len(commercial) == 6
    assert (shift.factor, shift.first_day, shift.last_day, shift.categories) == (0.65, 46, 180, ())
    assert w.conditions.notices == ()  # nothing announces a competitor


def test_site_closing_stops_the_busiest_machine_from_day_91_announced_from_77(cn20):
    w = derived(cn20, "site-closing")
    assert changed(cn20, w) == {"name", "conditions"}
    (shift,) = w.conditions.demand_shifts
    busiest = cn20.machines["device_id"].iloc[int(np.argmax(cn20.demand_model.U))]
    assert shift.device_ids == (busiest,) == ("CN_CAMPUS_02",)
    assert (shift.factor, shift.first_day, shift.last_day) == (0.0, 91, 180)
    (n,) = w.conditions.notices
    assert (n.first_day, n.last_day) == (77, 180)


def test_cost_inflation_raises_every_unit_cost_by_15_percent_to_the_cent(cn20):
    w = derived(cn20, "cost-inflation")
    assert changed(cn20, w) == {"name", "catalog.parquet"}
    old, new = cn20.catalog, w.catalog
    assert [c for c in old.columns if not old[c].equals(new[c])] == ["unit_cost"]
    np.testing.assert_allclose(new["unit_cost"], old["unit_cost"] * 1.15, atol=0.005 + 1e-9)
    assert np.allclose(new["unit_cost"] * 100, np.round(new["unit_cost"] * 100))  # whole cents


def test_fee_rise_changes_three_fees(cn20):
    w = derived(cn20, "fee-rise")
    assert changed(cn20, w) == {
        "name",
        "economics.visit_fee",
        "economics.machine_rent_per_day",
        "economics.warehouse_rent_per_unit_day",
    }
    eco = w.economics
    assert (eco.visit_fee, eco.machine_rent_per_day, eco.warehouse_rent_per_unit_day) == (60.0, 6.0, 0.06)


def test_machine_breakdown_stops_the_two_busiest_machines_on_days_31_to_44(cn20):
    w = derived(cn20, "machine-breakdown")
    assert changed(cn20, w) == {"name", "conditions"}
    assert [(b.device_id, b.first_day, b.last_day) for b in w.conditions.breakdowns] == [
        ("CN_CAMPUS_02", 31, 44),
        ("CN_RESIDENTIAL_03", 31, 44),
    ]


def test_every_shipped_scenario_gives_a_new_hash_and_round_trips_through_its_bundle(cn20, tmp_path):
    hashes = {cn20.world_hash}
    for name in shipped_scenarios():
        sc = load_scenario(name)
        world, manifest = write_derived(CN20, cn20, sc, tmp_path / name)
        assert world.name == f"cn20+{name}"
        back = load_world(tmp_path / name)
        assert back.world_hash == manifest["world_hash"] == identity_hash(world)
        assert back.conditions == world.conditions and back.economics == world.economics
        assert manifest["params"]["scenario"]["hash"] == sc.hash
        hashes.add(manifest["world_hash"])
    assert len(hashes) == len(shipped_scenarios()) + 1


def test_the_cli_derives_a_bundle_and_never_edits_the_original(tmp_path):
    before = (CN20 / "manifest.json").read_bytes()
    res = CliRunner().invoke(app, ["world", "derive", "cn20", "--scenario", "heatwave", "-o", str(tmp_path / "hw")])
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "hw" / "manifest.json").read_text())
    assert "cn20+heatwave" in res.output and manifest["world_hash"][:12] in res.output
    assert (CN20 / "manifest.json").read_bytes() == before
    res = CliRunner().invoke(app, ["world", "scenarios"])
    assert res.exit_code == 0 and "machine-breakdown" in res.output


# ------------------------------------------------------------------------------------------------ bad input


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("name: x\nsummary: !!str s\ntests: t\nshows: w\n", "line 2, column 10: a YAML tag"),
        ("name: x\nsummary: !!python/object:os.system s\ntests: t\nshows: w\n", "a YAML tag"),
        (
            "name: x\nsummary: s\ntests: t\nshows: w\nchanges: {wether: []}\n",
            "key changes, key wether: is no setting here",
        ),
        (
            "name: x\nsummary: s\ntests: t\nshows: w\nchanges:\n  suppliers:\n"
            "    - {supplier_id: cheap, price_factor: 0.9, promised_days: 5, lead_time_pmf: {5: 1}}\n",
            "key changes, key suppliers, entry 1, key price_factor: Input should be greater than or equal to 1",
        ),
        (
            "name: x\nsummary: s\ntests: t\nshows: w\nchanges:\n  lead_times: {lead_time_pmf: {3: 0.5, 4: 0.4}}\n",
            "lead_time_pmf must sum to 1, sums to 0.9",
        ),
        ("name: Bad Name\nsummary: s\ntests: t\nshows: w\n", "name: 'Bad Name' must be 1-40 lowercase letters"),
        ("- a list\n", "a scenario is a mapping"),
        (
            "name: x\nsummary: s\ntests: t\nshows: w\nchanges:\n  holidays: [{first_day: 9, last_day: 3, name: h}]\n",
            "last_day 3 is before first_day 9",
        ),
    ],
)
def test_bad_scenario_files_are_refused_in_words(tmp_path, text, expect):
    with pytest.raises(ConfigError) as err:
        load_scenario(_write(tmp_path, text))
    assert expect in str(err.value)
    assert "pydantic" not in str(err.value) and "Traceback" not in str(err.value)


@pytest.mark.parametrize(
    ("changes", "expect"),
    [
        ({"weather": [{"first_day": 200, "add_t_max_c": 3}]}, "first_day 200 is past the last day of world 'cn20'"),
        (
            {"demand": [{"label": "x", "machines": {"site_types": ["airport"]}, "factor": 0.5, "first_day": 3}]},
            "has no machine of site type ['airport']",
        ),
        ({"breakdowns": [{"machines": {"device_ids": ["NOPE"]}, "first_day": 3}]}, "device_ids ['NOPE'] are not"),
        ({"outages": [{"supplier_id": "express", "first_day": 3, "last_day": 4}]}, "supplier 'express' is none of"),
        ({"unit_costs": {"factor": 1.1, "categories": ["toys"]}}, "categories ['toys'] are not in the catalog"),
    ],
)
def test_scenarios_that_do_not_fit_the_world_are_refused_in_words(cn20, changes, expect):
    sc = parse_scenario({"name": "x", **TEXT, "changes": changes})
    with pytest.raises(ConfigError) as err:
        derive_world(cn20, sc)
    assert expect in str(err.value)


def test_an_unknown_scenario_name_lists_the_shipped_ones():
    with pytest.raises(ConfigError) as err:
        load_scenario("no-such-scenario")
    assert "heatwave" in str(err.value) and "give the path of a file or one of those names" in str(err.value)


def test_docs_describe_every_shipped_scenario():
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    missing = [n for n in shipped_scenarios() if f"| `{n}` |" not in text]
    assert missing == [], f"docs/scenarios.md lacks a row for {missing}"
