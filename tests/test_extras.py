"""Optional extras: a command that needs a package of a missing extra says which extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autovend.extras import EXTRA_OF, missing_extra


@pytest.mark.parametrize(
    ("module", "extra"),
    [
        ("statsmodels.api", "pipeline"),
        ("pandera.pandas", "pipeline"),
        ("dvc", "pipeline"),
        ("openai", "llm"),
        ("dask.distributed", "sweep"),
    ],
)
def test_a_module_of_an_extra_names_the_extra(module, extra):
    message = missing_extra(ModuleNotFoundError(f"No module named {module!r}", name=module))
    assert f"pip install 'autovend[{extra}]'" in message
    assert message.startswith(f"this command needs {module.split('.')[0]},")


def test_any_other_missing_module_is_not_explained_away():
    assert missing_extra(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
    assert missing_extra(ModuleNotFoundError("no name")) is None
    assert set(EXTRA_OF.values()) == {"pipeline", "llm", "gym", "sweep"}


# Runs the CLI with pandera made unimportable, as in a base install.
WITHOUT_PANDERA = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pandera":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
sys.argv = ["autovend", "check", sys.argv[1]]
from autovend.cli import main
main()
"""


def test_a_pipeline_command_without_the_pipeline_extra_exits_with_the_fix(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_PANDERA, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "this command needs pandera" in proc.stderr and "pip install 'autovend[pipeline]'" in proc.stderr
