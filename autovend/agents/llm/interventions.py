"""The paper's two controlled interventions for language-model agents (`InterventionAgent`), set in `LLMConfig`.

    autovend run --agent openai:MODEL --intervention verify-state --intervention policy-notes

- `verify-state`: before the model acts each day, the harness reads the feasible state with read-only tools and
  puts it above the daily prompt: cash and whether site visits are possible today, every warehouse product with
  its units (expired ones apart) and next expiry, and every machine's free capacity and shelf (units and price of
  each product). The paper's agents had to query this to ground an action and often did not: many of their actions
  were infeasible. The harness's calls (get_warehouse pages, one get_device_detail per machine) are
  in the trajectory like any call, made before the model's first turn, and do not count against the model's
  daily tool budget; they are free read-only queries, so they change nothing in the simulation.
- `policy-notes`: the model keeps a standing policy, a text of at most `POLICY_LIMIT` characters shown at the top
  of every daily prompt, and revises it with a harness tool, `update_policy(text)` (listed with the 18 tools;
  the harness answers it, nothing reaches the simulator). The paper's agents kept repeating mistakes they had
  been told about; the notebook (read_memory / write_memory) stays as it is.

Both are recorded in run.json's agent_config (`interventions`), so runs with and without them are different
agents of one model, compared with paired statistics over seeds like any two agents (`autovend compare`, a sweep
with both as entries: docs/llm-agents.md).
"""

from __future__ import annotations

import json
from typing import Any

from autovend.agents.llm.agent import LLMAgent, _Day
from autovend.agents.llm.toolcalls import ToolBackend, error_text
from autovend.tools.trajectory import dumps

VERIFY_STATE = "verify-state"
POLICY_NOTES = "policy-notes"
POLICY_TOOL = "update_policy"
POLICY_LIMIT = 2_000
STATE_LIMIT = 40_000  # characters of the verified state shown; more is cut with a note
PAGE_SIZE = 50

POLICY_TOOL_DEF = {
    "type": "function",
    "function": {
        "name": POLICY_TOOL,
        "description": (
            f"[harness] Replace your standing policy: the decision rules you follow, at most {POLICY_LIMIT:,} "
            "characters. It is shown at the top of every daily prompt. Free; it does not touch the business."
        ),
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": POLICY_LIMIT, "description": "The new policy."}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
}
SYSTEM_NOTES = {
    VERIFY_STATE: (
        "Verified state: each daily prompt starts with the state checked by the harness before you act: cash, "
        "whether site visits are possible today, every warehouse product (units, expired units, next expiry day) and "
        "every machine's free capacity and shelf (units and price per product). Plan restocks, reductions and "
        "orders within it."
    ),
    POLICY_NOTES: (
        f"Standing policy: keep your decision rules in a policy of at most {POLICY_LIMIT:,} characters with the "
        f"{POLICY_TOOL} tool. It is shown at the top of every daily prompt; revise it when results show a rule should "
        "change, so the correction holds on later days."
    ),
}


def _rows(result: Any) -> tuple[list[str], list[list[Any]], int]:
    content = result.content if result.ok else {}
    return list(content.get("columns", [])), list(content.get("rows", [])), int(content.get("pages", 1) or 1)


def feasible_state(backend: ToolBackend, observation: dict[str, Any] | None = None) -> dict[str, Any]:
    """The feasible state of today, read with read-only tools (module docstring)."""
    warehouse: list[dict[str, Any]] = []
    page, pages = 1, 1
    while page <= pages:
        cols, rows, pages = _rows(backend.call("get_warehouse", {"page": page, "page_size": PAGE_SIZE}))
        for r in rows:
            x = dict(zip(cols, r, strict=False))
            warehouse.append(
                {k: x.get(k) for k in ("sku_id", "units", "expired_units", "next_expiry_day", "unit_cost")}
            )
        page += 1
    machines = []
    devices = (observation or {}).get("devices", {})
    ids = [row[0] for row in devices.get("rows", [])]
    for device in ids:
        res = backend.call("get_device_detail", {"device_id": device, "window_days": 1})
        if not res.ok:
            continue
        d = res.content
        cols = d.get("products", {}).get("columns", [])
        shelf = {}
        for r in d.get("products", {}).get("rows", []):
            x = dict(zip(cols, r, strict=False))
            shelf[x["sku_id"]] = [x.get("units"), x.get("expired_units"), x.get("price")]
        machines.append({"device_id": device, "free_capacity": d.get("free_capacity"), "shelf": shelf})
    today = (observation or {}).get("calendar", {}).get("today", {})
    return {
        "cash": (observation or {}).get("balance", {}).get("cash"),
        "site_visits_possible_today": bool(today.get("is_workday")),
        "warehouse": warehouse,
        "machines_shelf_is_sku_to_units_expired_price": machines,
    }


def _observation(backend: ToolBackend) -> dict[str, Any]:
    """Today's observation: the session's, or over MCP the JSON inside the daily prompt ({} if there is none)."""
    observation = getattr(backend, "observation", None)
    if callable(observation):
        got = observation()
        return got if isinstance(got, dict) else {}
    text = backend.daily_prompt()
    try:
        got = json.loads(text[text.index("{") : text.rindex("}") + 1])
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


def state_text(state: dict[str, Any]) -> str:
    """The verified state as the prompt shows it (cut at `STATE_LIMIT` characters, with a note)."""
    text = dumps(state)
    if len(text) > STATE_LIMIT:
        text = text[:STATE_LIMIT] + f" ... [cut by the harness at {STATE_LIMIT:,} of {len(text):,} characters]"
    return "[Verified state, read by the harness before you act]\n" + text


class InterventionAgent(LLMAgent):
    """`LLMAgent` with the interventions its config names (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._policy = ""

    @property
    def interventions(self) -> tuple[str, ...]:
        """The interventions in force."""
        return tuple(self.config.interventions)

    @property
    def policy(self) -> str:
        """The standing policy (policy-notes)."""
        return self._policy

    def _system(self, backend: ToolBackend) -> str:
        notes = [SYSTEM_NOTES[i] for i in self.interventions]
        return super()._system(backend) + "\n\n## Harness interventions\n" + "\n".join(f"- {n}" for n in notes)

    def _attach(self, session: Any) -> ToolBackend:
        backend = super()._attach(session)
        tools = self._tools
        if POLICY_NOTES in self.interventions and tools is not None and POLICY_TOOL_DEF not in tools:
            tools.append(POLICY_TOOL_DEF)
        return backend

    def _day_prompt(self, backend: ToolBackend) -> str:
        parts = []
        if POLICY_NOTES in self.interventions:
            shown = self._policy or "(none yet: write one with update_policy)"
            parts.append(f"[Your standing policy]\n{shown}")
        if VERIFY_STATE in self.interventions:
            state = feasible_state(backend, _observation(backend))
            self._write("verified_state", state=state)
            parts.append(state_text(state))
        return "\n\n".join([*parts, super()._day_prompt(backend)])

    def _answer(self, backend: ToolBackend, today: _Day, name: str, args: Any, error: str | None) -> tuple[str, bool]:
        if name != POLICY_TOOL or POLICY_NOTES not in self.interventions:
            return super()._answer(backend, today, name, args, error)
        cap = self.config.max_tool_calls_per_day
        if today.ended or today.calls >= cap:
            return super()._answer(backend, today, name, args, error)  # its own refusal texts
        today.calls += 1
        text = args.get("text") if isinstance(args, dict) and error is None else None
        if not isinstance(text, str) or set(args) != {"text"} or len(text) > POLICY_LIMIT:
            today.refused += 1
            why = error or f"{POLICY_TOOL} takes one parameter, text: a string of at most {POLICY_LIMIT:,} characters"
            return error_text(why), False
        self._policy = text
        self._write("policy", text=text)
        return dumps({"ok": True, "policy_chars": len(text)}), True

    def state_dict(self) -> dict[str, Any]:
        """`LLMAgent.state_dict` and the standing policy."""
        return {**super().state_dict(), "policy": self._policy}

    def load_state(self, state: dict[str, Any]) -> None:
        """`LLMAgent.load_state` and the standing policy."""
        super().load_state(state)
        self._policy = str(state.get("policy") or "")
