"""Every command's --seed is a whole number >= 0: `true`, `1.5` or `-1` is refused before anything runs (exit 2).

The in-process doors (gym, vector, ToolSession, the simulator) and a sweep's `seeds` refuse the same values in
`autovend.rng.run_seed`'s words (tests/test_gym.py, tests/test_vector.py, tests/sweep/test_spec.py); this pins
the command line, where click's integer type already refused them.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from autovend.cli import app


@pytest.mark.parametrize("value", ["true", "True", "1.5", "1e3", "-1"])
@pytest.mark.parametrize(
    "command",
    [["run", "--world", "cn20", "--days", "1"], ["serve", "--toy", "3x12"], ["console"]],
    ids=["run", "serve", "console"],
)
def test_a_seed_that_is_no_whole_number_is_refused(command, value, tmp_path):
    result = CliRunner().invoke(app, [*command, "--seed", value], catch_exceptions=False)
    assert result.exit_code == 2
    assert "Invalid value for '--seed'" in " ".join(result.output.split())
    assert not any(tmp_path.iterdir())
