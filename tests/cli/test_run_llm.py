"""`autovend run --agent openai:MODEL` builds the LLM harness and runs it against an OpenAI-compatible URL."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from autovend.cli import app
from tests.agents.llm.fake_openai import FakeOpenAI

WORLD = str(Path(__file__).resolve().parents[2] / "worlds" / "cn20")


def test_run_an_llm_agent_against_a_local_server(tmp_path):
    out = tmp_path / "run"
    with FakeOpenAI() as server:
        args = [
            "run",
            "--agent",
            "openai:fake",
            "--base-url",
            server.base_url,
            "--world",
            WORLD,
            "--seed",
            "1",
            "--days",
            "2",
            "--out",
            str(out),
            "--no-report",
        ]
        result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "run.json").read_text())
    assert meta["agent"] == "openai:fake" and meta["days"] == 2
    assert meta["token_usage"]["requests"] >= 2  # at least one model request a day
    lines = (out / "trajectory.jsonl").read_text().splitlines()
    assert sum(json.loads(line).get("tool") == "end_day" for line in lines) == 2
    assert (out / "llm.jsonl").exists()


def test_default_run_folder_of_a_model_name_with_slashes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with FakeOpenAI() as server:
        args = [
            "run",
            "--agent",
            "openai:org/model:7b",
            "--base-url",
            server.base_url,
            "--world",
            WORLD,
            "--seed",
            "2",
            "--days",
            "1",
            "--no-report",
        ]
        result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "runs" / Path(WORLD).name / "openai-org-model-7b-s2" / "run.json").exists()
