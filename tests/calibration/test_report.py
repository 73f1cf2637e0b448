"""The calibration report: calibration.md and its figures are the same bytes when written again."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.calibration.report import render_markdown, write_report
from autovend.io import OUTPUT_MARKER, read_marker
from autovend.png import png_chunks

FIGURES = ["demand_fit.png", "overdispersion.png", "shrinkage.png", "site_preference.png"]


def test_report_written_twice_is_the_same_bytes(tmp_path, synthetic_calibration):
    write_report(synthetic_calibration, tmp_path / "a")
    write_report(synthetic_calibration, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted([OUTPUT_MARKER, "calibration.md", *FIGURES])
    assert read_marker(tmp_path / "a").files == tuple(sorted(["calibration.md", *FIGURES]))
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    for name in FIGURES:
        kinds = {kind for kind, _ in png_chunks((tmp_path / "a" / name).read_bytes())}
        assert not {b"tEXt", b"zTXt", b"iTXt", b"tIME"} & kinds, name
    text = (tmp_path / "a" / "calibration.md").read_text()
    assert "| kept products | `n_products_kept` | 1,372 | 1,372 |" in text
    assert all(f"![{f}]({f})" in text for f in FIGURES)


def test_report_tables_what_the_data_identify(synthetic_calibration):
    s = synthetic_calibration.estimates
    text = render_markdown(synthetic_calibration, [])
    assert "## What the data identify" in text and "| parameter | value | status | reason |" in text
    low, high = s.u_interval
    u_row = (
        f"| `u` | {s.u:,.4g} | estimated | structural Poisson fit on 67 machines, 12,261 machine-days of known "
        f"shelves (inventory records); 95% profile-likelihood interval {low:.3g} to {high:.3g} |"
    )
    assert u_row in text
    assert "| `kappa` | 32 machines (SH0003, SH0008, " in text  # the 32 sales-only machines, named
    assert "| pooled | no inventory records: mean daily sales on sales-rule shelves" in text
    assert "u: estimated: structural Poisson fit on 67 machines" in text


def test_report_without_inventory_records_does_not_claim_known_shelves(no_inventory_calibration):
    text = render_markdown(no_inventory_calibration, [])
    assert "known shelves" not in text
    assert "u: borrowed: the records do not identify u" in text
    assert f"| `u` | {no_inventory_calibration.estimates.u:,.4g} | borrowed | " in text
    assert "| `kappa` | 3 machines (SH0001, SH0002, SH0003) | estimated, weak | " in text
    assert "no demand settings of its own: price elasticity and environment from the pooled `unknown`" in text


def test_report_names_what_was_borrowed_and_pooled(one_machine_calibration):
    text = render_markdown(one_machine_calibration, [])
    assert (
        f"| `u` | {one_machine_calibration.estimates.u:,.4g} | borrowed | the no-purchase weight u needs at least 2"
        in text
    )
    assert "| `e` | " in text and "| borrowed | u / (u + x) with the paper's u and this source's x |" in text
    assert "| `kappa` | 1 machine (SH0001) | pooled, weak | no inventory records: " in text


def test_report_shows_the_price_response_of_the_calibrated_machines(no_inventory_calibration):
    """Units at 1.0x on the full shelf are DemandModel.expected on each machine's reference shelf, averaged per
    site type; units fall with the multiplier; revenue at 2.0x over 1.0x is 2 x units(2.0) / units(1.0)."""
    from autovend.calibration.report import calibration_model
    from autovend.world.price_response import MULTIPLIERS, site_response

    res = no_inventory_calibration
    text = render_markdown(res, [])
    assert "## Price response" in text and "Estimator: structural" in text
    model = calibration_model(res)
    q, _ = model.reference_shelves()
    rates = model.expected(q, np.ones(q.shape)).sum(axis=1)
    sites = res.machines["site_type"].to_numpy()
    n = len(res.popularity)
    resp = site_response(model, sites, np.ones(n), np.zeros(n), "")
    at = MULTIPLIERS.index(1.0)
    for j, site in enumerate(resp.site_types):
        assert resp.units[1, j, at] == pytest.approx(rates[sites == site].mean(), rel=1e-12)
        u = resp.units[1, j]
        row = f"| {site} | full | {resp.saturation[1, j]:.1f} | {u[0]:.2f} | {u[at]:.2f} |"
        assert row in text
        assert f"| {2.0 * u[-1] / u[at]:.2f} |" in text
    assert np.all(np.diff(resp.units, axis=-1) < 0)
