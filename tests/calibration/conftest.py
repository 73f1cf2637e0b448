"""Small synthetic sources without inventory records, each calibrated once per session."""

from __future__ import annotations

import datetime as dt

import pytest

from autovend.data.synth.config import SynthConfig


def small_source(
    folder, locations: dict[str, int], n_with_inventory: int, days: int, units: int, site_types: dict | None = None
):
    """A checked synthetic source of `days` days from 2024-06-03 (seed 3), loaded from `folder`/src.

    `site_types` (machine_id -> site type) relabels machines in machines.csv after writing.
    """
    import pandas as pd

    from autovend.data.load import load_source
    from autovend.data.synth.generate import synthesize, write_source

    cfg = SynthConfig(
        seed=3,
        start=dt.date(2024, 6, 3),
        end=dt.date(2024, 6, 3) + dt.timedelta(days=days - 1),
        locations=locations,
        n_with_inventory=n_with_inventory,
        target_units=units,
    )
    write_source(synthesize(cfg), folder / "src", folder / "truth")
    if site_types:
        machines = pd.read_csv(folder / "src" / "machines.csv", dtype=str, keep_default_na=False)
        relabel = machines["machine_id"].isin(list(site_types))
        machines.loc[relabel, "site_type"] = machines.loc[relabel, "machine_id"].map(site_types)
        machines.loc[relabel, "location"] = ""  # a location names its site type
        machines.to_csv(folder / "src" / "machines.csv", index=False)
    return load_source(folder / "src")


@pytest.fixture(scope="session")
def no_inventory_calibration(tmp_path_factory):
    """Three machines, 40 days, 600 units, no inventory records: two worksite machines and SH0003 relabelled
    `hospital`, a site type without demand settings of its own."""
    from autovend.calibration.calibrate import calibrate

    folder = tmp_path_factory.mktemp("no-inventory")
    locations = {"worksite/canteen": 2, "office/office_building": 1}
    return calibrate(small_source(folder, locations, 0, 40, 600, site_types={"SH0003": "hospital"}))


@pytest.fixture(scope="session")
def one_machine_calibration(tmp_path_factory):
    """One worksite machine, 40 days, 600 units, no inventory records: too few machines for u."""
    from autovend.calibration.calibrate import calibrate

    folder = tmp_path_factory.mktemp("one-machine")
    return calibrate(small_source(folder, {"worksite/canteen": 1}, 0, 40, 600))
