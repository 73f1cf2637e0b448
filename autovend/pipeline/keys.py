"""What each setting of a source's params file means: the comments `autovend init-source` writes, and docs.

docs/operators.md documents the same keys; tests/pipeline/test_init_source.py holds both to the settings models:
every field of check, calibrate, validate and export has its line here and in the docs.
"""

from __future__ import annotations

SOURCE_SECTIONS = ("check", "calibrate", "validate", "export")

KEY_DOCS: dict[str, dict[str, str]] = {
    "check": {
        "max_qty_per_line": "most units on one order line; more is an error",
        "min_ref_price": "lowest reference price in the source's currency",
        "max_price_ratio": "unit_price / ref_price above this is an error",
        "warn_price_ratio": "unit_price / ref_price above this is a warning (at most max_price_ratio)",
        "max_cost_ratio": "unit_cost / ref_price above this is an error (above 1: a warning)",
        "max_gap_days": "order dates further apart than this cut the records into blocks",
        "max_outlier_share": "a block of dates off the bulk holding this share of lines or less is an error",
        "start": "declared first day of the records (optional; dates outside are errors)",
        "end": "declared last day of the records (optional)",
        "min_weather_coverage": "share of the records' days the weather table must cover",
        "t_max_c_range": "plausible daily maximum temperatures, °C (lowest, highest)",
        "max_precip_mm": "most precipitation in one day, mm",
    },
    "calibrate": {
        "keep_subcategories": "the subcategories to model (null: every subcategory of the source)",
        "sales_rule_gap_days": "G of the sales rule: a product counts as offered between sales at most G days apart",
        "until": "use only records before this date (null: all; validation sets it for its training window)",
        "min_panel_days": "a source needs at least this many days of records",
        "min_machine_days_u": "days of known shelves a machine needs to inform the no-purchase weight u",
        "min_machines_u": "machines with known shelves needed to estimate u (else u_fallback)",
        "min_machine_days_shock": "days a machine needs to inform the shock's overdispersion r and persistence rho",
        "mm_iterations": "cap on the choice model's MM iterations per EM round",
        "mm_tolerance": "MM stops when no parameter moves by more than this, relatively, in one sweep",
        "mm_pseudo_units": "prior pseudo-units per product that keep every popularity finite",
        "em_rounds": "censored-demand EM rounds around the MM fit (0: none)",
        "availability_rounds": "EM rounds of the latent availability of shelves estimated from sales alone",
        "u_bounds": "bounds of the no-purchase weight u (low, high)",
        "u_fallback": "u when the source cannot identify it (the paper's value)",
        "x_prior": "the typical shelf's attraction over the reference shelf's given to shelves estimated from sales "
        "with the paper's u (the paper's x)",
        "min_exposure_report": "machine-days of exposure of the 'well exposed' products in the report",
        "popularity_prior": "how popularity is shrunk: subcategory, exposure or dropped",
    },
    "validate": {
        "test_weeks": "the last weeks of the records held out and forecast",
        "seeds": "replay draws per forecast",
        "seed": "base seed of the replay streams",
        "persistence_weeks": "look-back of the persistence reference, weeks",
        "other_share": "subcategories below this realised share pool into Other (figures only)",
        "min_machine_days": "training days a machine needs to be evaluated",
        "limits": "what limits this source's numbers: a paragraph written into validation.md",
        "shelf_weeks": "sales-only machines: look-back of the pre-window assortment, weeks",
        "include_sales_only": "with inventory records: also score the sales-only machines (mixed)",
        "bootstrap": "bootstrap resamples of every interval: of machines, or of test weeks below 3 machines",
        "level": "backtest (follow recent machine levels when backtests say so) or off",
    },
    "export": {
        "seed": "seed of the network draw, the margin draws, the weather and the forecasts",
        "start": "day 1 of the world's episodes",
        "climate": "normals of the world's seeded weather: a named climate of the world's country (Shanghai: CN, "
        "NewYork: US), source (the source's weather table) or a normals CSV (month, t_max_c, precip_mm, wet_days)",
        "country": "public holidays and makeup workdays; null: the source's (another country is refused)",
        "timezone": "the world's time zone; null: the source's",
        "calendar_language": "language of holiday names (e.g. uk, en_US, zh_CN); null: the calendar library's default",
        "capacity": "units (made to order: servings) per device; null: the network file's, else the source's",
        "min_days": "days of records a source machine needs to be preferred as a device",
        "forecast_days": "days of weather forecast the agent sees",
        "calendar_lookahead_days": "how far past any day get_calendar looks",
        "calendar_margin_days": "calendar days kept beyond that",
        "margins": "gross-margin band (low, high) per category_l1, for products without a unit cost",
        "other_margin": "the band of categories without one in margins",
        "economics_rate": "value of one CNY (the benchmark's rules) in the source's currency; null: the catalog's "
        "price level against the benchmark's",
    },
}
