"""The optional extras of the package: which extra brings a third-party module, and what to tell a user without it.

The base install runs worlds (simulator, tools, MCP server, baseline agent, evaluation); building
worlds needs `[pipeline]`, the language-model agent `[llm]`, the gymnasium wrapper `[gym]`,
`autovend sweep` `[sweep]` (pyproject.toml). A command that reaches a module of a missing extra ends
with `missing_extra`'s message instead of a traceback.
"""

from __future__ import annotations

EXTRA_OF: dict[str, str] = {
    "statsmodels": "pipeline",
    "pandera": "pipeline",
    "dvc": "pipeline",
    "fsspec": "pipeline",
    "openai": "llm",
    "gymnasium": "gym",
    "dask": "sweep",
    "distributed": "sweep",
}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """What to install when `exc` names a module of an extra that is not installed; None for any other module."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRA_OF.get(module)
    if extra is None:
        return None
    return (
        f"this command needs {module}, which comes with AutoVend's [{extra}] extra and is not installed; "
        f"install it with: pip install 'autovend[{extra}]' (or 'autovend[dev]' for everything)"
    )
