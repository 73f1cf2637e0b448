"""`load_agent`: the one way an agent spec becomes an agent (`autovend run --agent`, sweeps, scripts).

    agent = load_agent("baseline", seed=1, config_path=None)
    agent = load_agent("openai:gpt-4.1-mini", seed=1, config_path=None, llm=LLMOptions(base_url=...))
    agent = load_agent("examples/agents/hold.py:HoldAgent", seed=1, config_path=None)
    agent = load_agent("mypackage.agents:MyAgent", seed=1, config_path=Path("my.yaml"))

A spec is a registered name (`autovend.agents.base.AGENTS`: `baseline`, and `oracle`, the privileged
reference that reads the hidden demand model: `autovend.agents.oracle`), `openai:MODEL` (the LLM
harness, with the `LLMOptions` of `autovend run`), or a plugin: `FILE.py:Class` (a Python file,
loaded as module `autovend_plugin_<stem>_<hash of its path>` so checkpoints of its objects load
again in a later process) or `package.module:Class` (an importable module). The plugin object is
called with the keyword arguments it declares among `seed` and `config_path` (see docs/agents.md)
and must give an object with the `Agent` protocol's name, start, act_day, state_dict and load_state.
Every problem is a `ConfigError` that names the spec and says what to fix.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from autovend.agents.base import AGENTS, Agent, make_agent
from autovend.errors import ConfigError

LLM_PREFIX = "openai:"
AGENT_METHODS = ("start", "act_day", "state_dict", "load_state")
SPEC_FORMS = "baseline, oracle (privileged), openai:MODEL, path/to/file.py:Class or package.module:Class"


@dataclass(frozen=True)
class LLMOptions:
    """The options only `openai:MODEL` agents take (as `autovend run` passes them).

    mcp: reach the tools over MCP, at this URL or with this command starting `autovend serve` on
    stdio (`autovend.agents.llm.mcp_bridge.serve_command`); None = in process.
    """

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    mcp: str | None = None
    prices_path: Path | None = None
    interventions: tuple[str, ...] = ()  # `autovend.agents.llm.interventions`: verify-state, policy-notes


def load_agent(spec: str, seed: int, config_path: Path | None = None, *, llm: LLMOptions | None = None) -> Agent:
    """The agent of `spec` for a run with `seed`, with its settings file `config_path` (see the module docstring)."""
    if spec.startswith(LLM_PREFIX):
        from autovend.agents.llm import build_llm_agent

        opts = llm or LLMOptions()
        for option, url in (("--base-url", opts.base_url), ("--mcp-url", opts.mcp)):
            if url is not None and "://" in url:
                _check_url(option, url)
        return build_llm_agent(
            spec,
            base_url=opts.base_url,
            api_key_env=opts.api_key_env,
            mcp=opts.mcp,
            config_path=config_path,
            prices_path=opts.prices_path,
            seed=seed,
            interventions=opts.interventions,
        )
    if spec in AGENTS:
        return make_agent(spec, seed, config_path)
    if ":" not in spec:
        raise ConfigError(f"there is no agent {spec!r}; give {SPEC_FORMS} (registered: {', '.join(sorted(AGENTS))})")
    target, attr = spec.rsplit(":", 1)
    if not target or not attr:
        raise ConfigError(f"--agent {spec!r}: a plugin is FILE.py:Class or package.module:Class")
    module = _file_module(spec, Path(target)) if is_plugin_file(target) else _import_module(spec, target)
    factory = _attribute(spec, module, attr)
    agent = _construct(spec, factory, seed, config_path)
    missing = [m for m in AGENT_METHODS if not callable(getattr(agent, m, None))]
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        missing.insert(0, "name (a non-empty str)")
    if missing:
        raise ConfigError(
            f"--agent {spec}: {type(agent).__name__} is not an agent, it lacks {', '.join(missing)}; "
            "see docs/agents.md for the interface"
        )
    return agent  # type: ignore[no-any-return]


def _check_url(option: str, url: str) -> None:
    """Refuse a URL httpx would refuse with a traceback: no http(s) scheme, no host, or a bad port."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        _ = parts.port  # ValueError for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise ConfigError(f"{option} {url!r} is not a URL ({exc}); give e.g. http://127.0.0.1:8000/v1") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{option} {url!r} is not an http(s) URL with a host; give e.g. http://127.0.0.1:8000/v1")


def is_plugin_file(target: str) -> bool:
    """Whether the part of a plugin spec before its last ':' names a Python file (else an importable module)."""
    return target.endswith(".py") or "/" in target or "\\" in target


def _file_module(spec: str, path: Path) -> ModuleType:
    """The module of a plugin file, loaded once per process under a name fixed by its resolved path."""
    if not path.is_file():
        raise ConfigError(f"--agent {spec}: there is no file {path} (relative paths start from the current folder)")
    resolved = path.resolve()
    stem = re.sub(r"\W", "_", resolved.stem)
    name = f"autovend_plugin_{stem}_{hashlib.sha256(str(resolved).encode()).hexdigest()[:10]}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise ConfigError(f"--agent {spec}: {path} cannot be loaded as a Python module; give a .py file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # before running it: dataclasses and pickling look the module up by name
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # SystemExit: a script's sys.exit() must not end the run quietly
        del sys.modules[name]
        raise ConfigError(f"--agent {spec}: running {path} failed: {_why(exc)}") from exc
    return module


def _import_module(spec: str, target: str) -> ModuleType:
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"--agent {spec}: cannot import module {target!r} ({exc}); install its package, or give FILE.py:Class"
        ) from exc
    except (Exception, SystemExit) as exc:
        raise ConfigError(f"--agent {spec}: importing {target} failed: {_why(exc)}") from exc


def _attribute(spec: str, module: ModuleType, attr: str) -> Any:
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            classes = sorted(
                n for n, v in vars(module).items() if inspect.isclass(v) and v.__module__ == module.__name__
            )
            listed = ", ".join(classes) or "none"
            raise ConfigError(f"--agent {spec}: {attr!r} is not defined there (its classes: {listed})")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"--agent {spec}: {attr} is a {type(obj).__name__}, not a class or a function")
    return obj


def _construct(spec: str, factory: Any, seed: int, config_path: Path | None) -> Any:
    """Call `factory` with the keyword arguments it declares among seed and config_path."""
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, Any] = {}
    if "seed" in params or takes_any:
        kwargs["seed"] = int(seed)
    if config_path is not None:
        if "config_path" not in params and not takes_any:
            raise ConfigError(
                f"--agent {spec}: it takes no config_path parameter, so --agent-config {config_path} cannot be used; "
                "drop --agent-config or give the class a config_path parameter"
            )
        kwargs["config_path"] = Path(config_path)
    try:
        return factory(**kwargs)
    except ConfigError:
        raise
    except (Exception, SystemExit) as exc:
        raise ConfigError(f"--agent {spec}: creating the agent failed: {_why(exc)}") from exc


def _why(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}); a plugin defines an agent and never exits the process"
    return f"{type(exc).__name__}: {exc}"
