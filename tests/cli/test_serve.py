"""`autovend serve` argument checks (the serving itself is tested over stdio and HTTP in tests/tools)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import BundleError, ConfigError


@pytest.mark.parametrize(
    "args,error,message",
    [
        pytest.param([], ConfigError, "exactly one of --world", id="no-world"),
        pytest.param(["--world", "w", "--toy", "3x12"], ConfigError, "exactly one of --world", id="both"),
        pytest.param(["--toy", "3by12"], ConfigError, "--toy must look like 3x12", id="bad-toy"),
        pytest.param(["--toy", "3x12", "--transport", "sse"], ConfigError, "stdio or http", id="transport"),
        pytest.param(["--world", "w", "--days", "5"], ConfigError, "--days only applies to --toy", id="days"),
        pytest.param(["--world", "/no/such/world"], BundleError, "does not exist", id="missing-world"),
    ],
)
def test_bad_arguments(args, error, message):
    result = CliRunner().invoke(app, ["serve", *args])
    assert isinstance(result.exception, error)
    assert message in str(result.exception)


def test_help_lists_the_options():
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--world", "--seed", "--transport", "--port", "--trajectory", "--toy", "--days"):
        assert option in result.output
