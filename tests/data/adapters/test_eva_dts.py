"""EVA-DTS (DEX/UCS) audits into a source: the records, the series rules, and a round trip through calibration.

The fixtures are written from the standard's public field descriptions (DXS/DXE framing, ID1 serial, ID4 decimal
places and ISO 4217 numeric currency, EA3 read date and time, PA1 selection/price/product, PA2 cumulative paid
vends and value). The round trip (slow) is PyBLP-style: a synthetic operator with a known truth is written as
weekly audits, adapted back and calibrated; its popularity must rank the products as the table path does, within
a stated tolerance.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.data.adapters.dex import parse_audit, read_audits
from autovend.data.adapters.dex_series import adapt_dex, spread
from autovend.errors import AdaptError

META = {"name": "kyiv-coffee", "timezone": "Europe/Kyiv", "country": "UA"}
PRODUCTS = pd.DataFrame(
    {"sku_id": ["LATTE", "ESPRESSO"], "category_l1": ["drinks", "drinks"], "category_l2": ["coffee", "coffee"]}
)


def audit(date: str, time: str, latte: tuple[int, int], espresso: tuple[int, int], price_latte: int = 4500) -> str:
    """One audit of machine K-0001 in UAH (numeric 980, 2 decimals): (vends, value) since initialisation."""
    return "\r\n".join(
        [
            "DXS*OPERATOR01*VA*V0/6*1",
            "ST*001*0001",
            "ID1*K-0001*CM-200*6***HALL-A",
            "ID4*2*980",
            f"EA3*12*{date}*{time}",
            "VA1*0*0",
            f"PA1*11*{price_latte}*LATTE",
            f"PA2*{latte[0]}*{latte[1]}*0*0",
            "PA1*12*3000*ESPRESSO",
            f"PA2*{espresso[0]}*{espresso[1]}",
            "G85*1A2B",
            "SE*12*0001",
            "DXE*1*1",
        ]
    )


def test_an_audit_is_read_field_by_field() -> None:
    a = parse_audit(audit("240601", "0900", (10, 45000), (4, 12000)), "a.dex")
    assert (a.machine, a.read_at, a.decimals, a.currency) == ("K-0001", dt.datetime(2024, 6, 1, 9, 0), 2, "UAH")
    assert a.selections["11"].price == 4500 and a.selections["11"].product == "LATTE"
    assert (a.selections["12"].vends, a.selections["12"].value) == (4, 12000)


def test_a_series_gives_the_sales_between_reads_spread_over_the_days() -> None:
    audits = [
        parse_audit(audit("240601", "0900", (10, 45000), (4, 12000)), "a.dex"),
        parse_audit(audit("20240603", "0900", (20, 90000), (6, 18000)), "b.dex"),  # 48 h later: 10 and 2 vends
    ]
    src = adapt_dex(audits, PRODUCTS, META)
    latte = src.orders[src.orders["sku_id"] == "LATTE"]
    assert latte["ts"].tolist() == ["2024-06-01", "2024-06-02", "2024-06-03"]
    assert latte["qty"].tolist() == [3, 5, 2]  # 15, 24 and 9 of the 48 hours: 3.125, 5, 1.875 -> largest remainders
    assert set(latte["unit_price"]) == {45.0} and src.source["currency"] == "UAH"
    assert src.orders[src.orders["sku_id"] == "ESPRESSO"]["qty"].sum() == 2
    assert src.visits["ts"].tolist() == ["2024-06-01T09:00", "2024-06-03T09:00"]
    assert src.products.set_index("sku_id")["ref_price"].to_dict() == {"LATTE": 45.0, "ESPRESSO": 30.0}
    assert src.machines.to_dict("records") == [{"machine_id": "K-0001", "site_type": "unknown"}]


def test_the_mean_price_of_an_interval_is_its_value_over_its_vends() -> None:
    audits = [
        parse_audit(audit("240601", "0900", (0, 0), (0, 0)), "a.dex"),
        parse_audit(audit("240602", "0900", (4, 16000), (0, 0), price_latte=5000), "b.dex"),  # 4 at 40.00 each
    ]
    assert set(adapt_dex(audits, PRODUCTS, META).orders["unit_price"]) == {40.0}


def test_spread_keeps_every_unit() -> None:
    start, end = pd.Timestamp("2024-06-01 09:00"), pd.Timestamp("2024-06-08 09:00")
    for units in (0, 1, 7, 13, 500):
        assert sum(n for _, n in spread(units, start, end)) == units


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ID1*X\r\nDXE*1*1", r"a\.dex: is not a DEX/UCS audit \(it must open with DXS and close with DXE\)"),
        ("DXS*A*VA*V0/6*1\r\nID1*X\r\nEA3*1*240601*0900\r\nPA2*1*1\r\nDXE*1*1", r"line 4: PA2 comes before any PA1"),
        ("DXS*A*VA*V0/6*1\r\nID1*X\r\nEA3*1*240631*0900\r\nDXE*1*1", r"line 3: EA3 read date/time '240631'"),
        ("DXS*A*VA*V0/6*1\r\nEA3*1*240601*0900\r\nDXE*1*1", r"no ID1 record with a machine serial"),
        ("DXS*A*VA*V0/6*1\r\nID1*X\r\nDXE*1*1", r"no EA3 record"),
        (
            "DXS*A*VA*V0/6*1\r\nID1*X\r\nEA3*1*240601*0900\r\nPA1*1*250*P\r\nPA2*1x*2\r\nDXE*1*1",
            r"line 5: PA201 \(paid vends since initialisation\) is '1x', not a whole number",
        ),
        ("DXS*A*VA*V0/6*1\r\nID1*X\r\nID4*2*999\r\nDXE*1*1", r"line 3: ID402 currency code '999'"),
    ],
)
def test_a_broken_audit_is_refused_naming_file_line_and_fix(text: str, message: str) -> None:
    with pytest.raises(AdaptError, match=message):
        parse_audit(text, "a.dex")


def test_the_plausibility_rules_of_a_series() -> None:
    first = parse_audit(audit("240601", "0900", (10, 45000), (4, 12000)), "a.dex")
    with pytest.raises(AdaptError, match=r"selection 11 of machine K-0001 fell from 10 vends .* re-initialised"):
        adapt_dex([first, parse_audit(audit("240603", "0900", (2, 9000), (4, 12000)), "b.dex")], PRODUCTS, META)
    with pytest.raises(AdaptError, match="two audits at one time"):
        adapt_dex([first, parse_audit(audit("240601", "0900", (11, 49500), (4, 12000)), "b.dex")], PRODUCTS, META)
    with pytest.raises(AdaptError, match=r"sold 1990 in 2\.0 days, over 500 a day: a misread counter"):
        adapt_dex([first, parse_audit(audit("240603", "0900", (2000, 9_000_000), (4, 12000)), "b.dex")], PRODUCTS, META)
    with pytest.raises(AdaptError, match=r"lacks the product ids the audits name \(PA103\): ESPRESSO"):
        b = parse_audit(audit("240603", "0900", (12, 54000), (6, 18000)), "b.dex")
        adapt_dex([first, b], PRODUCTS.iloc[:1], META)


def test_the_command_writes_a_source_the_check_accepts(tmp_path: Path) -> None:
    folder = tmp_path / "audits" / "K-0001"
    folder.mkdir(parents=True)
    (folder / "1.dex").write_bytes(audit("240601", "0900", (0, 0), (0, 0)).encode())
    (folder / "2.dex").write_bytes(audit("240608", "0900", (70, 315000), (35, 105000)).encode())
    PRODUCTS.to_csv(tmp_path / "products.csv", index=False)
    args = ["adapt", "eva-dts", str(tmp_path / "audits"), "--products", str(tmp_path / "products.csv"),
            "-o", str(tmp_path / "src"), "--name", "kyiv-coffee", "--timezone", "Europe/Kyiv", "--country", "UA",
            "--made-to-order"]  # fmt: skip
    res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert res.exit_code == 0, (res.output, res.exception)
    assert "adapted 1 machine, 2 audits: 105 units of 2 products in UAH" in res.output
    assert CliRunner().invoke(app, ["check", str(tmp_path / "src")]).exit_code == 0
    orders = pd.read_csv(tmp_path / "src" / "orders.csv")
    assert orders["qty"].sum() == 105 and orders["ts"].nunique() == 8  # 7 days, the first and last partly
    assert len(read_audits([tmp_path / "audits"])) == 2


@pytest.mark.slow  # two synthetic calibrations: about a minute
def test_synth_to_dex_to_source_to_calibration_recovers_what_the_table_path_does(tmp_path: Path) -> None:
    """Truth known: 8 machines, 120 days, no inventory records. Tolerance: the DEX path's Spearman correlation of
    popularity with the truth, on products with 30+ machine-days, within 0.05 of the table path's; the two paths'
    estimates correlate at 0.9 or more."""
    import yaml
    from scipy import stats

    from autovend.calibration.calibrate import calibrate
    from autovend.data.load import load_source

    params = tmp_path / "synth.yaml"
    locations = {"office/office_building": 3, "worksite/canteen": 3, "campus/university": 2}
    params.write_text(yaml.safe_dump({"synthesize": {"end": "2024-09-28", "target_units": 16000,
                                                     "n_with_inventory": 0, "locations": locations}}))  # fmt: skip
    settings = Path(__file__).resolve().parents[3] / "params" / "benchmark.yaml"
    res = CliRunner().invoke(app, ["synth", "-o", str(tmp_path / "src"), "--truth", str(tmp_path / "truth"),
                                   "--params", str(params), "--settings", str(settings), "--dex", str(tmp_path / "dex")])  # fmt: skip
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["adapt", "eva-dts", str(tmp_path / "dex"), "--products",
                                   str(tmp_path / "dex" / "products.csv"), "-o", str(tmp_path / "dexsrc"), "--name",
                                   "dex-cn", "--timezone", "Asia/Shanghai", "--country", "CN"])  # fmt: skip
    assert res.exit_code == 0, (res.output, res.exception)
    table = load_source(tmp_path / "src")
    dex = load_source(tmp_path / "dexsrc")
    sold = table.orders[table.orders["status"] == "completed"]
    assert dex.orders["qty"].sum() == sold["qty"].sum()  # every completed unit, in some interval
    truth = pd.read_parquet(tmp_path / "truth" / "products.parquet").set_index("sku_id")["omega"]
    pops = {name: calibrate(src).popularity.set_index("sku_id") for name, src in (("table", table), ("dex", dex))}
    well = pops["table"].index[pops["table"]["machine_days"] >= 30].intersection(pops["dex"].index)
    rho = {k: stats.spearmanr(p.loc[well, "omega"], truth.loc[well])[0] for k, p in pops.items()}
    between = stats.spearmanr(pops["table"].loc[well, "omega"], pops["dex"].loc[well, "omega"])[0]
    print(f"products {len(well)}, Spearman with the truth {rho}, between the paths {between:.3f}")
    assert len(well) >= 100 and rho["table"] >= 0.3  # a small source, but the truth is recovered (0.52 here)
    assert rho["dex"] >= rho["table"] - 0.05, rho  # 0.53 here
    assert between >= 0.9, between  # 0.986 here
