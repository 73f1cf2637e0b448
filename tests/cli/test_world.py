"""`autovend world info/list` and `--world` by name: a shipped world is found from any folder."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import BundleError
from autovend.world import names


def test_world_info_by_name_from_another_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["world", "info", "cn20"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("cn20: verified")


def test_run_takes_a_shipped_world_by_name_and_records_its_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r"
    result = CliRunner().invoke(app, ["run", "--world", "cn20", "--days", "1", "--out", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "run.json").read_text())
    assert meta["world_path"] == str(names.SHIPPED / "cn20") and meta["days"] == 1


def test_an_unknown_world_name_is_refused_with_the_known_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["world", "info", "cn21"])
    assert isinstance(result.exception, BundleError)
    assert (
        "world 'cn21' does not exist: it is neither a bundle folder nor the name of an installed or shipped world "
        "(names: cn20" in str(result.exception)
    )


def test_world_price_response_writes_the_figure_and_its_table(tmp_path):
    import pandas as pd

    res = CliRunner().invoke(app, ["world", "price-response", "worlds/cn20", "-o", str(tmp_path / "pr")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "pr" / "price_response.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = pd.read_csv(tmp_path / "pr" / "price_response.csv")
    assert len(table) == 2 * 5 * 16  # shelves x cn20's five site types x multipliers 0.5-2.0
    one = table[(table["multiplier"] == 1.0) & (table["shelf"] == "full")]
    assert (one["units"] == one["unsaturated_units"]).all()
    again = CliRunner().invoke(app, ["world", "price-response", "worlds/cn20", "-o", str(tmp_path / "pr")])
    assert again.exit_code != 0 and "pass --force" in str(again.exception or again.output)
