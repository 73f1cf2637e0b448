"""The identification record: each estimate's status and reason, from the code paths the calibration took."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import yaml

from autovend.calibration.calibrate import calibrate
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.estimates import Estimates
from autovend.calibration.identification import refuse_non_finite, refuse_unscaled_machines
from autovend.calibration.idrecord import Identification
from autovend.calibration.result import DIAGNOSTIC_SCALARS, CalibrationResult
from autovend.errors import InsufficientDataError
from autovend.pipeline import calibrate as stage
from tests.calibration.conftest import small_source


def _ident(res: CalibrationResult) -> Identification:
    assert res.estimates.identification is not None
    return res.estimates.identification


def test_synthetic_source_estimates_u_r_rho_on_known_shelves(synthetic_calibration):
    s = synthetic_calibration.estimates
    ident = _ident(synthetic_calibration)
    assert ident.shelves_known
    for est in (ident.u, ident.e, ident.x, ident.r, ident.rho):
        assert est.status == "estimated" and not est.weak, est
    assert (ident.u.machines, ident.u.machine_days) == (s.u_machines, s.u_machine_days) == (67, 12261)
    low, high = s.u_interval
    assert ident.u.reason == (
        "structural Poisson fit on 67 machines, 12,261 machine-days of known shelves (inventory records); "
        f"95% profile-likelihood interval {low:.3g} to {high:.3g}"
    )
    assert s.u_identified and low < s.u < high and high / low < 1.25  # the known shelves pin u to +-6%
    assert ident.r.machines == ident.rho.machines == 67


def test_synthetic_source_pools_the_scales_of_its_sales_only_machines(synthetic_calibration):
    s, m = synthetic_calibration.estimates, synthetic_calibration.machines
    ident = _ident(synthetic_calibration)
    # 99 machines, 67 with inventory records: 67 scales from the structural fit, 32 from the sales rule
    assert ident.counts("kappa") == {"estimated": 67, "pooled": 32, "borrowed": 0}
    assert s.n_machines - s.n_machines_inventory == 32
    (pooled,) = [g for g in ident.kappa if g.status == "pooled"]
    assert set(pooled.members) == set(m.loc[m["kappa_source"] == "sales_rule", "machine_id"])
    assert set(pooled.members) == set(m.loc[~m["has_inventory"], "machine_id"])
    assert pooled.reason.startswith("no inventory records: mean daily sales on sales-rule shelves")


def test_products_without_exposure_get_the_prior_mean_as_pooled(synthetic_calibration):
    pop = synthetic_calibration.popularity
    ident = _ident(synthetic_calibration)
    assert sum(ident.counts("omega").values()) == synthetic_calibration.estimates.n_products_kept == 1372
    never_shown = sum(g.count for g in ident.omega if g.reason.startswith("never on a shelf of the product split"))
    assert never_shown == int((pop["exposure"] == 0).sum()) > 0
    assert all(g.status == "pooled" for g in ident.omega if g.reason.startswith("never on a shelf"))
    assert sum(ident.counts("gamma").values()) == 18
    sites = synthetic_calibration.machines.groupby("site_type")["has_inventory"].sum()
    assert [(p.site_type, p.status, p.machines) for p in ident.pi] == [(k, "estimated", v) for k, v in sites.items()]


def test_the_identification_record_is_outside_the_content_hash(synthetic_calibration):
    """The record is diagnostic text: the committed world's calibration hash does not move with it."""
    res = synthetic_calibration
    assert "identification" in DIAGNOSTIC_SCALARS
    stored = res.estimates.stored()

    def with_estimates(scalars: dict) -> CalibrationResult:
        return dataclasses.replace(res, estimates=Estimates.from_stored(scalars))

    without = {k: v for k, v in stored.items() if k != "identification"}
    assert with_estimates(without).content_hash() == res.content_hash()
    other = _ident(res).model_copy(update={"u": _ident(res).u.model_copy(update={"reason": "anything else"})})
    assert with_estimates({**stored, "identification": other.model_dump(mode="json")}).content_hash() == (
        res.content_hash()
    )
    moved = {**stored, "u": res.estimates.u * 1.01}  # an estimate does move it
    assert with_estimates(moved).content_hash() != res.content_hash()


def test_the_record_round_trips_through_calibration_json(tmp_path, synthetic_calibration):
    synthetic_calibration.write(tmp_path / "cal")
    back = CalibrationResult.read(tmp_path / "cal")
    assert _ident(back) == _ident(synthetic_calibration)


@pytest.mark.slow
def test_without_inventory_records_every_estimate_says_it_rests_on_estimated_shelves(no_inventory_calibration):
    """Three machines over 40 days of sales: u's profile is wide, so the paper's u and x are used, with the range."""
    s = no_inventory_calibration.estimates
    ident = _ident(no_inventory_calibration)
    assert s.n_machines_inventory == 0 and not ident.shelves_known
    assert s.u_identified is False and s.u_source == "fallback" and s.u == pytest.approx(0.0638 * 0.318 / 0.682)
    assert ident.u.status == "borrowed" and "the records do not identify u" in ident.u.reason
    assert "the data cannot reject u in its 95% profile-likelihood interval" in ident.u.reason
    assert s.u_interval is not None and (s.u_interval[0] is None or s.u_interval[0] < s.u_profile_max)
    assert (
        ident.x.status == "borrowed"
        and s.x == 0.0638
        and "how full shelves estimated from sales were" in (ident.x.reason)
    )
    assert ident.r.weak and ident.rho.weak and "shelves estimated from sales" in ident.r.reason
    assert [(g.status, g.count, g.weak) for g in ident.kappa] == [("estimated", 3, True)]
    assert [p.site_type for p in ident.pi] == ["hospital", "worksite"]
    hospital, worksite = ident.pi
    assert (hospital.machines, hospital.machine_days, hospital.weak) == (1, 40, True)  # one machine stands for it
    assert hospital.pooled_settings and not worksite.pooled_settings  # hospital reads the `unknown` settings
    assert (worksite.machines, worksite.machine_days) == (2, 80)
    # products never sold have no exposure and take their subcategory's prior mean
    pop = no_inventory_calibration.popularity
    never = [g for g in ident.omega if g.reason.startswith("never on a shelf of the product split and never sold")]
    assert [g.status for g in never] == ["pooled"]
    assert never[0].count == int((pop["units"] == 0).sum()) == int((pop["exposure"] == 0).sum())


def test_one_machine_borrows_u_from_the_paper_and_pools_its_scale(one_machine_calibration):
    s = one_machine_calibration.estimates
    ident = _ident(one_machine_calibration)
    assert s.u_source == "fallback"
    assert ident.u.status == "borrowed" and ident.e.status == "borrowed"
    assert "needs at least 2 machines" in ident.u.reason and "the paper's u" in ident.u.reason
    assert ident.x.status == "estimated" and ident.x.weak and ident.x.machine_days == 40
    assert ident.counts("kappa") == {"estimated": 0, "pooled": 1, "borrowed": 0}
    assert ident.kappa[0].members == ("SH0001",)
    assert ident.kappa[0].reason.startswith("no inventory records") and "not learned" in ident.kappa[0].reason
    # subcategories none of whose products was offered keep a neutral gamma
    pop = one_machine_calibration.popularity
    unshown = sorted(set(pop["category_l2"]) - set(pop.loc[pop["exposure"] > 0, "category_l2"]))
    borrowed = [g for g in ident.gamma if g.status == "borrowed"]
    assert len(unshown) > 0 and [sorted(g.members) for g in borrowed] == [unshown]


@pytest.fixture(scope="module")
def four_months_one_inventory(tmp_path_factory):
    """Three machines, one with inventory records, 120 days: small subcategory selections leave little signal."""
    folder = tmp_path_factory.mktemp("four-months")
    src = small_source(folder, {"worksite/canteen": 2, "office/office_building": 1}, 1, 120, 3000)
    return folder / "src", src


def test_rho_at_its_lower_bound_is_marked_weak(four_months_one_inventory):
    _, src = four_months_one_inventory
    cfg = CalibrationConfig(keep_subcategories=["coffee_drinks"], until="2024-08-06")
    res = calibrate(src, cfg)
    ident = _ident(res)
    assert res.estimates.rho == 0.0
    assert ident.rho.weak and ident.rho.reason.startswith("at its lower bound 0")
    assert not ident.r.weak  # r itself is measured on the machine with known shelves


def test_an_infinite_overdispersion_is_refused_before_anything_is_written(tmp_path, four_months_one_inventory):
    src_dir, src = four_months_one_inventory
    cfg = {"keep_subcategories": ["bottled_water"], "until": "2024-08-06"}
    with pytest.raises(InsufficientDataError, match=r"r = inf; the overdispersion r is not identified.*Poisson"):
        calibrate(src, CalibrationConfig(**cfg))
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"calibrate": cfg}))
    with pytest.raises(InsufficientDataError, match=r"more machines with 28\+ days of records"):
        stage.run(src_dir, tmp_path / "out", params, None)
    assert not (tmp_path / "out").exists()


def test_refusal_names_the_parameter_and_the_data_that_would_identify_it():
    cfg = CalibrationConfig()
    refuse_non_finite({"u": 0.03, "u_se": math.nan, "e_loglog": math.nan, "notes": []}, cfg)  # null is fine there
    with pytest.raises(InsufficientDataError, match=r"x = nan; x \(real over reference shelf attraction\)"):
        refuse_non_finite({"x": math.nan}, cfg)
    with pytest.raises(InsufficientDataError, match=r"u_se = inf; the standard error of u is infinite.*2 machines"):
        refuse_non_finite({"u_se": math.inf}, cfg)
    with pytest.raises(InsufficientDataError, match=r"kappa is not identified for M2, M3"):
        refuse_unscaled_machines(np.array(["M1", "M2", "M3"]), np.array([1.0, np.nan, np.inf]))
