"""Worlds installed by name: `autovend world install DIR` from an empty folder, then every door finds it by name.

The user's data folder is a temporary one (XDG_DATA_HOME; AUTOVEND_WORLDS_PATH unset), the working folder is
empty: the name must be found from there by `autovend run --world`, `world list`, `world info`, the MCP server,
the console's command, `VendingEnv`, gymnasium's make and make_vec, and a sweep spec. A taken name is refused
without --force; AUTOVEND_WORLDS_PATH overrides the folder (a search path, installs into its first entry).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.env import VendingEnv
from autovend.errors import BundleError
from autovend.mcp.server import build_server
from autovend.world import names
from autovend.world.bundle import make_manifest, verify_bundle, world_files, write_bundle
from autovend.world.catalogue import install_world
from autovend.world.model import Economics
from autovend.world.toy import toy_world


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """A toy world exported as a bundle named coffee1 (3 machines, 12 products, 10 days)."""
    world = toy_world(3, 12, seed=0, name="coffee1", economics=Economics(horizon_days=10))
    files = world_files(world)
    files["README.md"] = b"# coffee1, a toy world to install\n"
    out = tmp_path_factory.mktemp("exported") / "coffee1"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


@pytest.fixture
def empty_folder(tmp_path, monkeypatch) -> Path:
    """An empty working folder; the user's data folder under tmp_path/data."""
    monkeypatch.delenv(names.WORLDS_PATH_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    work = tmp_path / "empty"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_install_then_every_door_finds_the_world_by_name(bundle, empty_folder, tmp_path):
    with pytest.raises(BundleError, match="'coffee1' does not exist.*autovend world install DIR"):
        names.resolve_world("coffee1")
    out = _cli("world", "install", str(bundle))
    installed = tmp_path / "data" / "autovend" / "worlds" / "coffee1"
    assert "installed world coffee1 (verified)" in out and f"in {installed}" in out
    assert verify_bundle(installed)["world_hash"] == verify_bundle(bundle)["world_hash"]
    assert sorted(p.name for p in installed.iterdir()) == sorted(p.name for p in bundle.iterdir())
    assert list(empty_folder.iterdir()) == []  # nothing written where the command ran

    listing = _cli("world", "list")
    assert "coffee1" in listing and f"in {installed.parent}: coffee1" in listing
    assert "cn20" in listing  # the shipped ones are still listed
    assert "coffee1" in _cli("world", "info", "coffee1")
    run = _cli("run", "--world", "coffee1", "--days", "2", "--out", "r")
    assert "2 days" in run and json.loads((empty_folder / "r" / "run.json").read_text())["world_name"] == "coffee1"

    assert VendingEnv("coffee1").days == 10
    server = build_server("coffee1", seed=1)
    server.close()
    import gymnasium

    import autovend.gym  # noqa: F401  (registers AutoVend-v0)

    env = gymnasium.make("AutoVend-v0", world="coffee1")
    env.close()
    vec = gymnasium.make_vec("AutoVend-v0", num_envs=2, vectorization_mode="vector_entry_point", world="coffee1")
    vec.close()
    from autovend.sweep.engine import world_facts
    from autovend.sweep.spec import load_spec

    (empty_folder / "spec.yaml").write_text("worlds: [coffee1]\nagents: [baseline]\nseeds: [1]\ndays: 2\n")
    facts = world_facts(load_spec(empty_folder / "spec.yaml"))
    assert [Path(f.path) for f in facts.values()] == [installed.resolve()]


def test_a_taken_name_is_refused_without_force(bundle, empty_folder, tmp_path):
    install_world(bundle)
    with pytest.raises(BundleError, match=r"the name 'coffee1' is taken by an installed world at .*--force"):
        install_world(bundle)
    with pytest.raises(BundleError, match="taken by a world shipped with AutoVend"):
        install_world(bundle, "cn20")
    again = install_world(bundle, force=True)
    assert again == tmp_path / "data" / "autovend" / "worlds" / "coffee1"
    shadow = install_world(bundle, "cn20", force=True)  # the user's own cn20 is found first from now on
    assert names.resolve_world("cn20") == shadow
    with pytest.raises(BundleError, match="cannot name a world"):
        install_world(bundle, "../up")
    with pytest.raises(BundleError, match="not a world bundle"):
        install_world(empty_folder)
    result = CliRunner().invoke(app, ["world", "install", str(bundle)])
    assert result.exit_code != 0 and "--force" in str(result.exception) + result.output


def test_the_worlds_path_overrides_the_data_folder(bundle, empty_folder, tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    monkeypatch.setenv(names.WORLDS_PATH_ENV, f"{first}:{second}")
    assert install_world(bundle, "mine") == first / "mine"
    monkeypatch.setenv(names.WORLDS_PATH_ENV, str(second))
    install_world(bundle, "theirs")
    monkeypatch.setenv(names.WORLDS_PATH_ENV, f"{first}:{second}")
    assert names.resolve_world("mine") == first / "mine" and names.resolve_world("theirs") == second / "theirs"
    assert not (tmp_path / "data").exists()
