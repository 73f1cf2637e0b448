"""API prices per model (`prices.yaml` beside this module, format documented there) and the cost of recorded usage.

table = load_price_table()                      # the prices.yaml shipped with AutoVend
price = table.price("gpt-4.1-mini")             # Price(input=0.4, cached_input=0.1, output=1.6, ...)
usd = price.cost(input_tokens=10_000, cached_tokens=6_000, output_tokens=800)
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autovend.config import read_yaml_value
from autovend.errors import ConfigError

DEFAULT_PRICES = Path(__file__).resolve().with_name("prices.yaml")  # package data: installed with AutoVend
DEFAULT_ENTRY = "default"


@dataclass(frozen=True)
class Price:
    """USD per `unit_tokens` tokens of one model; `entry` is the table key that matched."""

    input: float
    cached_input: float
    output: float
    entry: str
    unit_tokens: int = 1_000_000

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """USD for `input_tokens` prompt tokens (of which `cached_tokens` came from the cache) and output tokens."""
        cached = min(max(cached_tokens, 0), max(input_tokens, 0))
        fresh = max(input_tokens, 0) - cached
        usd = fresh * self.input + cached * self.cached_input + max(output_tokens, 0) * self.output
        return usd / self.unit_tokens


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name or glob (see `autovend/agents/llm/prices.yaml`); `as_of` dates the prices."""

    models: dict[str, Price]
    as_of: str | None = None
    source: str | None = None

    def price(self, model: str) -> Price:
        """The price of `model`: exact name, longest matching glob, name after the last '/', else 'default'."""
        for name in (model, model.rsplit("/", 1)[-1]):
            found = self._match(name.lower())
            if found is not None:
                return found
        if DEFAULT_ENTRY in self.models:
            return self.models[DEFAULT_ENTRY]
        raise ConfigError(
            f"model {model!r} has no price in {self.source or 'the price table'} and there is no "
            f"'{DEFAULT_ENTRY}' entry; add one of them (USD per million input, cached_input, output tokens)"
        )

    def _match(self, name: str) -> Price | None:
        keys = {k.lower(): k for k in self.models if k != DEFAULT_ENTRY}
        if name in keys:
            return self.models[keys[name]]
        globs = [k for k in keys if any(c in k for c in "*?[") and fnmatch.fnmatchcase(name, k)]
        if globs:
            return self.models[keys[max(globs, key=len)]]
        return None


def _price(entry: str, raw: Any, unit: int, where: str) -> Price:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: models.{entry} must be a mapping with input, output (and cached_input)")
    unknown = set(raw) - {"input", "cached_input", "output"}
    if unknown or "input" not in raw or "output" not in raw:
        raise ConfigError(
            f"{where}: models.{entry} needs input and output (optional cached_input), USD per {unit:,} tokens; "
            f"got keys {sorted(raw)}"
        )
    try:
        values = {k: float(v) for k, v in raw.items()}
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: models.{entry} prices must be numbers ({exc})") from None
    if any(v < 0 for v in values.values()):
        raise ConfigError(f"{where}: models.{entry} has a negative price")
    return Price(
        input=values["input"],
        cached_input=values.get("cached_input", values["input"]),
        output=values["output"],
        entry=entry,
        unit_tokens=unit,
    )


def parse_price_table(data: Any, where: str = "price table") -> PriceTable:
    """A `PriceTable` from the parsed YAML mapping (see `autovend/agents/llm/prices.yaml` for the format)."""
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ConfigError(f"{where} must be a mapping with a 'models' mapping (see autovend/agents/llm/prices.yaml)")
    if str(data.get("currency", "USD")).upper() != "USD":
        raise ConfigError(f"{where}: prices must be in USD (currency: USD), got {data.get('currency')!r}")
    unit = data.get("unit_tokens", 1_000_000)
    if not isinstance(unit, int) or unit <= 0:
        raise ConfigError(f"{where}: unit_tokens must be a positive integer, got {unit!r}")
    models = {str(k): _price(str(k), v, unit, where) for k, v in data["models"].items()}
    as_of = data.get("as_of")
    return PriceTable(models=models, as_of=None if as_of is None else str(as_of), source=where)


def load_price_table(path: str | Path | None = None) -> PriceTable:
    """Read a price table (default: `DEFAULT_PRICES`, the prices.yaml shipped with AutoVend)."""
    path = Path(path) if path is not None else DEFAULT_PRICES
    data = read_yaml_value(path, "the price table")
    return parse_price_table(data, where=str(path))
