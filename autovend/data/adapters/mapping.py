"""The typed mapping of a one-table export onto the raw-records contract, and its loader.

A mapping is a YAML file (documented field by field in docs/data-contract.md, "Adapting a one-table
export") that says how to read the export (`file`, `money`), which columns give the order lines
(`orders`), how machines and products are described (`machines`, `products`), which rows to leave out on
purpose (`drop_rows`) and what to do with rows that cannot be read (`bad_rows`). A plain string always
names a column of the export; a constant is written `{value: ...}`. Value maps match the export's cells
after trimming blanks, ignoring case. `load_mapping` refuses a bad mapping with a ConfigError naming the
file, the key and the fix.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from autovend.config import read_yaml_value
from autovend.data.contract import ORDERS, SITE_TYPE_PATTERN, STATUSES, SourceMeta
from autovend.errors import ConfigError

#: Words of `otherwise` that are actions, not values: stop with an error, leave the row out, write the cell as is.
REFUSE: Final = "refuse"
DROP: Final = "drop"
KEEP: Final = "keep"
ACTIONS: tuple[str, ...] = (REFUSE, DROP, KEEP)
DOC = "docs/data-contract.md, 'Adapting a one-table export'"
_TIME_DIRECTIVES = ("%H", "%I", "%M", "%S", "%p", "%X", "%c", "%T", "%R", "%f")
_PROBE = datetime(2001, 2, 3, 16, 5, 6)  # every field distinct, afternoon: a format that loses one cannot round-trip


def _column_shorthand(value: object) -> object:
    """A bare string names a column: 'Status' -> {'column': 'Status'}."""
    return {"column": value} if isinstance(value, str) else value


def _check_targets(key: str, mapped: Mapped, allowed: tuple[str, ...] | None, what: str) -> None:
    """Refuse a constant, map target or `otherwise` value the contract would refuse (None: site type names)."""
    for target in mapped.targets():
        ok = target in allowed if allowed is not None else re.fullmatch(SITE_TYPE_PATTERN, target) is not None
        if not ok:
            raise ValueError(f"{key}: {target!r} cannot be written; use {what}")


def _no_drop(section: str, **fields: Mapped | None) -> None:
    """Refuse `drop` in a machine or product field: it leaves rows out, which only order-line fields may do."""
    for name, mapped in fields.items():
        if mapped is not None and (mapped.policy == DROP or DROP in mapped.values.values()):
            raise ValueError(f"{section}.{name}: drop is for order-line fields; use refuse or a value")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", coerce_numbers_to_str=True)


class ColumnOrValue(_Model):
    """A column of the export (`column`), or one constant for every row (`value`)."""

    column: str | None = None
    value: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        return _column_shorthand(value)

    @model_validator(mode="after")
    def _one_source(self) -> ColumnOrValue:
        if (self.column is None) == (self.value is None):
            raise ValueError("give either `column` (a column of the export) or `value` (a constant), not both")
        return self

    def columns(self) -> tuple[str, ...]:
        """The export columns it reads."""
        return () if self.column is None else (self.column,)


class Mapped(ColumnOrValue):
    """A text value from a column or a constant, optionally recoded by a value map.

    `values` maps cells (trimmed, case ignored; '' is the blank cell) to what is written. `otherwise` says
    what happens to a cell not in `values`: a value to write, `keep` (write the cell as is), `refuse` (the
    default when `values` is given), or `drop` (order-line fields only: leave the row out).
    """

    values: dict[str, str] = Field(default_factory=dict)
    otherwise: str | None = None

    @field_validator("otherwise", mode="before")
    @classmethod
    def _otherwise_value(cls, v: object) -> object:
        """`otherwise: {value: X}` writes X, as `otherwise: X` and as a field's own `{value: X}` do."""
        if not isinstance(v, dict):
            return v
        if set(v) != {"value"} or not isinstance(v["value"], str | int | float) or isinstance(v["value"], bool):
            raise ValueError(
                "`otherwise` is an action (refuse, drop or keep) or a value to write, given as text or as "
                f"{{value: TEXT}}; got {v!r}"
            )
        text = str(v["value"])
        if text in ACTIONS:
            raise ValueError(
                f"`otherwise: {{value: {text}}}` would write {text!r}, a word `otherwise` reads as its action; "
                f"write `otherwise: {text}` for the action"
            )
        return text

    @field_validator("values", mode="before")
    @classmethod
    def _no_yaml_booleans(cls, values: object) -> object:
        if isinstance(values, dict):
            for key, target in values.items():
                if isinstance(key, bool) or isinstance(target, bool):
                    word = key if isinstance(key, bool) else target
                    raise ValueError(
                        f"YAML read a cell or value as the boolean {word} (from Yes, No, On, Off, ...): quote it, "
                        "e.g. 'Yes': completed"
                    )
        return values

    @model_validator(mode="after")
    def _map_needs_column(self) -> Mapped:
        if self.column is None and (self.values or self.otherwise is not None):
            raise ValueError("`values` and `otherwise` recode a column: give `column`, or drop them")
        folded: dict[str, str] = {}
        for key, target in self.values.items():
            if target in (REFUSE, KEEP):
                raise ValueError(f"`values` maps {key!r} to {target!r}, which only `otherwise` can say")
            other = folded.setdefault(key.strip().casefold(), target)
            if other != target:
                raise ValueError(
                    f"`values` maps {key!r} twice (case and blanks are ignored), to {other!r} and {target!r}"
                )
        return self

    @property
    def policy(self) -> str:
        """What happens to a cell not in `values`: an action of ACTIONS or a value to write."""
        if self.otherwise is not None:
            return self.otherwise
        return REFUSE if self.values else KEEP

    def targets(self) -> tuple[str, ...]:
        """Every value the field can write on purpose (constant, map targets, a literal `otherwise`)."""
        out = [self.value] if self.value is not None else []
        out += [t for t in self.values.values() if t not in ACTIONS]
        if self.policy not in ACTIONS:
            out.append(self.policy)
        return tuple(out)


class Sku(_Model):
    """The column that identifies a product, and whether sku ids are that cell or made from it."""

    column: str
    slug_prefix: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]*$")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        return _column_shorthand(value)


class OrderId(_Model):
    """How order lines are grouped into transactions: one column, several joined with '|', or one per row."""

    column: str | None = None
    columns: tuple[str, ...] = ()
    per_row: bool = False

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: object) -> object:
        return _column_shorthand(value)

    @model_validator(mode="after")
    def _one_way(self) -> OrderId:
        ways = (self.column is not None) + bool(self.columns) + self.per_row
        if ways != 1:
            raise ValueError("give one of `column`, `columns` (a list) or `per_row: true`")
        return self

    def sources(self) -> tuple[str, ...]:
        """The export columns it reads."""
        return (self.column,) if self.column is not None else self.columns


class Timestamp(_Model):
    """The column of the order time and the strptime formats it is written in, tried in order."""

    column: str
    formats: tuple[str, ...] = Field(min_length=1)

    @field_validator("formats")
    @classmethod
    def _usable(cls, formats: tuple[str, ...]) -> tuple[str, ...]:
        for fmt in formats:
            if "%z" in fmt or "%Z" in fmt:
                raise ValueError(f"format {fmt!r} reads a time zone; give local times of source.timezone")
            try:
                back = datetime.strptime(_PROBE.strftime(fmt), fmt)
            except ValueError as exc:
                raise ValueError(f"format {fmt!r} is not a strptime format: {exc}") from exc
            if back.date() != _PROBE.date():
                raise ValueError(f"format {fmt!r} does not give a full date: it needs a year, month and day (%d.%m.%Y)")
            if has_time(fmt) and back.hour != _PROBE.hour:
                raise ValueError(f"format {fmt!r} does not give the hour: use %H, or %I with %p")
        if len({has_time(fmt) for fmt in formats}) > 1:
            raise ValueError("mixes formats with and without a time of day; a source holds one form: list one kind")
        return formats

    @property
    def with_time(self) -> bool:
        """True when the formats carry a time of day."""
        return has_time(self.formats[0])


def has_time(fmt: str) -> bool:
    """True when a strptime format reads a time of day."""
    return any(d in fmt for d in _TIME_DIRECTIVES)


class FileFormat(_Model):
    """How the export file is read."""

    encoding: str = "utf-8"
    delimiter: str = Field(default=",", min_length=1, max_length=1)
    max_text_mb: int = Field(default=1024, ge=1, le=1_000_000)  # text read at most, after decompression

    @field_validator("delimiter")
    @classmethod
    def _plain_delimiter(cls, value: str) -> str:
        if value in ('"', "\r", "\n") or value.isalnum():
            raise ValueError(f"delimiter {value!r} cannot separate cells; use ',', ';', a tab or '|'")
        return value


class Money(_Model):
    """How amounts (prices, costs) and quantities are written in the export."""

    decimal: Literal[".", ","] = "."
    thousands: str = ""
    currency_symbols: tuple[str, ...] = ()
    decimals: int = Field(default=2, ge=0, le=4)

    @model_validator(mode="after")
    def _distinct(self) -> Money:
        if self.thousands and (self.thousands == self.decimal or re.search(r"[0-9+-]", self.thousands)):
            raise ValueError(
                f"thousands {self.thousands!r} must differ from decimal {self.decimal!r} and hold no digit"
            )
        if any(not s.strip() or re.search(r"[0-9.,+-]", s) for s in self.currency_symbols):
            raise ValueError("currency_symbols must be non-blank and hold no digit, sign, '.' or ','")
        return self


class Orders(_Model):
    """Where each contract column of orders.csv comes from; `extra` adds columns after them."""

    order_id: OrderId
    machine_id: ColumnOrValue
    sku_id: Sku
    ts: Timestamp
    qty: ColumnOrValue
    unit_price: str
    status: Mapped | None = None
    extra: dict[str, Mapped] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _targets(self) -> Orders:
        if self.qty.value is not None and not re.fullmatch(r"[1-9][0-9]*", self.qty.value):
            raise ValueError(f"orders.qty.value: {self.qty.value!r} is not a whole number >= 1")
        if self.machine_id.value is not None and not self.machine_id.value.strip():
            raise ValueError("orders.machine_id.value: a machine id cannot be blank")
        if self.status is not None:
            if self.status.value is not None and self.status.value not in STATUSES:
                raise ValueError(f"orders.status.value: {self.status.value!r} is not one of {', '.join(STATUSES)}")
            _check_targets("orders.status", self.status, (*STATUSES, DROP), f"one of {', '.join(STATUSES)} or drop")
        for name in self.extra:
            if not re.fullmatch(SITE_TYPE_PATTERN, name) or name in ORDERS.column_names:
                raise ValueError(
                    f"orders.extra: {name!r} must be a lower-case name ([a-z][a-z0-9_]*) other than the contract's "
                    "columns"
                )
        return self


class Machines(_Model):
    """How machines.csv is filled: one row per machine id, attributes from that machine's rows."""

    site_type: Mapped = Field(default_factory=lambda: Mapped(value="unknown"))
    location: str | None = None
    capacity: ColumnOrValue | None = None
    name: Mapped | None = None

    @model_validator(mode="after")
    def _targets(self) -> Machines:
        capacity = self.capacity.value if self.capacity is not None else None
        if capacity is not None and not re.fullmatch(r"[1-9][0-9]*", capacity):
            raise ValueError(f"machines.capacity.value: {capacity!r} is not a whole number >= 1")
        _check_targets("machines.site_type", self.site_type, None, "a lower-case name ([a-z][a-z0-9_]*)")
        _no_drop("machines", site_type=self.site_type, name=self.name)
        return self


class Products(_Model):
    """How products.csv is filled: one row per product, attributes from that product's rows."""

    name: Mapped | None = None
    category_l1: Mapped
    category_l2: Mapped
    ref_price: str | None = None
    unit_cost: str | None = None

    @model_validator(mode="after")
    def _targets(self) -> Products:
        _no_drop("products", name=self.name, category_l1=self.category_l1, category_l2=self.category_l2)
        for field in ("category_l1", "category_l2"):
            if any(not t.strip() for t in getattr(self, field).targets()):
                raise ValueError(f"products.{field}: a category cannot be blank; write e.g. unknown")
        return self


class DropRule(_Model):
    """Rows to leave out on purpose: those whose `column` holds one of `values` (trimmed, case ignored)."""

    column: str
    values: tuple[str, ...] = Field(min_length=1)


class TableMapping(_Model):
    """A whole mapping file: the source's metadata, how to read the export, and where each column comes from."""

    source: SourceMeta
    file: FileFormat = Field(default_factory=FileFormat)
    money: Money = Field(default_factory=Money)
    orders: Orders
    machines: Machines = Field(default_factory=Machines)
    products: Products
    drop_rows: tuple[DropRule, ...] = ()
    bad_rows: Literal["refuse", "drop"] = REFUSE

    def columns(self) -> dict[str, str]:
        """Every export column the mapping reads -> the first mapping key that names it."""
        o, m, p = self.orders, self.machines, self.products
        keys: list[tuple[str, tuple[str, ...]]] = [
            ("orders.order_id", o.order_id.sources()),
            ("orders.machine_id", o.machine_id.columns()),
            ("orders.sku_id", (o.sku_id.column,)),
            ("orders.ts", (o.ts.column,)),
            ("orders.qty", o.qty.columns()),
            ("orders.unit_price", (o.unit_price,)),
            ("orders.status", o.status.columns() if o.status else ()),
            *((f"orders.extra.{k}", v.columns()) for k, v in o.extra.items()),
            ("machines.site_type", m.site_type.columns()),
            ("machines.location", (m.location,) if m.location else ()),
            ("machines.capacity", m.capacity.columns() if m.capacity else ()),
            ("machines.name", m.name.columns() if m.name else ()),
            ("products.name", p.name.columns() if p.name else ()),
            ("products.category_l1", p.category_l1.columns()),
            ("products.category_l2", p.category_l2.columns()),
            ("products.ref_price", (p.ref_price,) if p.ref_price else ()),
            ("products.unit_cost", (p.unit_cost,) if p.unit_cost else ()),
            *((f"drop_rows[{i}]", (r.column,)) for i, r in enumerate(self.drop_rows)),
        ]
        out: dict[str, str] = {}
        for key, cols in keys:
            for col in cols:
                out.setdefault(col, key)
        return out


def _describe(exc: ValidationError) -> str:
    """One line per problem: the key (dotted path) and pydantic's message."""
    lines = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or "(top level)"
        msg = str(err["msg"]).removeprefix("Value error, ")
        lines.append(f"  key {key}: {msg}")
    return "\n".join(lines)


def parse_mapping(raw: object, origin: str) -> TableMapping:
    """Validate a mapping already read from YAML; `origin` names it in errors."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin}: a mapping file holds a YAML mapping with source, orders and products; see {DOC}")
    try:
        return TableMapping.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(
            f"{origin}: invalid mapping:\n{_describe(exc)}\nFix: correct these keys (see {DOC}); quote values YAML "
            "reads as numbers or booleans, e.g. 'Yes', 'NO', '01'."
        ) from exc


def load_mapping(path: str | Path) -> TableMapping:
    """Read and validate the mapping file at `path`; ConfigError naming the file, the key and the fix."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"mapping file not found: {path}; write one as {DOC} shows")
    return parse_mapping(read_yaml_value(path, "mapping file"), str(path))
