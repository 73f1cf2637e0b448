"""A scripted policy with five knobs that acts only through JSON tool actions (`KnobAgent`), for vector envs.

It is what a learner tunes in `examples/vector_es.py` and what `benchmarks/bench_vector.py` runs:
one agent per sub-environment of `gymnasium.make_vec("AutoVend-v0", ...)`, fed each observation and
answering with the next action text. The knobs (`Knobs`):

- price_mult: every carried product is priced at this multiple of its reference price (within the band);
- facing: units of each product a visit fills a shelf up to;
- n_skus: products carried at every machine (machine i starts with its own slice of the catalog, which
  spans the subcategories, highest margins first; each visit swaps the product of least gross profit a
  day, once judged, for one not tried there, proven elsewhere first);
- cover_days: days of the network's recent sales kept in the warehouse and in transit;
- visit_every: working days between two visits of a machine (the machines take turns).

A visit reads the machine (`get_device_detail`), takes off the shelf (and discards) its units that are
expired or expire within 7 days, and fills the carried products up to the facing; any expired unit a
restock put on a shelf goes back and is discarded. Orders go out every other day for the products
whose stock position (ordered minus put on shelves) is below half their level.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

KNOB_NAMES = ("price_mult", "facing", "n_skus", "cover_days", "visit_every")
KNOB_LOW = np.array([1.0, 2.0, 6.0, 2.0, 1.0])
KNOB_HIGH = np.array([2.0, 10.0, 40.0, 21.0, 7.0])
BATCH = 100  # items per call (the tools' limit)
END_DAY = '{"end_day": true}'
DECAY = 0.7  # a product's rate at a machine falls at most to this share of the last one at each visit
JUDGE_DAYS = 10  # days a product is carried at a machine before it can be dropped there
SWAPS = 2  # products a visit may swap
SWAP_RATIO = 1.5  # a product proven elsewhere replaces the weakest when it sells this many times more
DROP_SHARE = 0.34  # a product selling under this share of the machine's median is swapped out

Plan = Generator[str, dict[str, Any], None]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Knobs:
    """The five settings of `KnobAgent` (see the module docstring).

    Checked when made: price_mult a finite number > 0, cover_days a finite number >= 0, facing, n_skus
    and visit_every whole numbers >= 1 (a visit cycle of 0 days has no meaning); anything else is a
    ValueError naming the knob, before an episode runs.
    """

    price_mult: float = 1.0
    facing: int = 5
    n_skus: int = 20
    cover_days: float = 8.0
    visit_every: int = 3

    def __post_init__(self) -> None:
        problems = []
        for name in ("facing", "n_skus", "visit_every"):
            v = getattr(self, name)
            if not (_is_number(v) and isinstance(v, (int, np.integer)) and v >= 1):
                problems.append(f"{name} must be a whole number >= 1, got {v!r}")
        for name, low, strict in (("price_mult", 0.0, True), ("cover_days", 0.0, False)):
            v = getattr(self, name)
            if not (_is_number(v) and np.isfinite(v) and (v > low if strict else v >= low)):
                problems.append(f"{name} must be a finite number {'>' if strict else '>='} {low:g}, got {v!r}")
        if problems:
            raise ValueError("invalid Knobs: " + "; ".join(problems) + " (see autovend.agents.knobs for each knob)")

    @classmethod
    def from_vector(cls, theta: npt.ArrayLike) -> Knobs:
        """Knobs from a vector in [0, 1]^5 (each knob mapped onto its range, whole numbers rounded).

        A vector of another length, or with a NaN or infinite entry, is a ValueError saying which.
        """
        try:
            x = np.asarray(theta, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"knob vector must be {len(KNOB_NAMES)} numbers in [0, 1], got {theta!r}") from None
        if x.shape != (len(KNOB_NAMES),):
            raise ValueError(
                f"knob vector must be {len(KNOB_NAMES)} numbers in [0, 1] ({', '.join(KNOB_NAMES)}), "
                f"got shape {x.shape}"
            )
        bad = [f"{KNOB_NAMES[i]} ({x[i]})" for i in np.flatnonzero(~np.isfinite(x))]
        if bad:
            raise ValueError(f"knob vector holds non-finite entries: {', '.join(bad)}; give numbers in [0, 1]")
        x = np.clip(x, 0.0, 1.0)
        v = KNOB_LOW + x * (KNOB_HIGH - KNOB_LOW)
        return cls(float(v[0]), int(round(v[1])), int(round(v[2])), float(v[3]), int(round(v[4])))


def _call(tool: str, **args: Any) -> str:
    return json.dumps({"tool": tool, "args": args}, separators=(",", ":"))


def _all_pages(tool: str) -> Generator[str, dict[str, Any], tuple[list[str], list[list[Any]]]]:
    """The columns and every row of a paged tool (pages of 50, asked for in order): `yield from` it in a plan."""
    page, pages, cols, rows = 1, 1, [], []
    while page <= pages:
        got = yield _call(tool, page=page, page_size=50)
        content = _content(got, tool, "pages", "columns", "rows")
        pages, cols = int(content["pages"]), content["columns"]
        rows += content["rows"]
        page += 1
    return cols, rows


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _read(observation: Any, method: str) -> dict[str, Any]:
    """The JSON object of an env observation's text, or a ValueError naming what the observation lacks."""
    text = observation.get("text") if isinstance(observation, dict) else None
    if not isinstance(text, str):
        raise ValueError(
            f"KnobAgent.{method} takes one sub-environment's observation, a dict with 'kind', 'day' and 'text' "
            f"(the env's JSON), got {_shown(observation)}"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"KnobAgent.{method}: the observation's text is not JSON ({exc}): {_shown(text)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"KnobAgent.{method}: the observation's text is no JSON object: {_shown(text)}")
    return data


def _content(got: dict[str, Any], tool: str, *keys: str) -> dict[str, Any]:
    """A tool result's content holding `keys`, or a RuntimeError with the tool and the error the env gave."""
    content = got.get("content")
    if not isinstance(content, dict) or any(k not in content for k in keys):
        why = got.get("error") or f"no {', '.join(keys)} in {_shown(got)}"
        raise RuntimeError(f"KnobAgent: {tool} did not answer as expected: {why}")
    return content


def _chunks(items: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [list(items[i : i + BATCH]) for i in range(0, len(items), BATCH)]


class KnobAgent:
    """One sub-environment's agent: `act(observation)` -> the next action text (see the module docstring)."""

    def __init__(self, knobs: Knobs) -> None:
        if not isinstance(knobs, Knobs):
            raise TypeError(
                f"KnobAgent takes a Knobs, got a {type(knobs).__name__}; use Knobs(...) or Knobs.from_vector"
            )
        self.knobs = knobs
        self._plan: Plan | None = None

    def start(self, observation: dict[str, Any]) -> str:
        """The first action of an episode, given its day-1 report (a ValueError saying what is wrong with another)."""
        report = _read(observation, "start")
        inner = report.get("report")
        devices = inner.get("devices") if isinstance(inner, dict) else None
        rows = devices.get("rows") if isinstance(devices, dict) else None
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows):
            raise ValueError(
                "KnobAgent.start takes the day-1 report an env's reset gives (kind 'report', its text the "
                f"observation JSON with report.devices.rows), got {_shown(observation)}"
            )
        if not isinstance(report.get("is_workday"), bool):
            raise ValueError(f"KnobAgent.start: the report has no is_workday flag, got {_shown(observation)}")
        self._plan = self._episode(report)
        return next(self._plan)

    def act(self, observation: dict[str, Any]) -> str:
        """The next action, given the observation the last one brought."""
        if self._plan is None:
            raise RuntimeError("start(observation) begins an episode")
        try:
            return self._plan.send(_read(observation, "act"))
        except StopIteration:
            return END_DAY

    def _episode(self, report: dict[str, Any]) -> Plan:
        """The whole episode as a generator: yields actions, receives each result's (or report's) JSON."""
        k = self.knobs
        devices = [row[0] for row in report["report"]["devices"]["rows"]]
        ref: dict[str, float] = {}
        ranked: dict[str, list[tuple[float, str]]] = {}  # subcategory -> (-margin, product)
        cols, rows = yield from _all_pages("get_catalog")  # the whole catalog
        il2, ip, ic = cols.index("category_l2"), cols.index("ref_price"), cols.index("unit_cost")
        for r in rows:
            ref[r[0]] = float(r[ip])
            ranked.setdefault(r[il2], []).append((float(r[ic]) - float(r[ip]), r[0]))
        # the pool: the best margin (CNY) of every subcategory, then the second best of each, ...: a slice of
        # it spans the subcategories
        lists = [sorted(v) for _, v in sorted(ranked.items())]
        pool = [lst[i][1] for i in range(max(map(len, lists))) for lst in lists if i < len(lst)]
        self._margin = {s: ref[s] * min(k.price_mult, 2.0) - (ref[s] + m) for v in ranked.values() for m, s in v}
        self._ref = ref
        n = min(k.n_skus, len(pool))
        # machine i starts with its own n products of the catalog, so the network tries n x machines at once
        self._carried = {d: [pool[(i * n + j) % len(pool)] for j in range(n)] for i, d in enumerate(devices)}
        self._priced: set[tuple[str, str]] = set()
        self._stocked: set[tuple[str, str]] = set()  # (machine, product) restocked at least once
        self._since = {(d, s): 1 for d in devices for s in self._carried[d]}
        self._tried = {d: set(c) for d, c in self._carried.items()}
        self._pool = pool
        self._offset = {d: i * n for i, d in enumerate(devices)}
        self._next: dict[str, int] = {}
        self._seen: dict[str, tuple[float, int]] = {}
        self._ranked: list[tuple[float, str]] = []
        self._ranked_day = 0
        self._short: set[str] = set()  # products a restock found missing from the warehouse today
        self._short_day = 0  # product -> (sum, count) of its rates seen at machines
        position = dict.fromkeys(pool, 0)  # units ordered and not yet on a shelf (warehouse + in transit)
        rates: dict[tuple[str, str], float] = {}  # (machine, product) -> units a day seen at the last visit
        day, workdays = 1, 0
        is_workday = bool(report["is_workday"])
        while True:
            if day % 2 == 1:
                # the cover of the rates seen, plus a facing for each machine that has not had the product yet
                need: dict[str, float] = {}
                for d, carried in self._carried.items():
                    for s in carried:
                        fill = 0 if (d, s) in self._stocked else k.facing
                        need[s] = need.get(s, 0.0) + k.cover_days * rates.get((d, s), 0.0) + fill
                items = [
                    {"sku_id": s, "qty": int(np.ceil(q)) - position[s]} for s, q in need.items() if position[s] < q / 2
                ]
                for batch in _chunks(items):
                    res = yield _call("place_order", items=batch)
                    for a in res["content"].get("accepted", []):
                        position[a["sku_id"]] += a["qty"]
            if day % 7 == 0:
                yield from self._clean_warehouse(position)
            if is_workday:
                for i, d in enumerate(devices):
                    if (workdays + i) % k.visit_every == 0:
                        yield from self._visit(d, day, position, rates)
                workdays += 1
            nxt = yield END_DAY
            if nxt.get("done"):
                return
            day, is_workday = int(nxt["day"]), bool(nxt["is_workday"])

    def _visit(self, device: str, day: int, position: dict[str, int], rates: dict[tuple[str, str], float]) -> Plan:
        """Read a machine, take stale units off, swap a weak product for an untried one, fill up to the facing."""
        k = self.knobs
        got = yield _call("get_device_detail", device_id=device, window_days=7)
        detail = _content(got, "get_device_detail", "products")
        cols = detail["products"]["columns"]
        iu, ix, ir = (cols.index(c) for c in ("units", "next_expiry_day", "sold_per_day"))
        ie = cols.index("expired_units")
        # every unit of a product that has units expired, or expiring before a later visit could take them, is
        # stale (next_expiry_day is of the unexpired units; expired units are counted apart)
        soon = day + 2 * k.visit_every + 2  # calendar days to the next visit, with weekends and holidays
        shelf = {
            r[0]: (int(r[iu]), int(r[iu]) if int(r[ie]) or (r[ix] is not None and r[ix] <= soon) else 0, float(r[ir]))
            for r in detail["products"]["rows"]
        }
        carried = self._carried[device]
        for s in carried:
            if day - self._since[(device, s)] >= 7:  # a week of sales seen; a stockout's zero only lowers it slowly
                seen = shelf.get(s, (0, 0, 0.0))[2]
                self._rate(rates, device, s, max(seen, DECAY * rates.get((device, s), 0.0)))
        stale = [{"device_id": device, "sku_id": s, "qty": e} for s, (_, e, _) in shelf.items() if e > 0]
        if stale:
            yield _call("reduce", items=stale)
            yield _call("discard", items=[{"sku_id": it["sku_id"], "qty": it["qty"]} for it in stale])
        for _ in range(SWAPS):
            swap = self._swap(device, day, rates)
            if swap is None:
                break
            drop, new = swap  # the dropped product's units stay on the shelf until sold or stale
            carried[carried.index(drop)] = new
            self._since[(device, new)] = day
            self._tried[device].add(new)
        prices = [
            {"device_id": device, "sku_id": s, "price": round(min(k.price_mult, 2.0) * self._ref[s], 2)}
            for s in carried
            if k.price_mult != 1.0 and (device, s) not in self._priced
        ]
        if prices:
            yield _call("adjust_price", items=prices)
            self._priced.update((device, str(p["sku_id"])) for p in prices)
        items = []
        if self._short_day != day:
            self._short, self._short_day = set(), day
        for s in carried:
            units, gone, _ = shelf.get(s, (0, 0, 0.0))
            need = k.facing - (units - gone)
            if need > 0 and s not in self._short:
                items.append({"device_id": device, "sku_id": s, "qty": need})
        back: list[dict[str, Any]] = []
        for batch in _chunks(items):
            res = yield _call("restock", items=batch)
            for r in res["content"].get("rejected", []):
                if r["code"] == "insufficient_stock":  # not at hand today: not asked for again until tomorrow
                    self._short.add(r["item"]["sku_id"])
            for a in res["content"].get("accepted", []):
                position[a["sku_id"]] -= a["qty"]
                self._stocked.add((device, a["sku_id"]))
                if a["expired_qty"]:
                    back.append({"device_id": device, "sku_id": a["sku_id"], "qty": a["expired_qty"]})
        if back:  # expired warehouse units went up: bring them back and destroy them
            yield _call("reduce", items=back)
            yield _call("discard", items=[{"sku_id": it["sku_id"], "qty": it["qty"]} for it in back])

    def _clean_warehouse(self, position: dict[str, int]) -> Plan:
        """Discard warehouse units that are expired, expire within 7 days, or of products no machine carries."""
        carried = {s for c in self._carried.values() for s in c}
        items = []
        cols, rows = yield from _all_pages("get_warehouse")
        iu, ie, iw = cols.index("units"), cols.index("expired_units"), cols.index("expiring_7d_units")
        for r in rows:
            qty = int(r[iu]) if r[0] not in carried else int(r[ie]) + int(r[iw])
            if qty > 0:
                items.append({"sku_id": r[0], "qty": qty})
        for batch in _chunks(items):
            res = yield _call("discard", items=batch)
            for a in res["content"].get("accepted", []):
                position[a["sku_id"]] -= a["qty"]

    def _swap(self, device: str, day: int, rates: dict[tuple[str, str], float]) -> tuple[str, str] | None:
        """(weakest carried product, its replacement) at a machine, or None.

        The weakest product judged long enough gives way to the best product proven at other machines
        and not tried here when that one sells `SWAP_RATIO` times more; else, if it sells under
        `DROP_SHARE` of the machine's median, to the next untried product of the machine's slice.
        """
        since = self._since
        margin = self._margin
        judged = [
            (rates[(device, s)] * margin[s], s) for s in self._carried[device] if day - since[(device, s)] >= JUDGE_DAYS
        ]
        if len(judged) < 3:
            return None
        rate, weakest = min(judged)
        tried = self._tried[device]
        if self._ranked_day != day:  # the products seen at machines, best mean rate first (once a day)
            self._ranked = sorted(((total / n * margin[s], s) for s, (total, n) in self._seen.items()), reverse=True)
            self._ranked_day = day
        for best, sku in self._ranked:
            if sku not in tried:
                if best > SWAP_RATIO * rate:
                    return weakest, sku
                break
        if rate >= DROP_SHARE * float(np.median([r for r, _ in judged])):
            return None
        start = self._next.get(device, 0)
        for i in range(start, len(self._pool)):  # the next product of this machine's own slice of the catalog
            s = self._pool[(self._offset[device] + i) % len(self._pool)]
            if s not in tried:
                self._next[device] = i + 1
                return weakest, s
        return None

    def _rate(self, rates: dict[tuple[str, str], float], device: str, sku: str, rate: float) -> None:
        """Set the rate seen of a product at a machine, keeping each product's sum and count over machines."""
        old = rates.get((device, sku))
        total, n = self._seen.get(sku, (0.0, 0))
        self._seen[sku] = (total + rate - (old or 0.0), n + (old is None))
        rates[(device, sku)] = rate


IDLE = '{"tool":"read_memory"}'  # what a sub-environment whose episode is over is sent until the others end


def run_episodes(envs: Any, knobs: Sequence[Knobs], seeds: Sequence[int]) -> npt.NDArray[np.float64]:
    """One episode per sub-environment of a vector env, env i with `knobs[i]` and `seeds[i]`; final net assets.

    `envs` is any gymnasium vector env of `AutoVend-v0` with NEXT_STEP autoreset (the native one, or
    sync or async); sub-environments that finish first idle (`IDLE`) until the last one ends. `knobs` and
    `seeds` must have one entry per sub-environment (a ValueError before anything runs otherwise).
    """
    n = envs.num_envs
    for name, given in (("knobs", knobs), ("seeds", seeds)):
        if len(given) != n:
            raise ValueError(f"run_episodes: {name} has {len(given)} entries for {n} environments; give {n}")
    agents = [KnobAgent(k) for k in knobs]
    obs, _ = envs.reset(seed=list(seeds))
    actions = [agents[i].start(_one(obs, i)) for i in range(n)]
    final = np.full(n, np.nan)
    while np.isnan(final).any():
        obs, _, terminated, truncated, infos = envs.step(tuple(actions))
        for i in range(n):
            if not np.isnan(final[i]):
                actions[i] = IDLE
            elif terminated[i] or truncated[i]:
                final[i] = float(infos["settled"]["net_assets"][i])
                actions[i] = IDLE
            else:
                actions[i] = agents[i].act(_one(obs, i))
    return final


def _one(obs: dict[str, Any], i: int) -> dict[str, Any]:
    """Sub-environment i's observation out of the batched one."""
    return {"kind": obs["kind"][i], "day": int(obs["day"][i]), "text": obs["text"][i]}


class KnobRunAgent:
    """`KnobAgent` as an agent of `autovend run` and `autovend sweep` (`--agent autovend.agents.knobs:KnobRunAgent`).

    Each day it plays the knob agent's actions through the session's tools, feeding it each result as the gym env
    would (`{"ok", "content", "error"}`, and after end_day the next day's report with its day, workday and done),
    so it acts as in a vector env. `config_path`: a YAML mapping of knob names to values (default: `Knobs()`).
    Its plan is a generator, which cannot be saved: a run of it must not be checkpointed (`--checkpoint off`; in a
    sweep `checkpoint_every` above the days), and an interrupted run starts again.
    """

    name = "knobs"

    def __init__(self, seed: int = 0, config_path: Any = None) -> None:
        self.seed = seed
        self.knobs = Knobs() if config_path is None else _read_knobs(config_path)
        self._agent = KnobAgent(self.knobs)
        self._next = ""

    @staticmethod
    def _report(session: Any) -> dict[str, Any]:
        obs = session.observation()
        today = obs.get("calendar", {}).get("today", {})
        return {"day": session.day, "is_workday": bool(today.get("is_workday")), "done": session.done, "report": obs}

    def start(self, session: Any) -> None:
        """Compute the first action from day 1's report (no tool is called here)."""
        self._next = self._agent.start({"text": json.dumps(self._report(session))})

    def act_day(self, session: Any) -> None:
        """Carry out the knob agent's actions until it ends the day."""
        action = self._next
        while True:
            data = json.loads(action)
            tool = "end_day" if data.get("end_day") is True else str(data["tool"])
            res = session.call(tool, data.get("args", {}))
            if tool == "end_day":
                if not session.done:
                    self._next = self._agent.act({"text": json.dumps(self._report(session))})
                return
            text = json.dumps({"ok": res.ok, "content": res.content, "error": res.error})
            action = self._agent.act({"text": text})

    def state_dict(self) -> dict[str, Any]:
        """Refused: the plan is a generator (see the class docstring)."""
        raise RuntimeError(
            "the knob agent's plan is a running generator and cannot be checkpointed: run it with --checkpoint off "
            "(in a sweep, give it checkpoint_every above the days)"
        )

    def load_state(self, state: dict[str, Any]) -> None:
        """Refused, as `state_dict`."""
        self.state_dict()


def _read_knobs(path: Any) -> Knobs:
    """Knobs from a YAML mapping of knob names to values (ConfigError in words)."""
    from autovend.config import read_yaml_value
    from autovend.errors import ConfigError

    data = read_yaml_value(path, "knob settings")
    if not isinstance(data, dict) or set(data) - set(KNOB_NAMES):
        raise ConfigError(f"knob settings {path}: a mapping of {', '.join(KNOB_NAMES)} to numbers")
    try:
        return Knobs(**{**vars(Knobs()), **data})
    except TypeError as exc:
        raise ConfigError(f"knob settings {path}: {exc}") from None
