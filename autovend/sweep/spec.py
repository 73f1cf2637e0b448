"""The sweep specification: which worlds, agents and seeds to run, read from YAML into typed models.

    spec = load_spec("sweep.yaml")

    worlds: [cn20]                                 # shipped worlds' names, bundle folders, or {path: ..., name: ...}
    agents:
      - baseline                                   # as `autovend run --agent`
      - {agent: baseline, config: baseline-paper}  # a shipped agent config by name, or a YAML file
      - {agent: agents/hold.py:HoldAgent, name: hold}
      - agent: openai:gpt-4.1-mini                 # base_url, api_key_env, config, prices, mcp, provider
        api_key_env: OPENAI_API_KEY
    seeds: [1, 2, 3]
    days: 20                                       # optional; default: each world's horizon
    limits: {openai: 2}                            # optional; at most 2 runs at once per provider
    timeout_s: 3600                                # optional; a run still going after an hour is stopped
    scenarios: [heatwave, my-scenario.yaml]        # optional; each world also changed by each (docs/scenarios.md)
    draws: {n: 20, seed: 1}                        # optional; N worlds from each world's identified set

Paths are read relative to the current directory, like the options of `autovend run`; a bare name
that is no file there names a shipped world (`autovend.world.names`) or agent config. Every world
and agent has a label (its `name`, else the world's folder name, or `default_label` of the agent
string plus the config file's stem), used in run folder names, results.csv and the leaderboard;
labels must be unique. An agent's `provider` groups LLM agents under one concurrency limit: by
default `openai` for the OpenAI API and the host:port of a `base_url`. `timeout_s` is the wall time one run may
take in one invocation of the sweep (from its start or resume in its own process): a run over it is stopped,
left resumable from its last checkpoint, and shown as "timed out" in results.csv.

With `scenarios` or `draws`, every world is run as it is and as each of its variants: WORLD.SCENARIO (the world
changed by the scenario, `autovend world derive`) and WORLD.drawNN (`autovend world draw`), written as bundles under
OUT/variants/ (`autovend.sweep.variants`); the sweep then also writes robustness.md and robustness.html, how the
ranking of the world holds across its variants (`autovend.sweep.robustness`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError, field_validator

from autovend.agents.plugins import is_plugin_file
from autovend.config import problem_lines, read_yaml_value
from autovend.errors import ConfigError
from autovend.rng import run_seed

LLM_PREFIX = "openai:"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CHECKPOINT_DAYS = 5  # for agents whose days cost CPU only: a checkpoint costs about as much as a day
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# a seed is a whole number >= 0: `true` (which would run seed 1), 1.5 or "1" is refused in run_seed's words
Seed = Annotated[int, BeforeValidator(run_seed)]
WholePositive = Annotated[int, Strict(), Field(gt=0)]  # days, limits, checkpoint_every: `true` is no 1
Seconds = Annotated[float, Strict(), Field(gt=0, allow_inf_nan=False)]


def slug(text: str) -> str:
    """`text` made safe for a folder name, as `autovend run` names its default run folders."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def default_label(agent: str) -> str:
    """The label of an agent string without `name`: the string made file-safe, a plugin file by its stem.

    `path/to/hold.py:HoldAgent` is `hold-HoldAgent` wherever the file is given from (the sweep hands
    workers its absolute path), `pkg.mod:Agent` is `pkg.mod-Agent`, `openai:gpt-4.1-mini` is
    `openai-gpt-4.1-mini`.
    """
    if not agent.startswith(LLM_PREFIX) and ":" in agent:
        target, attr = agent.rsplit(":", 1)
        if is_plugin_file(target):
            stem = re.split(r"[/\\]", target)[-1].removesuffix(".py")
            return slug(f"{stem}-{attr}")
    return slug(agent)


class WorldEntry(BaseModel):
    """A world bundle to run on: its folder and an optional label."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path
    name: str | None = None

    @property
    def label(self) -> str:
        """The world's label: `name`, else the bundle's folder name."""
        return self.name or slug(self.path.resolve().name)


class AgentEntry(BaseModel):
    """An agent as `autovend run` takes it: the agent string and its options.

    agent: `baseline` (any registered name), `openai:MODEL`, or a plugin `FILE:Class` / `module:Class`.
    config: the agent's YAML settings (`--agent-config`). base_url, api_key_env, prices, mcp: the
    options of `openai:MODEL` agents (`--base-url`, `--api-key-env`, `--prices`, `--mcp`).
    provider: the concurrency group of an LLM agent (see the module docstring). name: the label.
    checkpoint_every: days between checkpoints (`checkpoint_days`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str = Field(min_length=1)
    name: str | None = None
    config: Path | None = None
    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    prices: Path | None = None
    mcp: bool = False
    provider: str | None = None
    checkpoint_every: WholePositive | None = None
    interventions: list[Literal["verify-state", "policy-notes"]] = Field(default_factory=list)

    @property
    def checkpoint_days(self) -> int:
        """Days between checkpoints: `checkpoint_every`, else 1 for LLM agents (their days cost API calls), else 5."""
        if self.checkpoint_every is not None:
            return self.checkpoint_every
        return 1 if self.is_llm else DEFAULT_CHECKPOINT_DAYS

    @property
    def is_llm(self) -> bool:
        """True for an `openai:MODEL` agent."""
        return self.agent.startswith(LLM_PREFIX)

    @property
    def label(self) -> str:
        """The agent's label: `name`, else `default_label` of the agent string plus the config file's stem."""
        if self.name:
            return self.name
        base = default_label(self.agent)
        base = base if self.config is None else f"{base}-{slug(self.config.stem)}"
        return base + "".join(f"+{i}" for i in self.interventions)

    @property
    def provider_key(self) -> str | None:
        """The concurrency group: `provider`, else `openai` or the base URL's host:port; None for non-LLM agents."""
        if self.provider:
            return self.provider
        if not self.is_llm:
            return None
        if self.base_url:
            return urlparse(self.base_url).netloc or self.base_url
        return "openai"

    def llm_only_options(self) -> list[str]:
        """The options given that only `openai:MODEL` agents take."""
        given = []
        if self.base_url is not None:
            given.append("base_url")
        if self.api_key_env != DEFAULT_KEY_ENV:
            given.append("api_key_env")
        if self.prices is not None:
            given.append("prices")
        if self.mcp:
            given.append("mcp")
        if self.provider is not None:
            given.append("provider")
        if self.interventions:
            given.append("interventions")
        return given


class DrawsEntry(BaseModel):
    """Worlds drawn from each world's identified set: how many, with which seed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: Annotated[int, Strict(), Field(gt=0, le=1000)]
    seed: Seed


class SweepSpec(BaseModel):
    """A sweep: every (world or variant, agent, seed) is one run of `days` days (default: the world's horizon)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    worlds: list[WorldEntry] = Field(min_length=1)
    agents: list[AgentEntry] = Field(min_length=1)
    seeds: list[Seed] = Field(min_length=1)
    days: WholePositive | None = None
    limits: dict[str, WholePositive] = Field(default_factory=dict)
    timeout_s: Seconds | None = None  # wall seconds a run may take in one invocation; over it, it is stopped
    scenarios: list[str] = Field(default_factory=list)
    draws: DrawsEntry | None = None

    @property
    def n_variants(self) -> int:
        """Variants of each world: the world itself, one per scenario, one per draw."""
        return 1 + len(self.scenarios) + (self.draws.n if self.draws is not None else 0)

    @field_validator("worlds", mode="before")
    @classmethod
    def _world_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"path": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("agents", mode="before")
    @classmethod
    def _agent_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"agent": v} if isinstance(v, str) else v for v in value]
        return value

    @property
    def n_runs(self) -> int:
        """The number of runs: worlds x variants x agents x seeds."""
        return len(self.worlds) * self.n_variants * len(self.agents) * len(self.seeds)


def check_spec(spec: SweepSpec, where: str) -> None:
    """The rules a spec must follow beyond its types: unique seeds and labels, LLM options on LLM agents only."""
    problems = []
    seen: set[int] = set()
    for s in spec.seeds:
        if s in seen:
            problems.append(f"seeds: seed {s} is listed twice; list each seed once")
        seen.add(s)
    groups: tuple[tuple[str, Sequence[WorldEntry | AgentEntry]], ...] = (
        ("worlds", spec.worlds),
        ("agents", spec.agents),
    )
    for kind, entries in groups:
        labels: dict[str, int] = {}
        for i, e in enumerate(entries, start=1):
            if e.name is not None and not LABEL_RE.match(e.name):
                problems.append(
                    f"{kind}, entry {i}: name {e.name!r} is not usable in a folder name; use letters, digits, '.', "
                    "'_' and '-' (starting with a letter or digit)"
                )
            if e.label in labels:
                problems.append(
                    f"{kind}, entries {labels[e.label]} and {i} have the same label {e.label!r}; give one of them "
                    "another `name`"
                )
            labels.setdefault(e.label, i)
    named: set[str] = set()
    for i, sc in enumerate(spec.scenarios, start=1):
        stem = Path(sc).stem
        if stem in named:
            problems.append(f"scenarios, entry {i}: {sc!r} is listed twice; list each scenario once")
        named.add(stem)
    providers = set()
    for i, a in enumerate(spec.agents, start=1):
        extra = a.llm_only_options()
        if not a.is_llm and extra:
            problems.append(
                f"agents, entry {i} ({a.agent}): options of openai:MODEL agents only ({', '.join(extra)}); remove them"
            )
        if a.provider_key is not None:
            providers.add(a.provider_key)
    for name in spec.limits:
        if name not in providers:
            known = ", ".join(sorted(providers)) or "none (no openai:MODEL agent)"
            problems.append(f"limits: no agent has provider {name!r}; the providers are: {known}")
    if problems:
        raise ConfigError(f"{where}: invalid sweep spec:\n" + "\n".join(f"  - {p}" for p in problems))


def parse_spec(data: Any, where: str = "the sweep spec") -> SweepSpec:
    """A checked `SweepSpec` from parsed YAML; `where` names the file in error messages."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{where}: a sweep spec is a mapping with worlds, agents, seeds and optionally days and limits, "
            f"got {type(data).__name__}"
        )
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        lines = [f"  - {line}" for line in problem_lines(exc, SweepSpec)]
        raise ConfigError(
            f"{where}: invalid sweep spec:\n" + "\n".join(lines) + "\n(see docs/sweeps.md for the keys)"
        ) from None
    check_spec(spec, where)
    return spec


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check the sweep spec YAML at `path`."""
    path = Path(path)
    return parse_spec(read_yaml_value(path, "the sweep spec"), str(path))
