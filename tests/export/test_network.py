from collections import Counter

import numpy as np
import pandas as pd
import pytest

from autovend.errors import ExportError, InsufficientDataError
from autovend.export.network import (
    NETWORK_COLUMNS,
    Device,
    allocate,
    own_network,
    paper_devices,
    read_network,
    select_network,
)

# Appendix A.2 of the paper, copied by hand as the reference for the shipped network file.
APPENDIX_A = [
    ("CN_WORKSITE_01", "worksite/canteen"),
    ("CN_WORKSITE_02", "worksite/canteen"),
    ("CN_WORKSITE_03", "worksite/canteen"),
    ("CN_WORKSITE_04", "worksite/plant_floor"),
    ("CN_WORKSITE_05", "worksite/plant_floor"),
    ("CN_WORKSITE_06", "worksite/plant_floor"),
    ("CN_CAMPUS_01", "campus/university"),
    ("CN_CAMPUS_02", "campus/school_dormitory"),
    ("CN_RESIDENTIAL_01", "residential/apartment"),
    ("CN_RESIDENTIAL_02", "residential/apartment"),
    ("CN_RESIDENTIAL_03", "residential/apartment"),
    ("CN_RESIDENTIAL_04", "residential/dormitory"),
    ("CN_COMMERCIAL_01", "commercial/sports_venue"),
    ("CN_COMMERCIAL_02", "commercial/hotel"),
    ("CN_COMMERCIAL_03", "commercial/hotel"),
    ("CN_COMMERCIAL_04", "commercial/sports_venue"),
    ("CN_COMMERCIAL_05", "commercial/leisure_venue"),
    ("CN_COMMERCIAL_06", "commercial/hotel"),
    ("CN_OFFICE_01", "office/industrial_park"),
    ("CN_OFFICE_02", "office/office_building"),
]


def candidates(spec: dict[str, list[tuple[str, int]]]) -> pd.DataFrame:
    """Machines per location: a list of (kappa_source, n_days) each; kappa, R, U grow with the row."""
    rows = []
    for loc, machines in spec.items():
        for source, days in machines:
            i = len(rows) + 1
            rows.append(
                {
                    "machine_id": f"M{i:03d}",
                    "site_type": loc.split("/")[0],
                    "location": loc,
                    "kappa": float(i),
                    "R": 10.0 * i,
                    "U": 0.5 * i,
                    "kappa_source": source,
                    "n_days": days,
                }
            )
    return pd.DataFrame(rows)


GOOD = ("structural_fit", 120)
SALES = ("sales_rule", 120)
SHORT = ("structural_fit", 30)


PAPER = paper_devices()


def plenty(n: int = 5) -> pd.DataFrame:
    """n preferred machines in every Appendix A sub-location."""
    return candidates({loc: [GOOD] * n for loc in dict.fromkeys(loc for _, loc in APPENDIX_A)})


def test_devices_are_exactly_appendix_a():
    assert [(d.device_id, d.location) for d in paper_devices()] == APPENDIX_A
    assert {d.capacity for d in paper_devices()} == {200}


def test_network_has_the_paper_mix_ids_locations_and_capacity():
    net = select_network(plenty(), seed=1, devices=PAPER)
    assert list(net.columns) == NETWORK_COLUMNS
    assert list(zip(net["device_id"], net["location"], strict=True)) == APPENDIX_A
    assert Counter(net["site_type"]) == {
        "worksite": 6,
        "campus": 2,
        "residential": 4,
        "commercial": 6,
        "office": 2,
    }
    assert (net["capacity"] == 200).all() and net["capacity"].dtype == np.int64
    assert net["source_machine_id"].is_unique


def test_each_device_takes_its_source_machines_parameters_unchanged():
    cand = plenty()
    net = select_network(cand, seed=3, devices=PAPER)
    src = cand.set_index("machine_id").loc[net["source_machine_id"]]
    np.testing.assert_array_equal(net["kappa"], src["kappa"])
    np.testing.assert_array_equal(net["R"], src["R"])
    np.testing.assert_array_equal(net["U"], src["U"])
    # with enough preferred machines everywhere, each device comes from its own sub-location
    assert (net["source_location"] == net["location"]).all()
    assert (net["kappa_source"] == "structural_fit").all()


def test_same_seed_same_network_other_seeds_usually_differ():
    cand = plenty()
    first = select_network(cand, seed=7, devices=PAPER)["source_machine_id"].tolist()
    assert select_network(cand, seed=7, devices=PAPER)["source_machine_id"].tolist() == first
    others = {tuple(select_network(cand, seed=s, devices=PAPER)["source_machine_id"]) for s in range(8)}
    assert len(others) >= 6  # 8 seeds, 5 candidates per slot: collisions are rare


def test_known_shelves_and_enough_days_are_preferred_over_the_sub_location():
    spec = {loc: [GOOD] * 5 for loc in dict.fromkeys(loc for _, loc in APPENDIX_A)}
    # canteen: one good machine, two sales-rule ones, two with too few days; plant floor: six good
    spec["worksite/canteen"] = [GOOD, SALES, SALES, SHORT, SHORT]
    spec["worksite/plant_floor"] = [GOOD] * 6
    cand = candidates(spec)
    net = select_network(cand, seed=0, devices=PAPER)
    work = net[net["site_type"] == "worksite"]
    assert (work["kappa_source"] == "structural_fit").all()
    ids = cand.set_index("machine_id")
    assert (ids.loc[work["source_machine_id"], "n_days"] >= 60).all()
    canteen_devices = work[work["location"] == "worksite/canteen"]
    # the one good canteen machine serves a canteen device; the other two come from the plant floor
    assert sorted(canteen_devices["source_location"]) == ["worksite/canteen"] + ["worksite/plant_floor"] * 2


def test_sub_location_without_machines_falls_back_to_the_site_type():
    spec = {loc: [GOOD] * 5 for loc in dict.fromkeys(loc for _, loc in APPENDIX_A)}
    del spec["campus/school_dormitory"]
    net = select_network(candidates(spec), seed=2, devices=PAPER)
    campus = net[net["site_type"] == "campus"]
    assert list(campus["location"]) == ["campus/university", "campus/school_dormitory"]
    assert list(campus["source_location"]) == ["campus/university", "campus/university"]


def test_non_preferred_machines_fill_in_when_preferred_ones_run_out():
    spec = {loc: [GOOD] * 5 for loc in dict.fromkeys(loc for _, loc in APPENDIX_A)}
    spec["office/industrial_park"] = [SALES]
    spec["office/office_building"] = [SHORT]
    net = select_network(candidates(spec), seed=4, devices=PAPER)
    office = net[net["site_type"] == "office"]
    assert list(office["source_location"]) == ["office/industrial_park", "office/office_building"]
    assert list(office["kappa_source"]) == ["sales_rule", "structural_fit"]


def test_unusable_machines_are_never_chosen():
    cand = plenty(6)
    cand.loc[cand["location"] == "worksite/canteen", "kappa"] = [np.nan, 0.0, np.inf, -1.0, np.nan, 0.0]
    net = select_network(cand, seed=5, devices=PAPER)
    chosen = cand.set_index("machine_id").loc[net["source_machine_id"]]
    assert np.isfinite(chosen["kappa"]).all() and (chosen["kappa"] > 0).all()
    canteen = net[net["location"] == "worksite/canteen"]
    assert (canteen["source_location"] == "worksite/plant_floor").all()


def test_site_type_with_too_few_machines_fails_naming_it_and_the_numbers():
    spec = {loc: [GOOD] * 5 for loc in dict.fromkeys(loc for _, loc in APPENDIX_A)}
    spec["office/industrial_park"] = [GOOD]
    spec["office/office_building"] = []
    with pytest.raises(InsufficientDataError, match=r"needs 2 office machines .* only 1 usable office"):
        select_network(candidates(spec), seed=0, devices=PAPER)


def test_missing_locations_use_the_site_type():
    cand = plenty()
    cand["location"] = pd.Series([pd.NA] * len(cand), dtype="str")
    net = select_network(cand, seed=1, devices=PAPER)
    assert list(net["location"]) == [loc for _, loc in APPENDIX_A]
    assert (net["source_location"] == "").all()
    assert net["source_machine_id"].is_unique


# ---------------------------------------------------------------------------------- the source's own network


def test_own_network_takes_every_usable_machine_by_id_at_its_own_location():
    spec = {"worksite/canteen": [GOOD, SALES], "campus/university": [GOOD], "office/office_building": [GOOD]}
    cand = candidates(spec)
    cand.loc[cand["machine_id"] == "M004", "kappa"] = float("nan")  # not usable
    cand["capacity"] = [150.0, 180.0, 200.0, 220.0]
    net = own_network(cand, seed=1)
    assert net["device_id"].tolist() == ["M001", "M002", "M003"]
    assert net["device_id"].tolist() == net["source_machine_id"].tolist()
    assert net["location"].tolist() == ["worksite/canteen", "worksite/canteen", "campus/university"]
    assert net["capacity"].tolist() == [150, 180, 200]  # the source's capacities
    assert own_network(cand, seed=1, capacity=300)["capacity"].tolist() == [300, 300, 300]


def test_allocate_shares_devices_in_proportion_with_one_per_site_type_first():
    # 10 of 20 machines over 12/6/2 usable: one each, then 7 more by largest remainder of 11/5/1 * 7/17
    assert allocate({"worksite": 12, "campus": 6, "office": 2}, 10) == {"campus": 3, "office": 1, "worksite": 6}
    assert allocate({"worksite": 12, "campus": 6, "office": 2}, 2) == {"campus": 1, "office": 0, "worksite": 1}
    assert sum(allocate({"a": 3, "b": 3, "c": 3}, 7).values()) == 7
    with pytest.raises(InsufficientDataError, match="more than the 4 usable"):
        allocate({"a": 3, "b": 1}, 5)


def test_own_network_with_n_machines_is_seeded_and_prefers_known_shelves():
    spec = {"worksite/canteen": [GOOD] * 3 + [SALES] * 5, "campus/university": [SALES] * 4 + [GOOD]}
    cand = candidates(spec)
    cand["capacity"] = 200.0
    net = own_network(cand, seed=3, n_machines=5)
    assert len(net) == 5
    assert net["site_type"].value_counts().to_dict() == {"worksite": 3, "campus": 2}
    # the three worksite machines with known shelves and the one campus machine with them come first
    assert {"M001", "M002", "M003", "M013"} <= set(net["device_id"])
    assert own_network(cand, seed=3, n_machines=5).equals(net)


def test_a_network_file_is_read_and_its_mistakes_named(tmp_path):
    good = tmp_path / "net.csv"
    good.write_text("device_id,location,capacity\nA1,hospital/ward,120\nA2,school,\n")
    assert read_network(good) == (Device("A1", "hospital/ward", 120), Device("A2", "school", None))
    cases = {
        "device_id,location\nA1,x\nA1,y\n": "row 2, column device_id: A1 appears twice",
        "device_id,location\nA1,Hospital/x\n": "row 1, column location",
        "device_id,location,capacity\nA1,x,0\n": "row 1, column capacity",
        "device,location\nA1,x\n": "lacks column",
    }
    for text, message in cases.items():
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(ExportError, match=message):
            read_network(bad)
