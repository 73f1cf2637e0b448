"""The output-folder rule of `world ship` and `export-world`: neither replaces what the other (or another world)
wrote without --force, and one folder has one writer at a time (`autovend.world.owner`, `autovend.runlock`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autovend.errors import OutputBusyError, OutputExistsError
from autovend.export.ship import ship_world
from autovend.runlock import hold_output_folder, output_lock_path
from autovend.world.bundle import read_manifest
from autovend.world.runcopy import write_world_copy
from autovend.world.toy import toy_world
from tests.world.test_bundle import export_paper, write_small_inputs


@pytest.fixture(scope="module")
def worlds(tmp_path_factory) -> tuple[Path, Path]:
    """Two exported bundles of two different worlds (toy worlds of seeds 0 and 1)."""
    folder = tmp_path_factory.mktemp("two")
    write_world_copy(toy_world(3, 12, seed=0, name="a"), folder / "a", "# a\n\nA toy world.\n")
    write_world_copy(toy_world(3, 12, seed=1, name="b"), folder / "b", "# b\n\nA toy world.\n")
    return folder / "a", folder / "b"


def _hash(folder: Path) -> str:
    return read_manifest(folder)["world_hash"]


def test_ship_refuses_to_replace_another_shipped_world_without_force(worlds, tmp_path):
    """`world ship b -o worlds/x` over the shipped world a succeeded (exit 0): now it is refused, a stays."""
    a, b = worlds
    out = tmp_path / "worlds" / "x"
    ship_world(a, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(OutputExistsError) as err:
        ship_world(b, out)
    message = str(err.value)
    assert f"output folder {out} holds the shipped world 'a' (world hash {_hash(a)[:12]}), not the world being " in (
        message
    )
    assert f"shipped 'b' (world hash {_hash(b)[:12]})" in message and "pass --force to replace it" in message
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    ship_world(a, out)  # shipping the same world again (say with more runs) replaces its own copy
    assert _hash(out) == _hash(a)
    ship_world(b, out, force=True)  # --force replaces the other world
    assert _hash(out) == _hash(b)


def test_export_world_refuses_to_replace_a_shipped_world(worlds, tmp_path):
    """export-world over worlds/NAME would drop the shipped validation and results; it needs --force now."""
    folder = tmp_path / "in"
    cal, src = write_small_inputs(folder)
    exported = tmp_path / "data" / "tiny20"
    export_paper(cal, src, exported)
    shipped = tmp_path / "worlds" / "tiny20"
    ship_world(exported, shipped)
    readme = (shipped / "README.md").read_bytes()
    with pytest.raises(OutputExistsError, match="holds the shipped world 'tiny20'.*export to data/worlds/NAME"):
        export_paper(cal, src, shipped)
    assert (shipped / "README.md").read_bytes() == readme
    export_paper(cal, src, exported)  # an exported bundle is replaced by export-world as before
    with pytest.raises(OutputExistsError, match="as `autovend export-world` wrote it, not a shipped copy"):
        ship_world(shipped, exported)  # and world ship does not replace what export-world wrote
    export_paper(cal, src, shipped, force=True)
    assert "validation" not in read_manifest(shipped)


def test_a_ship_to_a_folder_another_command_is_writing_stops_at_once(worlds, tmp_path):
    a, b = worlds
    out = tmp_path / "x"
    busy = rf"{out} is being written by process \d+ .*wait for it to end"
    with hold_output_folder(out, "autovend world ship"), pytest.raises(OutputBusyError, match=busy):
        ship_world(b, out)
    assert not out.exists()  # nothing was written
    ship_world(a, out)
    assert not output_lock_path(out).exists()  # the lock file beside the folder is gone after the command
    assert sorted(p.name for p in out.parent.iterdir()) == ["x"]


def test_two_ships_to_one_folder_at_once_one_exits_2(worlds, tmp_path):
    """Both exited 0 and the second silently replaced the first; now the one that finds the lock held stops.

    The first ship is held inside its lock (it waits for a file to appear) while the second starts.
    """
    a, b = worlds
    out, go = tmp_path / "x", tmp_path / "go"
    holder = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        import autovend.export.ship as ship
        real = ship._ship
        def slow(*args):
            while not Path({str(go)!r}).exists():
                time.sleep(0.05)
            return real(*args)
        ship._ship = slow
        ship.ship_world({str(a)!r}, {str(out)!r})
        """
    )
    first = subprocess.Popen([sys.executable, "-c", holder], stderr=subprocess.PIPE, text=True)
    lock = output_lock_path(out)
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run(
        [sys.executable, "-m", "autovend.cli", "world", "ship", str(b), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    go.write_text("")
    assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
    assert second.returncode == 2
    assert f"is being written by process {first.pid}" in " ".join(second.stderr.split())
    assert _hash(out) == _hash(a)  # the first ship's world, whole
