"""A made-to-order source gets a world that behaves like one (source.yaml `made_to_order: true`).

A small synthetic operator (4 machines, 60 days, no inventory records) relabelled as a Ukrainian coffee
operator in UAH, made to order, with no capacities: check -> calibrate -> export-world -> a 20-day baseline run.
What is checked is the stated rule (`autovend.world.model.MADE_TO_ORDER_SHELF_LIFE_DAYS`): a unit is one
serving's ingredients and a device's capacity the servings it holds (ingredient stock, not unlimited);
ingredients do not expire, so no shelf life, no expired sale and no fine; the prompt, the console's rules and
the run's reports say so and show no expiry (no fines or expiry columns, stock charts in servings).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from autovend.cli import app
from autovend.console.rules import rules_rows
from autovend.tools.prompts import system_prompt
from autovend.world.bundle import load_world
from autovend.world.model import MADE_TO_ORDER_SHELF_LIFE_DAYS

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "params" / "benchmark.yaml"


def invoke(*args: object) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert res.exit_code == 0, f"autovend {' '.join(map(str, args))} failed:\n{res.output}\n{res.exception!r}"
    return res.output


@pytest.fixture(scope="module")
def coffee(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("coffee")
    params = yaml.safe_load((ROOT / "params" / "synthetic-cn.yaml").read_text())
    params["synthesize"].update(
        {"end": "2024-07-30", "target_units": 3000, "n_with_inventory": 0, "locations": {"office/office_building": 4}}
    )
    normals = base / "kyiv-normals.csv"  # approximate monthly normals of Kyiv: the source covers two months only
    rows = zip(
        range(1, 13),
        (-1.1, 0.5, 6.0, 14.5, 21.0, 24.5, 26.7, 26.0, 19.9, 12.9, 5.6, 0.6),
        (38, 37, 36, 41, 60, 72, 75, 55, 55, 43, 43, 42),
        (9, 8, 8, 7, 8, 9, 8, 6, 7, 6, 8, 9),
        strict=True,
    )
    normals.write_text("month,t_max_c,precip_mm,wet_days\n" + "".join(f"{m},{t},{p},{w}\n" for m, t, p, w in rows))
    params["export"] = {"seed": 7, "start": "2025-03-01", "min_days": 20, "climate": str(normals)}  # a UA world
    (base / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    p = base / "params.yaml"
    invoke("synth", "-o", base / "synthetic", "--truth", base / "truth", "--params", p, "--settings", SETTINGS)
    src = base / "synthetic"
    meta = yaml.safe_load((src / "source.yaml").read_text())
    meta.update(name="kyiv-coffee", currency="UAH", timezone="Europe/Kyiv", country="UA", made_to_order=True)
    (src / "source.yaml").write_text(yaml.safe_dump(meta))
    machines = pd.read_csv(src / "machines.csv", dtype=str, keep_default_na=False)
    machines.assign(capacity="").to_csv(src / "machines.csv", index=False, lineterminator="\n")
    common = ["--params", p, "--settings", SETTINGS]
    invoke("check", src, "--params", p)
    invoke("calibrate", src, "-o", base / "cal", *common)
    invoke("export-world", base / "cal", src, "-o", base / "world", *common)
    invoke("run", "--world", base / "world", "--days", "20", "--out", base / "run")
    return {"world": base / "world", "run": base / "run"}


@pytest.mark.slow  # synth, calibrate, export and a run: about 40 s on 2 cores
def test_the_world_has_ingredient_stock_that_does_not_expire(coffee):
    world = load_world(coffee["world"])
    assert world.made_to_order and world.economics.currency == "UAH"
    assert set(world.catalog["shelf_life_days"]) == {MADE_TO_ORDER_SHELF_LIFE_DAYS}
    assert world.economics.expired_sale_fine == 0.0
    settings = json.loads((coffee["world"] / "settings.json").read_text())
    assert settings["made_to_order"] is True
    readme = (coffee["world"] / "README.md").read_text()
    caps = sorted(set(int(c) for c in world.machines["capacity"]))
    line = next(x for x in readme.splitlines() if "made to order (source.yaml `made_to_order`)" in x)
    assert f"servings of ingredients it holds ({', '.join(map(str, caps))}): ingredient stock, not unlimited" in line
    assert "shelf lives of" not in readme  # no 30/90-day shelf lives to account for


@pytest.mark.slow  # synth, calibrate, export and a run: about 40 s on 2 cores
def test_the_prompt_and_the_rules_say_made_to_order(coffee):
    world = load_world(coffee["world"])
    prompt = system_prompt(world)
    assert "## Made to order" in prompt and "## Shelf life" not in prompt
    assert "expired units" not in prompt and "nothing expires and there is no fine" in prompt
    rules = [r[0] for r in rules_rows(world)]
    assert "Made to order" in rules and "Shelf life" not in rules and "Expired unit sold" not in rules


@pytest.mark.slow  # synth, calibrate, export and a run: about 40 s on 2 cores
def test_the_run_has_no_expiry_and_its_reports_show_none(coffee):
    daily = pd.read_csv(coffee["run"] / "daily.csv")
    assert daily["units_sold"].sum() > 0  # the run sold: the world works
    assert daily["expired_fine"].sum() == 0 and daily["expiry_writeoff"].sum() == 0
    md = (coffee["run"] / "report.md").read_text()
    assert "| fines |" not in md and "| expiry |" not in md and "nothing expires" in md
    html = (coffee["run"] / "report.html").read_text()
    assert "Ingredient stock (servings)" in html and "Stock (units)" not in html
    assert 'id="made-to-order"' in html and "Stockouts and lost demand" not in html


def test_a_world_not_made_to_order_keeps_its_settings_and_hash():
    settings = json.loads((ROOT / "worlds" / "cn20" / "settings.json").read_text())
    assert "made_to_order" not in settings  # absent unless true: the shipped worlds' hashes stay
    assert not load_world(ROOT / "worlds" / "cn20").made_to_order
