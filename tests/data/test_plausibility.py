"""Plausibility rules of `autovend check`: limits, errors for impossible values, warnings for odd ones."""

import pandas as pd
import pytest
from pydantic import ValidationError

from autovend.data.check import check_source
from autovend.data.plausibility import CheckSettings, load_check_settings
from autovend.errors import ConfigError
from tests.data.make_source import daily_tables, source_tables, write_source

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def check(tmp_path, settings=None, **tables):
    return check_source(write_source(tmp_path / "src", tables={**source_tables(), **tables}), settings)


def lines(report, kind="errors"):
    return [v.format() for v in getattr(report, kind)]


def one_line(report, *parts, kind="errors"):
    found = [line for line in lines(report, kind) if all(p in line for p in parts)]
    assert len(found) == 1, report.format()
    return found[0]


# --- settings ------------------------------------------------------------------------------


def test_defaults_and_the_params_files_sections():
    s = CheckSettings()
    assert (s.max_qty_per_line, s.min_ref_price, s.max_price_ratio, s.warn_price_ratio) == (100, 0.01, 5.0, 2.0)
    assert (s.max_cost_ratio, s.max_gap_days, s.max_outlier_share) == (2.0, 90, 0.01)
    assert (s.min_weather_coverage, s.t_max_c_range, s.max_precip_mm) == (0.8, (-60.0, 60.0), 1000.0)
    assert load_check_settings(None) == s
    assert load_check_settings(ROOT / "params" / "synthetic-cn.yaml") == s  # the section spells out the defaults
    assert load_check_settings(ROOT / "params" / "nj-vending.yaml") == s


def test_settings_refuse_unknown_keys_and_crossed_limits(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("check:\n  max_qty: 5\n")
    with pytest.raises(ConfigError, match=r"invalid `check` settings[\s\S]*max_qty"):
        load_check_settings(params)
    with pytest.raises(ValidationError, match="warn_price_ratio must not exceed max_price_ratio"):
        CheckSettings(warn_price_ratio=6.0)
    with pytest.raises(ValidationError, match="start must not be after end"):
        CheckSettings(start="2025-02-01", end="2025-01-01")


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        pytest.param(
            "check:\n  max_qty_per_line: -1\n",
            ["key check.max_qty_per_line: Input should be greater than or equal to 1 (got -1); change the value"],
            id="out-of-range",
        ),
        pytest.param(
            "check:\n  max_qty_per_lin: 5\n",
            [
                "key check.max_qty_per_lin: is no setting here; remove it or correct its spelling (the keys are: "
                "max_qty_per_line, min_ref_price,"
            ],
            id="misspelt-key",
        ),
        pytest.param(
            "check:\n  t_max_c_range: [1, x]\n",
            ["key check.t_max_c_range, entry 2: Input should be a valid number", "(got 'x')"],
            id="bad-entry",
        ),
        pytest.param(
            "check:\n  warn_price_ratio: 9\n",
            ["the `check` section: warn_price_ratio must not exceed max_price_ratio; change the values it names"],
            id="crossed-limits",
        ),
        pytest.param(
            "check: 3\n",
            ["the `check` section must be a mapping of setting names to values, got 3; write one `name: value`"],
            id="not-a-mapping",
        ),
    ],
)
def test_params_errors_name_the_file_the_key_and_the_fix_in_words(tmp_path, text, lines):
    """`check --params` showed pydantic's dump (type=..., input_value=..., a URL); `check: 3` was taken as defaults."""
    params = tmp_path / "p.yaml"
    params.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_check_settings(params)
    message = str(err.value)
    assert message.startswith(f"params file {params}")
    for line in lines:
        assert line in message
    for dump in ("type=", "input_value", "errors.pydantic.dev", "validation error for"):
        assert dump not in message


# --- orders --------------------------------------------------------------------------------


def test_quantity_per_line_over_the_limit_is_an_error_and_can_be_loosened(tmp_path):
    tables = source_tables()
    tables["orders"]["qty"] = ["1", "101", "100", "1", "1", "1", "1", "1"]
    report = check(tmp_path, **tables)
    assert report.n_errors == 1
    assert one_line(report, "orders.csv, row 2, column qty: is more than 100 units on one order line", "'101'")
    assert "raise check.max_qty_per_line" in one_line(report, "column qty")
    loose = check_source(tmp_path / "src", CheckSettings(max_qty_per_line=200))
    assert loose.ok, loose.format()
    assert loose.summary.units_sold == 1 + 101 + 100 + 1 + 1 + 1  # the completed lines: rows 1, 2, 3, 5, 7, 8


def test_unit_price_far_above_ref_price_is_an_error_a_bit_above_a_warning(tmp_path):
    tables = source_tables()
    tables["orders"].loc[0, "unit_price"] = "100"  # S1, ref 2.00: 50 x
    tables["orders"].loc[1, "unit_price"] = "13.5"  # S2, ref 4.50: 3 x
    tables["orders"].loc[2, "unit_price"] = "30"  # S3, ref 6: exactly 5 x, not above
    report = check(tmp_path, **tables)
    assert report.n_errors == 1
    one_line(report, "orders.csv, row 1, column unit_price: is more than 5 times the product's ref_price", "'100'")
    warning = one_line(report, "orders.csv, rows 2, 3, column unit_price: is more than 2 times", kind="warnings")
    assert "'13.5', '30'" in warning


def test_ref_price_below_a_cent_is_refused(tmp_path):
    tables = source_tables()
    tables["products"].loc[0, "ref_price"] = "1e-300"
    report = check(tmp_path, **tables)
    assert report.n_errors == 1
    one_line(report, "products.csv, row 1, column ref_price: is below 0.01, the smallest plausible price", "1e-300")
    # the orders of S1 are not also flagged for a price ratio against a ref_price that is itself refused
    assert not [v for v in report.errors + report.warnings if v.column == "unit_price"]


def test_unit_cost_ten_times_the_price_is_refused_above_the_price_warned(tmp_path):
    tables = source_tables()
    tables["products"]["unit_cost"] = ["20", "5", "3.1"]  # S1: 10 x its 2.00; S2: 5 > 4.50 (loss); S3 fine
    report = check(tmp_path, **tables)
    assert report.n_errors == 1
    one_line(report, "products.csv, row 1, column unit_cost: is more than 2 times the product's ref_price")
    one_line(report, "products.csv, row 2, column unit_cost: is above the product's ref_price", kind="warnings")


# --- dates ---------------------------------------------------------------------------------


def test_a_lone_line_years_away_from_the_bulk_is_an_error(tmp_path):
    tables = daily_tables("2024-06-01", days=61, lines_per_day=2)  # 122 lines: 1% is 1.22 lines
    tables["orders"].loc[40, "ts"] = "2099-06-21T10:00:00"
    report = check(tmp_path, **tables)
    assert report.n_errors == 1, report.format()
    line = one_line(report, "orders.csv, row 41, column ts: is dated 27,353 days away from the bulk of the orders")
    assert "(2024-06-01 .. 2024-07-31)" in line and "'2099-06-21T10:00:00'" in line
    # day 21 (2024-06-21) lost one of its two lines, and the weather still covers every day of the period
    assert report.warnings == []


def test_a_lone_far_line_in_a_tiny_source_is_only_a_warning(tmp_path):
    tables = source_tables()
    tables["orders"].loc[3, "ts"] = "2099-03-04T09:00:00"  # 1 of 8 lines: more than 1%, too few lines to tell
    report = check(tmp_path, **tables)
    assert report.ok, report.format()
    one_line(report, "orders.csv, row 4, column ts: is dated 27,027 days away", "with no order line", kind="warnings")


def test_a_long_pause_between_two_large_blocks_is_a_warning(tmp_path):
    first = daily_tables("2024-01-01", days=30, lines_per_day=2)
    second = daily_tables("2024-06-01", days=30, lines_per_day=2)  # 123 days after 2024-01-30
    orders = pd.concat([first["orders"], second["orders"].assign(order_id=lambda f: "p" + f["order_id"])])
    weather = pd.concat([first["weather"], second["weather"]])
    report = check(tmp_path, orders=orders.reset_index(drop=True), weather=weather, inventory=first["inventory"])
    assert report.ok, report.format()
    warned = one_line(report, "orders.csv, rows 61, 62, 63, 64, 65 (+55 more), column ts", kind="warnings")
    assert "is dated 123 days away from the bulk of the orders (2024-01-01 .. 2024-01-30)" in warned
    assert report.summary is not None and report.summary.warnings == tuple(f"{v.format()}" for v in report.warnings)


def test_declared_period_refuses_lines_outside_it(tmp_path):
    settings = CheckSettings(start="2025-03-04", end="2025-03-05")
    report = check(tmp_path, settings)
    assert report.n_errors == 3  # the three lines of 2025-03-03; the weather covers both declared days
    one_line(report, "orders.csv, rows 1, 2, 3, column ts: is outside the declared period 2025-03-04 .. 2025-03-05")
    longer = check_source(tmp_path / "src", CheckSettings(start="2025-03-03", end="2025-03-31"))
    assert longer.n_errors == 1  # the lines are inside now, but the weather covers 3 of the 29 declared days
    one_line(
        longer, "weather.csv, column date: covers 3 of the 29 days of the declared period (2025-03-03 .. 2025-03-31)"
    )


def test_inventory_far_outside_the_orders_period_is_an_error(tmp_path):
    tables = source_tables()
    tables["inventory"].loc[2, "ts"] = "2023-03-03T07:30:00"  # a year before the orders
    report = check(tmp_path, **tables)
    assert report.n_errors == 1
    one_line(
        report,
        "inventory.csv, row 3, column ts: is dated more than 90 days outside the period of the orders "
        "(2025-03-03 .. 2025-03-05)",
    )


# --- weather -------------------------------------------------------------------------------


def test_weather_for_5_of_61_days_is_an_error_for_60_a_warning(tmp_path):
    tables = daily_tables("2024-06-01", days=61, lines_per_day=1)
    sparse = tables["weather"].iloc[:5]
    report = check(tmp_path, **{**tables, "weather": sparse})
    assert report.n_errors == 1
    one_line(
        report,
        "weather.csv, column date: covers 5 of the 61 days of the period of the orders (2024-06-01 .. 2024-07-31); "
        "first missing day 2024-06-06",
        "lower check.min_weather_coverage",
    )
    almost = tables["weather"].drop(index=30)
    report = check(tmp_path / "b", **{**tables, "weather": almost})
    assert report.ok
    one_line(report, "weather.csv, column date: covers 60 of the 61 days", "2024-07-01", kind="warnings")
    loose = check_source(
        write_source(tmp_path / "c", tables={**source_tables(), **tables, "weather": sparse}),
        CheckSettings(min_weather_coverage=0.05),
    )
    assert loose.ok and len(loose.warnings) == 1


def test_weather_outside_physical_ranges_is_refused(tmp_path):
    tables = source_tables()
    tables["weather"]["t_max_c"] = ["1000000", "14", "-61"]
    tables["weather"]["precip_mm"] = ["0", "1000.5", "1000"]
    report = check(tmp_path, **tables)
    assert report.n_errors == 3
    one_line(report, "weather.csv, rows 1, 3, column t_max_c: is outside -60 .. 60 °C", "'1000000', '-61'")
    one_line(report, "weather.csv, row 2, column precip_mm: is more than 1000 mm in one day")
    assert check_source(tmp_path / "src", CheckSettings(t_max_c_range=(-70, 2e6), max_precip_mm=2000)).ok


# --- machines ------------------------------------------------------------------------------


def test_own_site_types_pass_with_a_warning_that_they_use_the_pooled_settings(tmp_path):
    tables = source_tables()
    tables["machines"]["site_type"] = ["hospital", "school", "residential"]
    tables["machines"]["location"] = ["hospital/ward_3", "", "residential/lobby"]
    report = check(tmp_path, **tables)
    assert report.ok, report.format()
    assert report.summary.machines_by_site_type == {"hospital": 1, "residential": 1, "school": 1}
    warned = one_line(
        report, "machines.csv, rows 1, 2, column site_type: is not one of the benchmark's", kind="warnings"
    )
    assert "pooled settings of `unknown`" in warned


def test_a_machine_without_completed_orders_is_a_warning(tmp_path):
    tables = source_tables()
    tables["orders"].loc[2, "status"] = "failed"  # M02's only completed line; its other line failed already
    report = check(tmp_path, **tables)
    assert report.ok
    one_line(report, "machines.csv, row 2, column machine_id: has no completed order line", kind="warnings")


# --- the gap rule's boundaries, on the rule itself ------------------------------------------------


def _ts(days: list[str], counts: list[int]) -> pd.Series:
    return pd.Series(pd.to_datetime([d for d, n in zip(days, counts, strict=True) for _ in range(n)]))


def test_a_gap_of_exactly_max_gap_days_does_not_cut_the_dates_one_more_day_does():
    from autovend.data.plausibility import order_period

    settings = CheckSettings(max_gap_days=90)
    # 2024-01-01 + 90 days = 2024-03-31: a gap of 90 days is allowed, so one block and no finding
    period, findings = order_period(_ts(["2024-01-01", "2024-03-31"], [50, 50]), settings)
    assert findings == [] and str(period.first.date()) == "2024-01-01" and str(period.last.date()) == "2024-03-31"
    # 91 days apart: two blocks of 50 lines, the second away from the bulk (the first, on a tie)
    period, findings = order_period(_ts(["2024-01-01", "2024-04-01"], [50, 50]), settings)
    assert len(findings) == 1 and "91 days away" in findings[0].problem
    assert str(period.last.date()) == "2024-01-01"


def test_a_far_block_of_exactly_the_outlier_share_is_an_error_one_line_more_a_warning():
    from autovend.data.plausibility import order_period

    settings = CheckSettings(max_gap_days=90, max_outlier_share=0.01)
    # 990 + 10 lines: the far block is exactly 1% of 1,000 lines, so its lines are errors
    _, findings = order_period(_ts(["2024-01-01", "2024-09-01"], [990, 10]), settings)
    assert len(findings) == 1 and findings[0].warning is False and int(findings[0].mask.sum()) == 10
    # 990 + 11 lines: 11 > 1% of 1,001, so the far block is only a warning (the machines may really have stopped)
    _, findings = order_period(_ts(["2024-01-01", "2024-09-01"], [990, 11]), settings)
    assert len(findings) == 1 and findings[0].warning is True


def test_a_nested_section_names_the_key_path_without_pydantic_class_names(tmp_path):
    from autovend.demand.settings import load_demand_settings

    params = tmp_path / "p.yaml"
    params.write_text("demand:\n  eta: -1\n  environment:\n    rain: []\n")
    with pytest.raises(ConfigError) as err:
        load_demand_settings(params)
    message = str(err.value)
    assert "key demand.eta: Input should be greater than or equal to 0 (got -1); change the value" in message
    assert "key demand.environment, key rain: Input should be a mapping (key: value lines) (got [])" in message
    assert "RainSettings" not in message and "instance of" not in message
