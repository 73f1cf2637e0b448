"""The Makefile's pipeline targets: no "Use `dvc push`" hint (there is no DVC remote), and dvc's exit status kept.

`make repro` runs with BIN pointing at a folder of stand-ins: a `dvc` that prints a stage line and DVC's closing
hint and exits with $FAKE_EXIT, and an `autovend` that prints "summary" (`-o .venv/.installed`: nothing installs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE_DVC = """#!/bin/bash
echo "Running stage 'check':"
echo "Use \\`dvc push\\` to send your updates to remote storage."
exit ${FAKE_EXIT:-0}
"""


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    if shutil.which("make") is None:
        pytest.skip("needs make")
    (tmp_path / "dvc").write_text(FAKE_DVC)
    (tmp_path / "autovend").write_text("#!/bin/bash\necho summary\n")
    for f in tmp_path.iterdir():
        f.chmod(0o755)
    return tmp_path


@pytest.mark.parametrize("code", [0, 3])
def test_make_repro_drops_the_push_hint_and_keeps_dvcs_exit_status(fake_bin: Path, code: int) -> None:
    env = {**os.environ, "FAKE_EXIT": str(code)}
    cmd = ["make", "-s", "-o", ".venv/.installed", f"BIN={fake_bin}", "repro"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert "Running stage 'check':" in proc.stdout and "dvc push" not in proc.stdout
    if code == 0:
        assert proc.returncode == 0 and "summary" in proc.stdout
    else:
        assert proc.returncode != 0 and "summary" not in proc.stdout  # a failed repro stops make
