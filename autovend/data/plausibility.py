"""Plausibility rules of `autovend check`: values that parse and follow the contract but cannot be real.

The limits live in `CheckSettings`, the `check:` section of `params/<source>.yaml` (defaults below); an
operator whose records are unusual but real loosens one there. Each rule yields `Finding`s over the
typed tables (values already coerced; NaN/NaT where a cell was blank or bad, which no rule flags again):
errors for what cannot be real, warnings for what may be real but deserves a look. Rules:

- orders: `qty` above `max_qty_per_line`; `unit_price` above `max_price_ratio` x the product's
  `ref_price` (a warning above `warn_price_ratio` x); `ts` outside the declared period (`start`,
  `end`) when one is set;
- the gap rule for order dates: the sorted distinct order dates are cut into blocks wherever two
  consecutive ones are more than `max_gap_days` apart; the block with the most lines is the *bulk*. Lines of
  another block are errors when that block holds at most `max_outlier_share` of all lines (a lone line
  dated 2099 in a 2024 source of a few thousand lines), a warning otherwise (a long pause in the
  records, or a lone far line in a source too small to tell). The *period* is the bulk's first to last
  date, or the declared one;
- products: `ref_price` below `min_ref_price`; `unit_cost` above `max_cost_ratio` x `ref_price` (a
  warning above 1 x: the product sells at a loss);
- inventory: counts dated more than `max_gap_days` outside the period;
- weather: fewer than `min_weather_coverage` of the period's days have a row (a warning below all of
  them: missing days get neutral weather); `t_max_c` outside `t_max_c_range`; `precip_mm` above
  `max_precip_mm`;
- machines (warnings): a machine without any completed order line (calibration leaves it out), and a
  site type the benchmark has no demand settings for (it gets the pooled `unknown` settings).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from autovend.config import load_section
from autovend.data.contract import DEFAULT_STATUS, SITE_TYPE_PATTERN
from autovend.data.keys import by_key
from autovend.demand.settings import SITE_TYPES

_LOOSEN = "if it is real, raise check.{key} in params/<source>.yaml"


class CheckSettings(BaseModel):
    """Limits of the plausibility rules (params section `check`); see the module docstring for each rule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_qty_per_line: int = Field(100, ge=1)  # units on one order line
    min_ref_price: float = Field(0.01, gt=0)  # in the source's currency
    max_price_ratio: float = Field(5.0, gt=0)  # unit_price / ref_price above this: error
    warn_price_ratio: float = Field(2.0, gt=0)  # unit_price / ref_price above this: warning
    max_cost_ratio: float = Field(2.0, gt=0)  # unit_cost / ref_price above this: error (above 1: warning)
    max_gap_days: int = Field(90, ge=1)  # order dates further apart than this cut the dates into blocks
    max_outlier_share: float = Field(0.01, ge=0.0, lt=0.5)  # a block off the bulk with this share of lines: error
    start: dt.date | None = None  # declared first day of the records (optional)
    end: dt.date | None = None  # declared last day of the records (optional)
    min_weather_coverage: float = Field(0.8, ge=0.0, le=1.0)  # share of the period's days weather must cover
    t_max_c_range: tuple[float, float] = (-60.0, 60.0)  # °C, daily maximum
    max_precip_mm: float = Field(1000.0, gt=0)  # mm in one day

    @model_validator(mode="after")
    def _ordered(self) -> CheckSettings:
        if self.warn_price_ratio > self.max_price_ratio:
            raise ValueError("warn_price_ratio must not exceed max_price_ratio")
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError("start must not be after end")
        if not self.t_max_c_range[0] < self.t_max_c_range[1]:
            raise ValueError("t_max_c_range must be (lowest, highest) with lowest < highest")
        return self


def load_check_settings(path: str | Path | None) -> CheckSettings:
    """Read the `check` section of a params YAML file; the defaults when `path` is None or it has none."""
    return load_section(CheckSettings, path, "check")


@dataclass(frozen=True, eq=False)
class Finding:
    """One plausibility problem of one table and column; `mask` marks the rows (None: the whole table)."""

    stem: str
    column: str | None
    mask: np.ndarray | None
    problem: str
    fix: str
    warning: bool = False


@dataclass(frozen=True)
class Period:
    """The days the records cover: the bulk of the order dates, or the declared period."""

    first: pd.Timestamp
    last: pd.Timestamp
    declared: bool

    @property
    def n_days(self) -> int:
        """Days from first to last, both included."""
        return int((self.last - self.first) / pd.Timedelta(days=1)) + 1

    def text(self) -> str:
        """'2024-06-01 .. 2024-11-30'."""
        return f"{self.first.date()} .. {self.last.date()}"

    def name(self) -> str:
        """What the period is, with its dates: "the orders' period (2024-06-01 .. 2024-11-30)"."""
        return f"{'the declared period' if self.declared else 'the period of the orders'} ({self.text()})"


def _col(tables: dict[str, pd.DataFrame], stem: str, column: str) -> pd.Series | None:
    frame = tables.get(stem)
    return frame[column] if frame is not None and column in frame.columns else None


def _ratio_to_ref(values: pd.Series, skus: pd.Series, products: pd.DataFrame, settings: CheckSettings) -> np.ndarray:
    """values / ref_price of each row's product (NaN where either is unknown or the ref_price is implausible)."""
    ref = products.dropna(subset=["sku_id", "ref_price"]).drop_duplicates("sku_id").set_index("sku_id")["ref_price"]
    ref = ref[ref >= settings.min_ref_price]
    return values.to_numpy(dtype="float64") / by_key(skus, ref, np.nan)


def order_row_findings(tables: dict[str, pd.DataFrame], settings: CheckSettings) -> list[Finding]:
    """The per-row rules of the orders: qty per line, price against the product's ref_price."""
    out: list[Finding] = []
    qty = _col(tables, "orders", "qty")
    if qty is not None:
        big = (qty > settings.max_qty_per_line).to_numpy(dtype=bool)
        if big.any():
            out.append(
                Finding(
                    "orders",
                    "qty",
                    big,
                    f"is more than {settings.max_qty_per_line} units on one order line",
                    "correct the quantity (a price or an id in the qty column?); "
                    + _LOOSEN.format(key="max_qty_per_line"),
                )
            )
    price, skus = _col(tables, "orders", "unit_price"), _col(tables, "orders", "sku_id")
    products = tables.get("products")
    if price is not None and skus is not None and products is not None and "ref_price" in products:
        ratio = _ratio_to_ref(price, skus, products, settings)
        over = ratio > settings.max_price_ratio
        if over.any():
            out.append(
                Finding(
                    "orders",
                    "unit_price",
                    over,
                    f"is more than {settings.max_price_ratio:g} times the product's ref_price",
                    "correct the price or the product's ref_price (same currency unit in both); "
                    + _LOOSEN.format(key="max_price_ratio"),
                )
            )
        high = (ratio > settings.warn_price_ratio) & ~over
        if high.any():
            out.append(
                Finding(
                    "orders",
                    "unit_price",
                    high,
                    f"is more than {settings.warn_price_ratio:g} times the product's ref_price",
                    "check the price and the product's ref_price; nothing to do if the price was really charged",
                    warning=True,
                )
            )
    return out


def product_findings(tables: dict[str, pd.DataFrame], settings: CheckSettings) -> list[Finding]:
    """The products' rules: ref_price and unit_cost."""
    out: list[Finding] = []
    ref = _col(tables, "products", "ref_price")
    if ref is None:
        return out
    tiny = ((ref > 0) & (ref < settings.min_ref_price)).to_numpy(dtype=bool)  # <= 0 breaks the contract itself
    if tiny.any():
        out.append(
            Finding(
                "products",
                "ref_price",
                tiny,
                f"is below {settings.min_ref_price:g}, the smallest plausible price",
                "give the price in source.yaml's currency (not in thousands, not a rounding residue); "
                + _LOOSEN.format(key="min_ref_price").replace("raise", "lower"),
            )
        )
    cost = _col(tables, "products", "unit_cost")
    if cost is None:
        return out
    ratio = (cost / ref.where(~tiny)).to_numpy(dtype="float64")
    over = ratio > settings.max_cost_ratio
    if over.any():
        out.append(
            Finding(
                "products",
                "unit_cost",
                over,
                f"is more than {settings.max_cost_ratio:g} times the product's ref_price",
                "correct the cost or the ref_price (same currency unit, cost per unit not per case); "
                + _LOOSEN.format(key="max_cost_ratio"),
            )
        )
    loss = (ratio > 1.0) & ~over
    if loss.any():
        out.append(
            Finding(
                "products",
                "unit_cost",
                loss,
                "is above the product's ref_price (it sells at a loss)",
                "check the cost and the ref_price; nothing to do if the product really sells below cost",
                warning=True,
            )
        )
    return out


def day_counts(ts: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The distinct days (datetime64[ns], sorted) of the timestamps and the rows on each (missing ones left out).

    What the gap rule needs of a table's dates: a partitioned table's days are these summed over its partitions.
    """
    days = ts.dt.normalize().dropna()
    if days.empty:
        return np.zeros(0, dtype="datetime64[ns]"), np.zeros(0, dtype=np.int64)
    codes, uniques = pd.factorize(days.to_numpy(), sort=True)
    return np.asarray(uniques, dtype="datetime64[ns]"), np.bincount(codes, minlength=len(uniques)).astype(np.int64)


def merge_day_counts(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """`day_counts` of the rows of every part together."""
    days = np.concatenate([d for d, _ in parts]) if parts else np.zeros(0, dtype="datetime64[ns]")
    counts = np.concatenate([c for _, c in parts]) if parts else np.zeros(0, dtype=np.int64)
    uniques, inverse = np.unique(days, return_inverse=True)
    return uniques, np.bincount(inverse, weights=counts, minlength=len(uniques)).astype(np.int64)


@dataclass(frozen=True)
class PeriodRule:
    """The gap rule and the declared period over a table's order dates (module docstring).

    Built from the distinct days and their line counts (`day_counts`), so one rule serves a whole table or each
    partition of a partitioned one: `findings` marks the rows of any set of the table's lines.
    """

    firsts: np.ndarray  # each block's first day (datetime64[ns])
    lasts: np.ndarray
    counts: np.ndarray  # lines per block
    bulk: int
    small: float  # a block off the bulk with at most this many lines is an error
    period: Period
    declared: tuple[pd.Timestamp, pd.Timestamp] | None  # the declared period's ends, when one is set

    def findings(self, orders_ts: pd.Series) -> list[Finding]:
        """The gap rule's and the declared period's findings over these order lines' timestamps."""
        days = orders_ts.dt.normalize()
        values = days.to_numpy(dtype="datetime64[ns]")
        known = ~np.isnat(values)
        block = np.searchsorted(self.firsts, values, side="right") - 1
        block = np.where(known, block, -1)
        bulk = self.bulk
        bulk_text = f"{pd.Timestamp(self.firsts[bulk]).date()} .. {pd.Timestamp(self.lasts[bulk]).date()}"
        out: list[Finding] = []
        for b in range(len(self.firsts)):
            mask = block == b
            if b == bulk or not mask.any():
                continue
            away = (self.firsts[bulk] - self.lasts[b]) if b < bulk else (self.firsts[b] - self.lasts[bulk])
            days_away = int(away / np.timedelta64(1, "D"))
            if self.counts[b] <= self.small:
                out.append(
                    Finding(
                        "orders",
                        "ts",
                        mask,
                        f"is dated {days_away:,} days away from the bulk of the orders ({bulk_text})",
                        "correct the date (a wrong year or month?) or drop the line; if these lines are real, raise "
                        "check.max_gap_days or declare the period with check.start and check.end",
                    )
                )
            else:
                out.append(
                    Finding(
                        "orders",
                        "ts",
                        mask,
                        f"is dated {days_away:,} days away from the bulk of the orders ({bulk_text}), with no order "
                        "line in between",
                        "check that no export is missing or misdated; nothing to do if the machines really stopped "
                        "(a lone line here is an error in a source of 100 lines or more)",
                        warning=True,
                    )
                )
        if self.declared is not None:
            first, last = self.declared
            outside = ((days < first) | (days > last)).to_numpy(dtype=bool)
            if outside.any():
                out.append(
                    Finding(
                        "orders",
                        "ts",
                        outside,
                        f"is outside the declared period {self.period.text()}",
                        "correct the date, or widen check.start / check.end in params/<source>.yaml",
                    )
                )
        return out

    def flags(self, days: np.ndarray) -> bool:
        """Whether any of these distinct days (datetime64[ns]) gives a finding (a part to look at again)."""
        if len(days) == 0:
            return False
        block = np.searchsorted(self.firsts, days, side="right") - 1
        if np.any(block != self.bulk):
            return True
        if self.declared is not None:
            first, last = (np.datetime64(t.to_datetime64(), "ns") for t in self.declared)
            return bool(np.any((days < first) | (days > last)))
        return False


def period_rule(days: np.ndarray, counts: np.ndarray, settings: CheckSettings) -> PeriodRule | None:
    """The period rule over the order dates' distinct `days` and lines per day; None without any dated line."""
    if len(days) == 0:
        return None
    gaps = np.diff(days) / np.timedelta64(1, "D")
    block_of_day = np.concatenate([[0], np.cumsum(gaps > settings.max_gap_days)]).astype(np.int64)
    n_blocks = int(block_of_day[-1]) + 1
    starts = np.flatnonzero(np.r_[True, block_of_day[1:] != block_of_day[:-1]])
    ends = np.r_[starts[1:], len(days)] - 1
    firsts, lasts = days[starts], days[ends]
    block_counts = np.bincount(block_of_day, weights=counts, minlength=n_blocks).astype(np.int64)
    bulk = int(np.argmax(block_counts))
    small = settings.max_outlier_share * int(block_counts.sum())
    period = Period(pd.Timestamp(firsts[bulk]), pd.Timestamp(lasts[bulk]), declared=False)
    declared = None
    if settings.start is not None or settings.end is not None:
        first = pd.Timestamp(settings.start) if settings.start is not None else period.first
        last = pd.Timestamp(settings.end) if settings.end is not None else period.last
        period = Period(first, last, declared=True)
        declared = (first, last)
    return PeriodRule(firsts, lasts, block_counts, bulk, small, period, declared)


def order_period(orders_ts: pd.Series, settings: CheckSettings) -> tuple[Period | None, list[Finding]]:
    """The period of the records and the findings of the gap rule and the declared period over `ts`."""
    rule = period_rule(*day_counts(orders_ts), settings)
    if rule is None:
        return None, []
    return rule.period, rule.findings(orders_ts)


def inventory_findings(tables: dict[str, pd.DataFrame], period: Period, settings: CheckSettings) -> list[Finding]:
    """Inventory counts dated more than max_gap_days outside the period (rows of any set of the table's)."""
    ts = _col(tables, "inventory", "ts")
    if ts is None:
        return []
    margin = pd.Timedelta(days=settings.max_gap_days)
    days = ts.dt.normalize()
    far = ((days < period.first - margin) | (days > period.last + margin)).to_numpy(dtype=bool)
    if not far.any():
        return []
    return [
        Finding(
            "inventory",
            "ts",
            far,
            f"is dated more than {settings.max_gap_days} days outside {period.name()}",
            "correct the date (a wrong year or month?) or drop the row; " + _LOOSEN.format(key="max_gap_days"),
        )
    ]


def weather_findings(tables: dict[str, pd.DataFrame], period: Period | None, settings: CheckSettings) -> list[Finding]:
    """The weather's values and its coverage of the period."""
    out: list[Finding] = []
    t_max = _col(tables, "weather", "t_max_c")
    if t_max is not None:
        lo, hi = settings.t_max_c_range
        odd = ((t_max < lo) | (t_max > hi)).to_numpy(dtype=bool)
        if odd.any():
            out.append(
                Finding(
                    "weather",
                    "t_max_c",
                    odd,
                    f"is outside {lo:g} .. {hi:g} °C",
                    "give the daily maximum in degrees Celsius (not Fahrenheit, not tenths of a degree); "
                    "if it is real, widen check.t_max_c_range in params/<source>.yaml",
                )
            )
    precip = _col(tables, "weather", "precip_mm")
    if precip is not None:
        odd = (precip > settings.max_precip_mm).to_numpy(dtype=bool)
        if odd.any():
            out.append(
                Finding(
                    "weather",
                    "precip_mm",
                    odd,
                    f"is more than {settings.max_precip_mm:g} mm in one day",
                    "give the day's precipitation in mm; " + _LOOSEN.format(key="max_precip_mm"),
                )
            )
    dates = _col(tables, "weather", "date")
    if dates is None or period is None:
        return out
    in_period = pd.DatetimeIndex(dates.dropna().unique())
    in_period = in_period[(in_period >= period.first) & (in_period <= period.last)]
    n_days, covered = period.n_days, len(in_period)
    if covered == n_days:
        return out
    missing = pd.date_range(period.first, period.last, freq="D").difference(in_period)
    what = f"covers {covered} of the {n_days} days of {period.name()}; first missing day "
    what += f"{missing[0].date()}"
    if covered < settings.min_weather_coverage * n_days:
        fix = (
            "add the missing dates, or remove the weather table to use neutral weather on every day; to accept "
            "partial weather (missing days neutral), lower check.min_weather_coverage in params/<source>.yaml"
        )
        out.append(Finding("weather", "date", None, what, fix))
    else:
        fix = "add the missing dates; nothing to do if neutral weather on those days is acceptable"
        out.append(Finding("weather", "date", None, what, fix, warning=True))
    return out


def machine_findings(tables: dict[str, pd.DataFrame]) -> list[Finding]:
    """Warnings on machines: a site type without settings, no completed order line."""
    out: list[Finding] = []
    sites = _col(tables, "machines", "site_type")
    if sites is not None:
        named = sites.str.fullmatch(SITE_TYPE_PATTERN).fillna(False).astype(bool)
        own = sites.isin(SITE_TYPES) | ~named
        if not own.all():
            out.append(
                Finding(
                    "machines",
                    "site_type",
                    ~own.to_numpy(dtype=bool),
                    "is not one of the benchmark's site types (" + ", ".join(SITE_TYPES) + ")",
                    "nothing to do if the name is right: its demand responses (price elasticity, weather, calendar) "
                    "use the pooled settings of `unknown`",
                    warning=True,
                )
            )
    ids = _col(tables, "machines", "machine_id")
    order_ids, status = _col(tables, "orders", "machine_id"), _col(tables, "orders", "status")
    if ids is not None and order_ids is not None:
        completed = order_ids if status is None else order_ids[status.fillna(DEFAULT_STATUS) == DEFAULT_STATUS]
        idle = (~ids.isin(completed.dropna().unique()) & ids.notna()).to_numpy(dtype=bool)  # no Python set of rows
        if idle.any():
            out.append(
                Finding(
                    "machines",
                    "machine_id",
                    idle,
                    "has no completed order line (calibration leaves the machine out)",
                    "add the machine's orders, or nothing to do if it really sold nothing",
                    warning=True,
                )
            )
    return out


def plausibility_findings(tables: dict[str, pd.DataFrame], settings: CheckSettings) -> list[Finding]:
    """Every plausibility finding over the typed tables that could be read (stem -> typed frame)."""
    out = order_row_findings(tables, settings) + product_findings(tables, settings)
    period: Period | None = None
    ts = _col(tables, "orders", "ts")
    if ts is not None:
        period, found = order_period(ts, settings)
        out += found
    if period is not None:
        out += inventory_findings(tables, period, settings)
    out += weather_findings(tables, period, settings)
    out += machine_findings(tables)
    return out
