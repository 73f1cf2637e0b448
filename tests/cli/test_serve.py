"""`autovend serve` argument checks (the serving itself is tested over stdio and HTTP in tests/tools)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from autovend.access import is_loopback
from autovend.cli import app
from autovend.errors import BundleError, ConfigError


@pytest.mark.parametrize(
    "args,error,message",
    [
        pytest.param([], ConfigError, "exactly one of --world", id="no-world"),
        pytest.param(["--world", "w", "--toy", "3x12"], ConfigError, "exactly one of --world", id="both"),
        pytest.param(["--toy", "3by12"], ConfigError, "--toy must look like 3x12", id="bad-toy"),
        pytest.param(["--toy", "3x12", "--transport", "sse"], ConfigError, "stdio or http", id="transport"),
        pytest.param(["--world", "w", "--days", "5"], ConfigError, "--days sets the days of a scored play", id="days"),
        pytest.param(["--toy", "3x12", "--force"], ConfigError, "--force replaces the run in --out", id="force"),
        pytest.param(["--toy", "3x12", "--finish"], ConfigError, "give --out RUN, and no --force", id="finish"),
        pytest.param(
            ["--toy", "3x12", "--out", "r", "--trajectory", "t.jsonl"], ConfigError, "drop --trajectory", id="both-logs"
        ),
        pytest.param(
            ["--toy", "3x12", "--transport", "http", "--trajectory", "t.jsonl"],
            ConfigError,
            "over HTTP use --out",
            id="http-trajectory",
        ),
        pytest.param(
            ["--world", "cn20", "--out", "r", "--days", "999"], ConfigError, "beyond the horizon", id="days-beyond"
        ),
        pytest.param(["--world", "/no/such/world"], BundleError, "does not exist", id="missing-world"),
    ],
)
def test_bad_arguments(args, error, message):
    result = CliRunner().invoke(app, ["serve", *args])
    assert isinstance(result.exception, error)
    assert message in str(result.exception)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "myhost.example"])
def test_a_host_beyond_loopback_needs_a_token(host, monkeypatch):
    monkeypatch.delenv("MY_TOKEN", raising=False)
    args = ["serve", "--toy", "3x12", "--transport", "http", "--host", host, "--token-env", "MY_TOKEN"]
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, ConfigError)
    assert f"--host {host} is reachable from other machines" in str(result.exception)
    assert "environment variable MY_TOKEN" in str(result.exception)


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True),
                                           ("localhost", True), ("0.0.0.0", False), ("10.0.0.1", False),
                                           ("example.org", False)])  # fmt: skip
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback


def test_finish_with_nothing_to_score(tmp_path):
    result = CliRunner().invoke(app, ["serve", "--toy", "3x12", "--out", str(tmp_path), "--finish"])
    assert isinstance(result.exception, ConfigError) and "holds no unfinished run" in str(result.exception)


def test_help_lists_the_options():
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    options = ("--world", "--seed", "--transport", "--port", "--host", "--token-env", "--out", "--force", "--finish")
    for option in (*options, "--trajectory", "--toy", "--days"):
        assert option in result.output


@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "inf"])
def test_the_read_timeout_is_a_number_of_seconds_above_0(seconds):
    for command in (["serve", "--toy", "3x12", "--transport", "http"], ["console", "--run", "r"]):
        result = CliRunner().invoke(app, [*command, "--read-timeout", seconds])
        assert isinstance(result.exception, ConfigError), (command, result.output)
        assert str(result.exception).startswith("--read-timeout must be a number of seconds above 0 (default 30)")
