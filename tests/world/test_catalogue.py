"""Finding worlds: `--world` takes a folder or a world's name (./worlds/NAME first, then the shipped copy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autovend.errors import BundleError
from autovend.world import names
from autovend.world.catalogue import CHECKOUT, PACKAGED, find_worlds, resolve_world, world_names

ROOT = Path(__file__).resolve().parents[2]


def _bundle(folder: Path) -> Path:
    """A folder that resolution accepts as a bundle (it only looks for the manifest)."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"name": folder.name}), encoding="utf-8")
    return folder


@pytest.fixture
def places(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """An empty working folder and a shipped-worlds folder holding `alpha` and `beta`."""
    shipped = tmp_path / "site" / "_worlds"
    _bundle(shipped / "alpha")
    _bundle(shipped / "beta")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(names, "SHIPPED", shipped)
    return work, shipped


def test_a_name_finds_the_shipped_world_from_any_folder(places):
    work, shipped = places
    assert resolve_world("alpha") == shipped / "alpha"
    assert resolve_world(Path("beta")) == shipped / "beta"


def test_the_working_folders_worlds_come_first(places):
    work, shipped = places
    _bundle(work / "worlds" / "alpha")
    assert resolve_world("alpha") == Path("worlds") / "alpha"
    assert resolve_world("beta") == shipped / "beta"
    assert world_names() == ["alpha", "beta"]


def test_an_existing_path_is_used_as_given(places):
    work, _ = places
    own = _bundle(work / "mine" / "alpha")
    assert resolve_world("mine/alpha") == Path("mine/alpha")
    assert resolve_world(own) == own


def test_the_docs_worlds_slash_name_finds_the_world_outside_a_checkout(places):
    work, shipped = places  # no ./worlds here: worlds/alpha is read as the name alpha
    assert resolve_world("worlds/alpha") == shipped / "alpha"


@pytest.mark.parametrize("given", ["gamma", "worlds/gamma", "mine/alpha"])
def test_anything_else_is_refused_with_the_names_that_work(places, given):
    with pytest.raises(BundleError, match=r"\(names: alpha, beta\); pass the folder of a world bundle"):
        resolve_world(given)


def test_a_folder_without_a_manifest_is_not_a_world(places):
    work, _ = places
    (work / "worlds" / "delta").mkdir(parents=True)
    with pytest.raises(BundleError, match="'delta' does not exist"):
        resolve_world("delta")


def test_a_checkout_ships_its_worlds_folder():
    # an editable install has no packaged copy: the shipped worlds are the checkout's worlds/
    assert not PACKAGED.is_dir() and CHECKOUT == ROOT / "worlds"
    assert names.SHIPPED == CHECKOUT
    bundles = sorted(p.parent.name for p in CHECKOUT.glob("*/manifest.json"))
    assert bundles and world_names([CHECKOUT]) == bundles


def test_world_list_finds_the_shipped_worlds_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = {w.name: w for w in find_worlds()}
    assert "cn20" in found and found["cn20"].path == names.SHIPPED / "cn20"
    assert found["cn20"].state == "verified" and found["cn20"].devices == 20
    assert resolve_world("cn20") == names.SHIPPED / "cn20"
