"""run.json, the token usage and cost, metrics.json, report.md and report.html against what the replay re-derives.

- run.json: the figures the simulator gives (world, seed, days, horizon, done, start, final cash and net assets)
  and the call counters (`tool_calls`: seq, errors, by tool) equal the replay's; privilege follows the agent's
  entry point (`check_identity`); the wall time, a clock no replay re-derives, is at least the time the tools
  took by the trajectory's own `wall_ms`.
- Token usage and cost (`check_usage`): an LLM run's counts are the sums of the `usage` of the model responses its
  transcript records (llm.jsonl, and llm.discarded.jsonl for the days a resume replayed), and its cost those counts
  at the prices run.json records, which must be the shipped price table's when run.json says they came from it.
  What the provider billed is not in the folder: it cannot be re-derived. Agents of AutoVend's own that call no
  model record none; a plugin's own report of its usage has nothing to be checked against (a note says so).
- metrics.json, report.md and report.html are regenerated from the replayed run and must be the folder's text
  (metrics.json is first read by the JSON guard: no key twice, no NaN; its values then compare to 1e-9 relative).
  The figures (PNG) are drawings of daily.csv, which is compared; they are not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autovend.evaluation.runsave import HTML_REPORT_FILE, METRICS_FILE, REPORT_FILE, RUN_FILE
from autovend.evaluation.verify.diff import Difference, first_difference, is_number, same
from autovend.evaluation.verify.folder import Line
from autovend.evaluation.verify.tables import missing
from autovend.tools.guard import MAX_TEXT_CHARS, InputError, loads

DERIVED: tuple[str, ...] = (
    "world_name",
    "world_hash",
    "seed",
    "days",
    "horizon_days",
    "done",
    "start_cash",
    "final_cash",
)
DERIVED += ("final_net_assets", "tool_calls")
OUTPUT_FILES = (METRICS_FILE, REPORT_FILE, HTML_REPORT_FILE)
LLM_LOG = "llm.jsonl"
LLM_DISCARDED = "llm.discarded.jsonl"
USAGE_KEYS = ("requests", "input_tokens", "cached_tokens", "output_tokens", "reasoning_tokens", "unreported")
LLM_ENTRY_PREFIX = "autovend.agents.llm."


def check_identity(meta: Mapping[str, Any]) -> Difference | None:
    """Privilege follows the entry point, and a shipped agent's entry point its name (never the other way)."""
    from autovend.agents.identity import PRIVILEGED_ENTRY_POINTS, registered

    entry = str(meta["agent_entry_point"])
    marked = meta.get("privileged", False) is True
    should = entry in PRIVILEGED_ENTRY_POINTS
    if marked != should:
        why = (
            f"the run is not marked privileged, but its agent is {entry}, the privileged oracle (privilege follows "
            "the code, never the name)"
            if should
            else f"the run is marked privileged, but its agent is {entry}: only the oracle's own class is privileged"
        )
        return Difference(RUN_FILE, "privileged", marked, should, why=why)
    names = {ep: str(getattr(cls, "name", "")) for cls, ep in registered().items()}
    if entry in names and meta["agent"] != names[entry]:
        why = f"the agent at {entry} is named {names[entry]!r}, not {meta['agent']!r}"
        return Difference(RUN_FILE, "agent", meta["agent"], names[entry], why=why)
    return None


def compare_run_json(meta: Mapping[str, Any], again: Mapping[str, Any], lines: list[Line]) -> Difference | None:
    """run.json's derived figures and counters against the replay's; the facts no replay gives, for consistency."""
    for key in DERIVED:
        found = first_difference(meta.get(key), again.get(key), key)
        if found is not None:
            return Difference(RUN_FILE, found[0], found[1], found[2])
    requested = meta.get("days_requested")
    if requested is not None and meta["days"] > requested:
        return Difference(RUN_FILE, "days", meta["days"], requested, why="more days settled than were requested")
    tools_s = sum(float(line.rec["wall_ms"]) for line in lines) / 1000.0
    if float(meta["wall_time_s"]) + 0.002 < tools_s:
        why = (
            f"recorded {meta['wall_time_s']} s, less than the {tools_s:.3f} s the tools alone took by the "
            "trajectory's wall_ms (the run's time includes them)"
        )
        return Difference(RUN_FILE, "wall_time_s", meta["wall_time_s"], round(tools_s, 3), why=why)
    return None


# ------------------------------------------------------------------------------------------------ tokens and cost


def _responses(path: Path) -> tuple[dict[str, int], Difference | None]:
    """The summed `usage` of the model responses in a transcript file."""
    total = dict.fromkeys(USAGE_KEYS, 0)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return total, Difference(path.name, "file", None, None, why=f"cannot be read ({exc})")
    for n, line in enumerate(text.splitlines(), 1):
        try:
            rec = json.loads(line)
        except ValueError as exc:
            return total, Difference(path.name, "JSON", None, None, line=n, why=f"not valid JSON ({exc})")
        if not isinstance(rec, dict):
            return total, Difference(path.name, "JSON", None, None, line=n, why="not a JSON object")
        if rec.get("kind") != "response":
            continue
        usage = rec.get("usage")
        if not isinstance(usage, dict) or not all(
            isinstance(usage.get(k, 0), int) and not isinstance(usage.get(k, 0), bool) and usage.get(k, 0) >= 0
            for k in USAGE_KEYS
        ):
            return total, Difference(path.name, "usage", usage, None, line=n, why="not an object of token counts")
        for k in USAGE_KEYS:
            total[k] += int(usage.get(k, 0))
    return total, None


def check_usage(run_dir: Path, meta: Mapping[str, Any], notes: list[str]) -> Difference | None:
    """Token counts and API cost against the transcript (module docstring)."""
    usage, cost = meta["token_usage"], meta["api_cost_usd"]
    entry = str(meta["agent_entry_point"])
    if entry.startswith(LLM_ENTRY_PREFIX) or (run_dir / LLM_LOG).exists():
        return _llm_usage(run_dir, usage, cost, notes)
    if entry.startswith("autovend."):
        if usage != {}:
            return Difference(RUN_FILE, "token_usage", usage, {}, why=f"{entry} calls no model: it records none")
        if cost is not None:
            return Difference(RUN_FILE, "api_cost_usd", cost, None, why=f"{entry} calls no model: it costs nothing")
        return None
    if usage or cost is not None:
        notes.append("token usage and cost as the plugin reported them: nothing in the folder to re-derive them from")
    return None


def _llm_usage(run_dir: Path, usage: dict[str, Any], cost: Any, notes: list[str]) -> Difference | None:
    if not (run_dir / LLM_LOG).is_file():
        return missing(LLM_LOG)
    kept, diff = _responses(run_dir / LLM_LOG)
    if diff is not None:
        return diff
    dropped = dict.fromkeys(USAGE_KEYS, 0)
    if (run_dir / LLM_DISCARDED).is_file():
        dropped, diff = _responses(run_dir / LLM_DISCARDED)
        if diff is not None:
            return diff
    discarded = usage.get("discarded")
    for key in USAGE_KEYS:
        want = kept[key] + dropped[key]
        if not same(usage.get(key), want):
            why = f"recorded {usage.get(key)}, the model responses in {LLM_LOG} (and {LLM_DISCARDED}) sum to {want}"
            return Difference(RUN_FILE, f"token_usage.{key}", usage.get(key), want, why=why)
        if not isinstance(discarded, dict) or not same(discarded.get(key), dropped[key]):
            got = discarded.get(key) if isinstance(discarded, dict) else discarded
            return Difference(RUN_FILE, f"token_usage.discarded.{key}", got, dropped[key])
    prices = usage.get("price_usd_per_million")
    if not isinstance(prices, dict) or not all(is_number(prices.get(k)) for k in ("input", "cached_input", "output")):
        return Difference(RUN_FILE, "token_usage.price_usd_per_million", prices, None, why="not three prices")
    diff = _shipped_prices(usage, prices, notes)
    if diff is not None:
        return diff
    from autovend.agents.llm.pricing import Price

    price = Price(float(prices["input"]), float(prices["cached_input"]), float(prices["output"]), "recorded")
    total = {k: kept[k] + dropped[k] for k in USAGE_KEYS}
    want_cost = round(price.cost(total["input_tokens"], total["cached_tokens"], total["output_tokens"]), 6)
    if not same(cost, want_cost) and not (is_number(cost) and abs(float(cost) - want_cost) <= 5e-7):
        why = f"recorded {cost}, the tokens at the recorded prices cost {want_cost} USD"
        return Difference(RUN_FILE, "api_cost_usd", cost, want_cost, why=why)
    notes.append(f"token usage and cost: the sums of {kept['requests']} model responses in {LLM_LOG} (what the "
                 "provider billed is not in the folder)")  # fmt: skip
    return None


def _shipped_prices(usage: dict[str, Any], prices: dict[str, Any], notes: list[str]) -> Difference | None:
    """Prices said to come from the shipped table (its date) must be its entry for the model."""
    from autovend.agents.llm.pricing import load_price_table
    from autovend.errors import ConfigError

    table = load_price_table()
    if usage.get("prices_as_of") != table.as_of or not isinstance(usage.get("model"), str):
        notes.append(f"prices of another table than the shipped one (as of {usage.get('prices_as_of')}): not checked")
        return None
    try:
        price = table.price(usage["model"])
    except ConfigError:
        return None
    want = {"input": price.input, "cached_input": price.cached_input, "output": price.output}
    found = first_difference(prices, want, "token_usage.price_usd_per_million")
    if found is not None or usage.get("price_entry") != price.entry:
        field, got, exp = found or ("token_usage.price_entry", usage.get("price_entry"), price.entry)
        why = f"recorded {got}, the shipped price table (as of {table.as_of}) has {exp} for {usage['model']}"
        return Difference(RUN_FILE, field, got, exp, why=why)
    return None


# ------------------------------------------------------------------------------------------------ reports


def compare_outputs(run_dir: Path, texts: dict[str, str], required: bool, notes: list[str]) -> Difference | None:
    """metrics.json, report.md and report.html against the regenerated texts (module docstring)."""
    for name in OUTPUT_FILES:
        path = run_dir / name
        if not path.is_file():
            if required:
                return missing(name)
            continue
        data = path.read_bytes()
        if name == METRICS_FILE:
            diff = _metrics(data, texts[name], notes)
        else:
            diff = _text(name, data, texts[name])
        if diff is not None:
            return diff
    return None


def _metrics(data: bytes, replayed: str, notes: list[str]) -> Difference | None:
    try:
        recorded = loads(data, "the text", max_chars=len(data) + 1, max_text_chars=max(len(data), MAX_TEXT_CHARS))
    except InputError as exc:
        return Difference(METRICS_FILE, "JSON", None, None, why=str(exc))
    if not isinstance(recorded, dict):
        return Difference(METRICS_FILE, "JSON", None, None, why=f"a JSON {type(recorded).__name__}, not an object")
    text = data.decode("utf-8")
    if text == replayed:
        return None
    found = first_difference(recorded, json.loads(replayed))
    if found is not None:
        return Difference(METRICS_FILE, found[0], found[1], found[2])
    if json.dumps(recorded, indent=2, ensure_ascii=False) + "\n" != text:
        why = "the values are those of the replay, but the file is not written as AutoVend writes it"
        return Difference(METRICS_FILE, "text", None, None, why=why)
    notes.append(f"{METRICS_FILE}: equal to 1e-9 relative (not to the last digit)")
    return None


def _text(name: str, data: bytes, replayed: str) -> Difference | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Difference(name, "text", None, None, why=f"not UTF-8 text ({exc})")
    if text == replayed:
        return None
    a, b = text.splitlines(), replayed.splitlines()
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<end of file>"
        y = b[i] if i < len(b) else "<end of file>"
        if x != y:
            return Difference(name, "text", x, y, line=i + 1)
    return Difference(name, "text", None, None, why="differs from the regenerated report in its line endings")
