"""The operator's whole path, as docs/operators.md gives it, from a one-table export to a world run by name.

A Kyiv coffee operator's export (one CSV: receipts with machine, item, category, site, price and status; made to
order, in hryvnias) is cut from a small synthetic operator. In an empty repository folder: `autovend init-source`
writes the params file and pipeline; `autovend adapt table` turns the export into data/raw/NAME; every stage of
the written pipeline runs with the command it holds (check, calibrate, validate, export, the baseline and oracle
seeds, ship); `autovend world install` installs the shipped world; and from another empty folder `autovend run
--world coffee1` runs it by name, in UAH.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from autovend.cli import app
from autovend.world.bundle import load_world

ROOT = Path(__file__).resolve().parents[2]
MAPPING = {
    "source": {
        "name": "kyiv-coffee",
        "currency": "UAH",
        "timezone": "Europe/Kyiv",
        "country": "UA",
        "description": "A coffee operator's export (a test made from the synthetic operator)",
        "made_to_order": True,
    },
    "orders": {
        "order_id": "Receipt",
        "machine_id": "Machine",
        "sku_id": "Item code",
        "ts": {"column": "Sold at", "formats": ["%Y-%m-%dT%H:%M:%S"]},
        "qty": "Qty",
        "unit_price": "Price",
        "status": {"column": "State", "values": {"ok": "completed", "returned": "refunded", "declined": "failed"}},
    },
    "machines": {"site_type": "Site", "location": "Site"},
    "products": {
        "name": "Item",
        "category_l1": "Group",
        "category_l2": "Kind",
        "ref_price": "List price",
    },
}
KYIV = "month,t_max_c,precip_mm,wet_days\n" + "".join(
    f"{m},{t},{p},{w}\n"
    for m, t, p, w in zip(
        range(1, 13),
        (-1.1, 0.5, 6.0, 14.5, 21.0, 24.5, 26.7, 26.0, 19.9, 12.9, 5.6, 0.6),
        (38, 37, 36, 41, 60, 72, 75, 55, 55, 43, 43, 42),
        (9, 8, 8, 7, 8, 9, 8, 6, 7, 6, 8, 9),
        strict=True,
    )
)


def invoke(*args: object, env: dict[str, str] | None = None) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", **(env or {})})
    assert res.exit_code == 0, f"autovend {' '.join(map(str, args))} failed:\n{res.output}\n{res.exception!r}"
    return res.output


def one_table_export(tmp: Path) -> Path:
    """The operator's one CSV, from a 4-machine, 80-day synthetic operator without inventory records."""
    params = tmp / "synth.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "synthesize": {
                    "end": "2024-08-19",
                    "target_units": 6000,
                    "n_with_inventory": 0,
                    "locations": {"office/office_building": 2, "worksite/canteen": 2},
                }
            }
        )
    )
    invoke("synth", "-o", tmp / "synthetic", "--truth", tmp / "truth", "--params", params, "--settings",
           ROOT / "params" / "benchmark.yaml")  # fmt: skip
    src = tmp / "synthetic"
    orders = pd.read_csv(src / "orders.csv", dtype=str)
    products = pd.read_csv(src / "products.csv", dtype=str)
    machines = pd.read_csv(src / "machines.csv", dtype=str)
    table = orders.merge(products, on="sku_id").merge(machines, on="machine_id")
    state = {"completed": "ok", "refunded": "returned", "failed": "declined"}
    export = pd.DataFrame(
        {
            "Receipt": table["order_id"],
            "Machine": table["machine_id"],
            "Item code": table["sku_id"],
            "Item": table["name"],
            "Group": table["category_l1"],
            "Kind": table["category_l2"],
            "List price": table["ref_price"],
            "Sold at": table["ts"],
            "Qty": table["qty"],
            "Price": table["unit_price"],
            "State": table["status"].map(state),
            "Site": table["site_type"],
        }
    )
    path = tmp / "export.csv"
    export.to_csv(path, index=False)
    return path


def stage_commands(pipeline: Path) -> list[list[str]]:
    """Each stage's commands as `autovend` argument lists, in the file's order."""
    out = []
    for stage in yaml.safe_load(pipeline.read_text())["stages"].values():
        cmds = stage["cmd"] if isinstance(stage["cmd"], list) else [stage["cmd"]]
        for cmd in cmds:
            words = shlex.split(" ".join(cmd.split()))
            assert words[0] == "autovend"
            out.append(words[1:])
    return out


@pytest.mark.slow  # a synthetic operator, calibration, validation, export, six runs and a ship: minutes
def test_from_a_one_table_export_to_a_world_run_by_name(tmp_path: Path, monkeypatch) -> None:
    export = one_table_export(tmp_path)
    repo, anywhere, data = tmp_path / "repo", tmp_path / "anywhere", tmp_path / "data"
    for folder in (repo, anywhere):
        folder.mkdir()
    monkeypatch.delenv("AUTOVEND_WORLDS_PATH", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.chdir(repo)
    (repo / "mapping.yaml").write_text(yaml.safe_dump(MAPPING, sort_keys=False))
    (repo / "kyiv-normals.csv").write_text(KYIV)

    invoke("init-source", "kyiv-coffee", "--world", "coffee1", "--climate", "kyiv-normals.csv")
    params_path = repo / "params" / "kyiv-coffee.yaml"
    params = yaml.safe_load(params_path.read_text())
    params["validate"].update(test_weeks=2, seeds=5, bootstrap=200, min_machine_days=7)  # a small source
    params["export"].update(min_days=20)
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    invoke("adapt", "table", export, "--map", "mapping.yaml", "-o", "data/raw/kyiv-coffee")
    for args in stage_commands(repo / "pipelines" / "kyiv-coffee" / "dvc.yaml"):
        invoke(*args)

    shipped = repo / "worlds" / "coffee1"
    world = load_world(shipped)
    assert world.economics.currency == "UAH" and world.country == "UA" and world.made_to_order
    assert "## Baseline" in (shipped / "README.md").read_text() or "Baseline" in (shipped / "README.md").read_text()
    invoke("world", "install", shipped)
    assert (data / "autovend" / "worlds" / "coffee1" / "manifest.json").is_file()

    monkeypatch.chdir(anywhere)
    out = invoke("run", "--world", "coffee1", "--days", "5", "--out", "r")
    assert "UAH" in out
    report = (anywhere / "r" / "report.md").read_text()
    assert "UAH" in report and "CNY" not in report
