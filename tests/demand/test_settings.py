"""Demand settings: the benchmark's values, and the pooled `unknown` settings for site types without their own."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from autovend.demand.environment import environment_multiplier
from autovend.demand.settings import SITE_TYPES, DemandSettings, SiteTable, load_demand_settings

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK = ROOT / "params" / "benchmark.yaml"


def test_settings_serialise_exactly_as_the_committed_world_recorded_them():
    settings = load_demand_settings(BENCHMARK)
    recorded = json.loads((ROOT / "worlds" / "cn20" / "settings.json").read_text(encoding="utf-8"))["demand"]
    assert settings.model_dump(mode="json") == recorded
    assert json.dumps(settings.model_dump(mode="json"), sort_keys=True) == json.dumps(recorded, sort_keys=True)
    assert type(settings.model_dump(mode="json")["elasticity"]) is dict
    assert DemandSettings() == settings  # the code defaults are the params file's values


def test_the_seven_site_types_keep_their_values():
    s = DemandSettings()
    assert SITE_TYPES == ("worksite", "campus", "residential", "commercial", "office", "public", "unknown")
    assert s.elasticity_of(list(SITE_TYPES)).tolist() == [2.8, 3.5, 3.0, 2.4, 2.6, 2.9, 2.9]
    rain = s.environment.rain
    assert [rain.heavy[t] for t in SITE_TYPES] == [0.95, 0.90, 1.08, 0.75, 0.92, 0.82, 1.00]
    weekend = [s.environment.calendar.day_type[t]["weekend"] for t in SITE_TYPES]
    assert weekend == [0.55, 0.80, 1.15, 1.30, 0.40, 1.10, 1.0]
    assert s.site_types_without_settings(SITE_TYPES) == ()


def test_an_unlisted_site_type_reads_the_pooled_unknown_entry():
    s = DemandSettings.model_validate(
        {
            "elasticity": {**DemandSettings().elasticity, "unknown": 3.1},
            "environment": {"rain": {"light": {"worksite": 1.0, "unknown": 0.9}}},
        }
    )
    assert s.elasticity["hospital"] == 3.1 and "hospital" not in s.elasticity
    assert s.elasticity_of(["campus", "hospital", "school"]).tolist() == [3.5, 3.1, 3.1]
    assert s.environment.rain.light["hospital"] == 0.9
    assert s.environment.rain.light.get("hospital", 1.0) == 0.9  # what the environment multiplier asks
    assert s.environment.rain.light.get("worksite", 5.0) == 1.0
    assert s.environment.calendar.day_type["hospital"] == {"workday": 1.0, "weekend": 1.0, "holiday": 1.0}
    assert s.site_types_without_settings(["hospital", "worksite", "school", "hospital"]) == ("hospital", "school")
    # campus has an elasticity but no light-rain entry of its own in these settings
    assert s.site_types_without_settings(["campus", "unknown"]) == ("campus",)


def test_environment_of_an_unlisted_site_type_equals_that_of_unknown():
    s = DemandSettings().environment
    for day_type, precip in (("weekend", 12.0), ("holiday", 2.0), ("workday", 0.0)):
        got = environment_multiplier(
            s, ["hospital", "unknown", "worksite"], ["drinks", "snacks"], 30.0, precip, day_type
        )
        np.testing.assert_array_equal(got[0], got[1])
    weekend_heavy = environment_multiplier(s, ["worksite"], ["snacks"], None, 12.0, "weekend")
    assert weekend_heavy[0, 0] == pytest.approx(0.55 * 0.95)


def test_tables_without_an_unknown_entry_fall_back_to_neutral():
    table = SiteTable({"worksite": 0.9}, neutral=1.0)
    assert table["hospital"] == 1.0 and table.get("hospital", 7.0) == 1.0
    bare = SiteTable({"worksite": 2.8})
    with pytest.raises(KeyError, match="hospital"):
        bare["hospital"]
    assert bare.get("hospital") is None and bare.get("hospital", 3.0) == 3.0
    s = DemandSettings.model_validate(
        {"environment": {"calendar": {"day_type": {"worksite": {"workday": 1.0, "weekend": 0.5, "holiday": 0.4}}}}}
    )
    assert s.environment.calendar.day_type["office"] == {"workday": 1.0, "weekend": 1.0, "holiday": 1.0}


def test_elasticities_must_still_list_the_seven_site_types():
    with pytest.raises(ValidationError, match=r"elasticity lacks site types \['unknown'\]"):
        DemandSettings.model_validate({"elasticity": {t: 2.9 for t in SITE_TYPES if t != "unknown"}})


def test_pooled_lookup_survives_pickling_and_revalidation():
    s = DemandSettings()
    back = pickle.loads(pickle.dumps(s))
    assert back == s and back.elasticity["school"] == 2.9
    again = DemandSettings.model_validate(s.model_dump(mode="json"))
    assert again == s and again.environment.calendar.day_type["school"]["weekend"] == 1.0
