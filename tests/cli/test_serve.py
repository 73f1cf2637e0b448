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
        # a 100,000 x 100,000 toy allocated 74.5 GiB at once; 0x0 served a world of no machines without a word
        pytest.param(
            ["--toy", "100000x100000"],
            ConfigError,
            "--toy 100000x100000: machines must be a whole number from 1 to 1,000, got 100000; products must be a "
            "whole number from 1 to 10,000, got 100000; give --toy MACHINESxPRODUCTS",
            id="toy-too-large",
        ),
        pytest.param(
            ["--toy", "1000x1001"],
            ConfigError,
            "1,000 machines x 1,001 products is 1,001,000 machine-product pairs, over the limit of 1,000,000",
            id="toy-too-many-pairs",
        ),
        pytest.param(["--toy", "0x0"], ConfigError, "machines must be a whole number from 1 to 1,000, got 0", id="0x0"),
        pytest.param(
            ["--toy", "3x0"], ConfigError, "products must be a whole number from 1 to 10,000, got 0", id="3x0"
        ),
        pytest.param(
            ["--toy", "3x12", "--days", "100000000"],
            ConfigError,
            "the horizon must be from 1 to 3,660 days, got 100000000",  # was an OverflowError traceback
            id="toy-days-too-long",
        ),
        pytest.param(["--toy", "1" * 5000 + "x1"], ConfigError, "--toy must look like 3x12", id="toy-5000-digits"),
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
