"""The raw-records contract in one place: source.yaml's model, the tables, their columns and rules.

docs/data-contract.md is the human-readable version of this module. Each table is a
`TableSpec` (file stem, required or not, columns); each column a `ColumnSpec` (kind, whether the
column and its values are required, bounds, allowed values, uniqueness, the table it refers to).
`rule_schema` turns a table's specs into a pandera schema over the *typed* table: those checks run
after type coercion and carry their own "what is wrong" (`error`) and "what to fix" (`description`).
"""

from __future__ import annotations

import enum
import re
import zoneinfo
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pydantic import BaseModel, ConfigDict, Field, field_validator

STATUSES: tuple[str, ...] = ("completed", "refunded", "failed")
DEFAULT_STATUS = "completed"
BOOL_WORDS: tuple[str, ...] = ("true", "false")
META_FILE = "source.yaml"
FORMATS: tuple[str, ...] = ("csv", "parquet")
# Site types are open: any lower-case name. The benchmark's own ones (autovend.demand.settings.SITE_TYPES)
# have demand settings; any other uses the pooled `unknown` settings (see DemandSettings).
SITE_TYPE_PATTERN = r"[a-z][a-z0-9_]*"

# ISO 3166-1 alpha-2 codes (the 249 officially assigned ones), so checks do not depend on system files.
_ISO_3166_TEXT = """
    AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT
    BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH
    ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT
    HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS
    LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI
    NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG
    SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG
    UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
"""
ISO_3166_ALPHA2: frozenset[str] = frozenset(_ISO_3166_TEXT.split())

# How to fix a bad value of each source.yaml key (shown next to pydantic's message).
META_FIXES: dict[str, str] = {
    "name": "use a short id of lower-case letters, digits and '-', e.g. my-operator-2025h1",
    "currency": "use a three-letter ISO 4217 code in upper case, e.g. CNY",
    "timezone": "use an IANA time-zone name, e.g. Asia/Shanghai",
    "country": "use an ISO 3166 alpha-2 code in upper case, e.g. CN (quote it if YAML reads it as a boolean)",
    "description": "describe the source in free text",
    "licence": "state the licence in free text, or drop the key",
}


class SourceMeta(BaseModel):
    """The contents of a source's `source.yaml`; unknown keys are ignored."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True, coerce_numbers_to_str=True)

    name: str = Field(pattern=r"^[a-z0-9-]+$")
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    timezone: str
    country: str
    description: str
    licence: str | None = None
    # what the records cannot tell: the products are made to order (brewed or mixed per sale), so there is no
    # stock to run out and nothing expires; a world made from them marks shelves and shelf lives as settings
    made_to_order: bool = False

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{value!r} is not an IANA time zone") from exc
        return value

    @field_validator("country", mode="before")
    @classmethod
    def _country_not_bool(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("YAML read this value as a boolean (NO, YES, ON, OFF...); put the code in quotes")
        return value

    @field_validator("country")
    @classmethod
    def _iso_country(cls, value: str) -> str:
        if value not in ISO_3166_ALPHA2:
            raise ValueError(f"{value!r} is not an ISO 3166 alpha-2 country code")
        return value


class Kind(enum.Enum):
    """What a column holds, which decides how its text is parsed."""

    STRING = "string"
    CHOICE = "choice"
    INTEGER = "integer"
    DECIMAL = "decimal"
    TIMESTAMP = "date or datetime"
    DATE = "date"
    BOOLEAN = "boolean"


@dataclass(frozen=True)
class ColumnSpec:
    """One contract column: kind and rules. `required` means the column must exist and no cell be blank."""

    name: str
    kind: Kind
    required: bool = True
    minimum: float | None = None
    strict: bool = False  # True: value > minimum; False: value >= minimum
    choices: tuple[str, ...] = ()
    pattern: str | None = None  # every value must match this regular expression in full
    pattern_fix: str = ""  # how to fix a value that does not match `pattern`
    unique: bool = False
    references: str | None = None  # stem of the table whose key this column must match
    rule_fix: str = ""  # how to fix a value that breaks `minimum`


@dataclass(frozen=True)
class TableSpec:
    """One contract table: its file stem, whether the source must have it, and its columns."""

    stem: str
    required: bool
    columns: tuple[ColumnSpec, ...]
    key: str | None = None  # column other tables refer to
    check_location: bool = False  # machines: location must read `site_type/detail`
    same_within: tuple[str, str] | None = None  # (group, column): every row of a group has one value of column
    column_names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "column_names", tuple(c.name for c in self.columns))

    @property
    def file_names(self) -> tuple[str, ...]:
        """The file names the table may have, e.g. ('orders.csv', 'orders.parquet')."""
        return tuple(f"{self.stem}.{fmt}" for fmt in FORMATS)

    def column(self, name: str) -> ColumnSpec:
        """The spec of column `name`."""
        return next(c for c in self.columns if c.name == name)


MACHINES = TableSpec(
    stem="machines",
    required=True,
    key="machine_id",
    check_location=True,
    columns=(
        ColumnSpec("machine_id", Kind.STRING, unique=True),
        ColumnSpec(
            "site_type",
            Kind.CHOICE,
            pattern=SITE_TYPE_PATTERN,
            pattern_fix="use a lower-case name of letters, digits and '_' that starts with a letter, e.g. worksite "
            "or hospital",
        ),
        ColumnSpec("location", Kind.STRING, required=False),
        ColumnSpec(
            "capacity",
            Kind.INTEGER,
            required=False,
            minimum=0,
            strict=True,
            rule_fix="give the number of units the machine holds (> 0), or leave the cell blank if unknown",
        ),
    ),
)
PRODUCTS = TableSpec(
    stem="products",
    required=True,
    key="sku_id",
    columns=(
        ColumnSpec("sku_id", Kind.STRING, unique=True),
        ColumnSpec("name", Kind.STRING, required=False),
        ColumnSpec("category_l1", Kind.STRING),
        ColumnSpec("category_l2", Kind.STRING),
        ColumnSpec(
            "ref_price",
            Kind.DECIMAL,
            minimum=0,
            strict=True,
            rule_fix="give the suggested retail price in the source's currency (> 0)",
        ),
        ColumnSpec(
            "unit_cost",
            Kind.DECIMAL,
            required=False,
            minimum=0,
            strict=True,
            rule_fix="give the purchase cost (> 0), or leave the cell blank if unknown",
        ),
        ColumnSpec(
            "shelf_life_days",
            Kind.INTEGER,
            required=False,
            minimum=0,
            strict=True,
            rule_fix="give the shelf life in whole days (> 0), or leave the cell blank if unknown",
        ),
    ),
)
ORDERS = TableSpec(
    stem="orders",
    required=True,
    same_within=("order_id", "machine_id"),  # an order is one transaction at one machine
    columns=(
        ColumnSpec("order_id", Kind.STRING),
        ColumnSpec("machine_id", Kind.STRING, references="machines"),
        ColumnSpec("sku_id", Kind.STRING, references="products"),
        ColumnSpec("ts", Kind.TIMESTAMP),
        ColumnSpec(
            "qty",
            Kind.INTEGER,
            minimum=1,
            rule_fix="an order line sells at least one unit: fix the quantity or drop the line",
        ),
        ColumnSpec(
            "unit_price",
            Kind.DECIMAL,
            minimum=0,
            rule_fix="give the price charged per unit (0 or more; refunds go in status, not in the price)",
        ),
        ColumnSpec("status", Kind.CHOICE, required=False, choices=STATUSES),
    ),
)
INVENTORY = TableSpec(
    stem="inventory",
    required=False,
    columns=(
        ColumnSpec("machine_id", Kind.STRING, references="machines"),
        ColumnSpec("ts", Kind.TIMESTAMP),
        ColumnSpec("sku_id", Kind.STRING, references="products"),
        ColumnSpec(
            "shelf_qty",
            Kind.INTEGER,
            minimum=0,
            rule_fix="give the units counted on the shelf (0 or more)",
        ),
    ),
)
WEATHER = TableSpec(
    stem="weather",
    required=False,
    columns=(
        ColumnSpec("date", Kind.DATE, unique=True),
        ColumnSpec("t_max_c", Kind.DECIMAL),
        ColumnSpec(
            "precip_mm",
            Kind.DECIMAL,
            minimum=0,
            rule_fix="give the day's precipitation in mm (0 or more)",
        ),
    ),
)
CALENDAR = TableSpec(
    stem="calendar",
    required=False,
    columns=(
        ColumnSpec("date", Kind.DATE, unique=True),
        ColumnSpec("is_workday", Kind.BOOLEAN),
        ColumnSpec("holiday_name", Kind.STRING, required=False),
    ),
)

TABLES: tuple[TableSpec, ...] = (MACHINES, PRODUCTS, ORDERS, INVENTORY, WEATHER, CALENDAR)
TABLES_BY_STEM: dict[str, TableSpec] = {t.stem: t for t in TABLES}
CONTRACT_FILES: tuple[str, ...] = (META_FILE, *(name for t in TABLES for name in t.file_names))

_LOCATION = re.compile(r"^([^/]+)/(.+)$")


def _bound_text(column: ColumnSpec) -> str:
    sign = ">" if column.strict else "≥"
    bound = int(column.minimum) if column.minimum is not None and float(column.minimum).is_integer() else column.minimum
    return f"{sign} {bound}"


def _location_ok(frame: pd.DataFrame) -> pd.Series:
    """True where location is blank or reads `site_type/detail` with the row's own site_type as prefix.

    All True when site_type is absent (the missing column is reported on its own).
    """
    if "site_type" not in frame.columns or "location" not in frame.columns:
        return pd.Series(True, index=frame.index)
    location = frame["location"]
    parts = location.str.extract(_LOCATION)
    return location.isna() | (parts[0] == frame["site_type"]).fillna(False).astype(bool)


def _not_duplicated(series: pd.Series) -> pd.Series:
    return ~series.duplicated(keep=False)


def _folded(series: pd.Series) -> pd.Series:
    """Ids as a reader would take them to be the same: upper/lower case and spaces around them set aside."""
    return series.astype("string").str.strip().str.casefold()


def _not_case_variant(series: pd.Series) -> pd.Series:
    """False where the id is written otherwise on another row (M1 and m1, or 'M1 '): ids compare exactly."""
    text = series.astype("string")
    pairs = pd.DataFrame({"folded": _folded(series), "text": text}).dropna().drop_duplicates()
    clash = pairs.loc[pairs["folded"].duplicated(keep=False), "folded"]
    return ~_folded(series).isin(clash.unique()).fillna(False).astype(bool)


def _reference_checks(col: ColumnSpec, ids: Collection[str]) -> list[pa.Check]:
    """The id must be one of `ids`; one written in another upper/lower case than there gets its own words."""
    target = TABLES_BY_STEM[str(col.references)].stem
    known = {str(i) for i in ids}
    folded = {i.casefold() for i in known}

    def per_value(series: pd.Series, keep: Callable[[str], bool]) -> pd.Series:
        """keep(value) for each row, computed once per distinct value (a table may repeat an id a million times)."""
        codes, uniques = pd.factorize(series)
        ok = np.array([keep(str(u)) for u in uniques], dtype=bool)
        return pd.Series(np.where(codes >= 0, ok[np.maximum(codes, 0)] if len(ok) else True, True), index=series.index)

    def found_or_case(series: pd.Series) -> pd.Series:
        return per_value(series, lambda v: v in known or v.strip().casefold() in folded)

    def not_case_only(series: pd.Series) -> pd.Series:
        return per_value(series, lambda v: v in known or v.strip().casefold() not in folded)

    return [
        pa.Check(
            found_or_case,
            name=f"{col.name}:reference",
            error=f"is not in {target}.csv",
            description=f"add the {col.name} to {target}.csv or correct the id",
        ),
        pa.Check(
            not_case_only,
            name=f"{col.name}:reference-case",
            error=f"is in {target}.csv only written otherwise: in other upper/lower case or with spaces around it "
            "(ids are compared exactly)",
            description=f"write the {col.name} exactly as {target}.csv does",
        ),
    ]


def _same_within(group: str, column: str, valid: Collection[str] | None = None) -> Callable[[pd.DataFrame], pd.Series]:
    """False on every row of a group (rows sharing `group`) that holds more than one value of `column`.

    Only values in `valid` count when it is given (a machine id that is not in machines.csv is its own error).
    """

    def check(frame: pd.DataFrame) -> pd.Series:
        if group not in frame.columns or column not in frame.columns:
            return pd.Series(True, index=frame.index)
        g, _ = pd.factorize(frame[group])
        c, _ = pd.factorize(frame[column])
        codes = pd.DataFrame({"g": g, "c": c}, index=frame.index)
        counted = (g >= 0) & (c >= 0)
        if valid is not None:
            counted &= frame[column].isin(pd.Index(list(valid), dtype="string")).fillna(False).to_numpy(dtype=bool)
        known = codes[counted]
        spread = known.groupby("g")["c"].transform("nunique")
        return (spread <= 1).reindex(frame.index, fill_value=True)

    return check


def rule_schema(table: TableSpec, keys: Mapping[str, Collection[str]] | None = None) -> pa.DataFrameSchema:
    """The pandera schema of a typed table's value rules (bounds, allowed values, uniqueness, references).

    `keys` maps a table stem to the ids it holds ('machines' -> machine ids); reference checks are
    left out for a table whose keys are unknown (because that table itself failed to load). Every
    check ignores missing values: blanks and type errors are reported when the text is coerced.
    """
    keys = keys or {}
    columns: dict[str, pa.Column] = {}
    for col in table.columns:
        checks: list[pa.Check] = []
        if col.minimum is not None:
            bound = _bound_text(col)
            make = pa.Check.gt if col.strict else pa.Check.ge
            checks.append(
                make(col.minimum, name=f"{col.name}:bound", error=f"must be {bound}", description=col.rule_fix)
            )
        if col.choices:
            allowed = ", ".join(col.choices)
            blank_note = f" (blank means {DEFAULT_STATUS})" if col.name == "status" else ""
            checks.append(
                pa.Check.isin(
                    list(col.choices),
                    name=f"{col.name}:choice",
                    error="is not an allowed value",
                    description=f"use one of: {allowed}{blank_note}",
                )
            )
        if col.pattern is not None:
            checks.append(
                pa.Check.str_matches(
                    f"^(?:{col.pattern})$",
                    name=f"{col.name}:pattern",
                    error=f"is not a valid {col.name} name",
                    description=col.pattern_fix,
                )
            )
        if col.unique:
            checks.append(
                pa.Check(
                    _not_duplicated,
                    name=f"{col.name}:unique",
                    error="appears on more than one row",
                    description=f"keep one row per {col.name}",
                )
            )
        if col.unique and col.name == table.key:  # an id: M1 and m1 would be two machines to every stage
            checks.append(
                pa.Check(
                    _not_case_variant,
                    name=f"{col.name}:case",
                    error="is written otherwise on another row: in other upper/lower case or with spaces around it "
                    f"(ids are compared exactly, so these would be two {table.stem})",
                    description=f"give each of the {table.stem} one {col.name}, written one way in every table",
                )
            )
        if col.references is not None and col.references in keys:
            checks += _reference_checks(col, keys[col.references])
        columns[col.name] = pa.Column(checks=checks, nullable=True, required=col.required)
    frame_checks: list[pa.Check] = []
    if table.same_within is not None:
        group, column = table.same_within
        frame_checks.append(
            pa.Check(
                _same_within(group, column, keys.get(table.column(column).references or "")),
                name=f"{group}:same-{column}",
                title=group,
                ignore_na=False,
                error=f"is shared by order lines of more than one {column} (an order is one transaction at one "
                "machine)",
                description=f"give each {column}'s transactions their own {group}s (e.g. prefix them with the "
                f"{column}), or correct the {column} of the lines that are wrong",
            )
        )
    if table.check_location:
        frame_checks.append(
            pa.Check(
                _location_ok,
                name="location:form",
                title="location",
                ignore_na=False,
                error="is not of the form site_type/detail with the row's site_type as prefix",
                description="write e.g. worksite/canteen for a worksite machine, or leave the cell blank",
            )
        )
    return pa.DataFrameSchema(columns, checks=frame_checks, name=table.stem)
