"""Hostile settings files (params, sweep spec, mapping, agent configs, price table): a ConfigError naming the
file, the line and the fix, never a traceback, a hang or a silently dropped key."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autovend.agents.baseline.config import load_baseline_config
from autovend.agents.llm.config import load_llm_config
from autovend.agents.llm.pricing import load_price_table
from autovend.cli import main
from autovend.config import read_yaml
from autovend.data.adapters.mapping import load_mapping
from autovend.errors import AdaptError, ConfigError
from autovend.sweep.spec import load_spec

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)
)
CASES: dict[str, tuple[bytes, str]] = {
    "key-twice": (
        b"seed: 1\nother: 2\nseed: 3\n",
        r"the key 'seed' is given twice in one mapping \(line 1, column 1 and line 3",
    ),
    "alias-bomb": (LAUGHS.encode(), r"more than 100,000 values once its aliases"),
    "self-alias": (b"a: &a [*a]\n", r"refers to a value that holds it"),
    "deep": (b"[" * 300 + b"]" * 300, r"nested more than 100 levels deep"),
    "latin-1": ("a: caf\xe9\n".encode("latin-1"), r"line 1: not UTF-8 text \(byte 0xe9\)"),
    "syntax": (b"a: [1, 2\n", r"not valid YAML at line 2, column 1"),
    "nul-byte": (b"a: 1\x00\n", r"not valid YAML: unacceptable character #x0000"),
    "huge": (b"a: " + b"x" * 1_100_000 + b"\n", r"larger than 1,000,000 bytes"),
}
LOADERS: dict[str, Callable[[Path], Any]] = {
    "params": read_yaml,
    "sweep-spec": load_spec,
    "mapping": load_mapping,
    "baseline-config": load_baseline_config,
    "llm-config": load_llm_config,
    "price-table": load_price_table,
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("loader", list(LOADERS))
def test_hostile_yaml_is_refused_naming_file_and_line(tmp_path: Path, loader: str, case: str) -> None:
    content, match = CASES[case]
    path = tmp_path / "settings.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=match) as exc:
        LOADERS[loader](path)
    assert "settings.yaml" in str(exc.value)


@pytest.mark.parametrize("loader", list(LOADERS))
def test_a_folder_or_missing_file_is_refused(tmp_path: Path, loader: str) -> None:
    for path in (tmp_path, tmp_path / "absent.yaml"):
        with pytest.raises(ConfigError):
            LOADERS[loader](path)


def test_an_error_quoting_markup_or_emoji_codes_is_printed_as_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import autovend.cli as cli

    def fail() -> None:
        raise AdaptError("row 4, column Pay: the cell '[/x]' or ':a:' [bold]is odd")

    monkeypatch.setattr(cli, "app", fail)
    monkeypatch.setattr(sys, "argv", ["autovend"])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    assert "the cell '[/x]' or ':a:' [bold]is odd" in capsys.readouterr().err


def test_a_plugin_that_exits_while_loading_is_a_config_error(tmp_path: Path) -> None:
    from autovend.agents.plugins import load_agent

    (tmp_path / "quits.py").write_text("import sys\nsys.exit(0)\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"it called sys\.exit\(0\); a plugin defines an agent"):
        load_agent(f"{tmp_path / 'quits.py'}:Agent", seed=1)
    (tmp_path / "init.py").write_text("import sys\nclass A:\n    def __init__(self):\n        sys.exit(3)\n")
    with pytest.raises(ConfigError, match=r"creating the agent failed: it called sys\.exit\(3\)"):
        load_agent(f"{tmp_path / 'init.py'}:A", seed=1)
