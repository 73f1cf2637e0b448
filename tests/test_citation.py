"""LICENSE and CITATION.cff: present, and saying what pyproject.toml says (licence, version, title)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_license_file_is_the_licence_pyproject_names():
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]  # an SPDX expression
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(text.splitlines()) == 202  # the whole licence, appendix included


def test_citation_cff_has_the_required_keys_and_the_project_s_licence_and_version():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):  # required by the format
        assert cff[key], key
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    assert cff["license"] == PROJECT["license"]
    assert cff["version"] == PROJECT["version"]
    assert cff["type"] == "software"
