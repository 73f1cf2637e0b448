"""The local model's llama.cpp: a portable build (no -march=native), and a server that dies is named as dead.

`make local` builds llama-cpp-python with CMAKE_ARGS=-DGGML_NATIVE=OFF. The tests without the [local]
extra read sample `llama_print_system_info` strings; those with it (marked localmodel, run by
`make test-local-model`) read the installed library itself and kill its real server with SIGILL, as a CPU
kills a library built with instructions it does not allow.
"""

from __future__ import annotations

import os
import platform
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.agents.llm import build
from autovend.agents.llm.build import compiled_features, native_features
from autovend.agents.llm.local_server import SMOLLM2_CONFIG, LlamaCppServer, missing_packages
from autovend.cli import app

ROOT = Path(__file__).resolve().parents[3]
PORTABLE = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | "
NATIVE = PORTABLE + "AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 | "
MISSING = missing_packages()
needs_local = pytest.mark.skipif(bool(MISSING), reason=f"the [local] extra is not installed (no {', '.join(MISSING)})")


def test_the_features_a_build_was_compiled_with():
    assert compiled_features(PORTABLE)["CPU"] == {"SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2", "LLAMAFILE"}
    assert native_features(PORTABLE) == []
    assert native_features(NATIVE) == ["AVX512", "AVX512_VNNI", "AMX_INT8"]
    assert compiled_features("") == {} and native_features("") == []


def test_the_check_exits_1_on_a_native_build_and_says_what_to_do(monkeypatch, capsys):
    monkeypatch.setattr(build, "system_info", lambda: NATIVE)
    assert build.main([]) == 1
    err = capsys.readouterr().err
    assert "compiled for this machine's CPU (AVX512, AVX512_VNNI, AMX_INT8)" in err and "make local" in err
    monkeypatch.setattr(build, "system_info", lambda: PORTABLE)
    assert build.main(["--quiet"]) == 0 and capsys.readouterr().out == ""


@pytest.mark.localmodel
@needs_local
def test_the_installed_llama_cpp_is_not_a_native_build():
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the portable feature set is x86-64's")
    info = build.system_info()
    cpu = compiled_features(info)["CPU"]
    assert {"AVX2", "FMA", "F16C"} <= cpu and native_features(info) == []
    with open("/proc/cpuinfo", encoding="utf-8") as fh:
        flags = set(next(line for line in fh if line.startswith("flags")).split(":", 1)[1].split())
    if "avx512f" in flags or "amx_int8" in flags:  # a native build here would have used them
        assert "AVX512" not in cpu and "AMX_INT8" not in cpu


@pytest.mark.slow
@pytest.mark.localmodel
@needs_local
def test_a_real_server_killed_by_sigill_is_named_as_dead(tmp_path):
    with LlamaCppServer(log_path=tmp_path / "server.log") as server:
        assert server.pid is not None
        os.kill(server.pid, signal.SIGILL)
        args = [
            "run",
            "--agent",
            "openai:smol",
            "--base-url",
            server.base_url,
            "--world",
            str(ROOT / "worlds" / "cn20"),
        ]
        args += ["--days", "1", "--out", str(tmp_path / "run"), "--agent-config", str(SMOLLM2_CONFIG)]
        result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code != 0
    text = " ".join(f"{result.output} {result.stderr} {result.exception}".split())  # the CLI's entry prints it
    assert "the model server died (exit 132: killed by SIGILL" in text and "Connection error" not in text
