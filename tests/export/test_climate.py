"""The export's climate: named climates of the world's country only, the source's own weather, a normals file.

A params file copied from another source must not give a world its climate silently: a named climate of another
country is refused in words, as is an unknown one (no raw pydantic error); `climate: source` computes normals
from the source's weather table; `climate: FILE.csv` reads them from a file.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from autovend.data.weather import SHANGHAI, daily_weather
from autovend.errors import ConfigError, ExportError
from autovend.export.climate import normals_from_weather, read_normals, resolve_climate
from autovend.export.params import load_export_params


def test_an_unknown_climate_is_refused_in_words(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("export:\n  climate: Kyiv\n  capacity: 0\n")
    with pytest.raises(ConfigError) as caught:
        load_export_params(path)
    text = str(caught.value)
    assert "export.climate: unknown climate 'Kyiv': give a named climate (NewYork (US), Shanghai (CN))" in text
    assert "key export.capacity: Input should be greater than or equal to 1 (got 0); change the value" in text
    assert "pydantic" not in text and "validation error" not in text and "For further information" not in text


def test_a_named_climate_of_another_country_is_refused() -> None:
    assert resolve_climate("Shanghai", "CN", None) is SHANGHAI
    with pytest.raises(ExportError, match=r"'Shanghai', a climate of CN, but the world's country is UA .* copied"):
        resolve_climate("Shanghai", "UA", None)
    with pytest.raises(ExportError, match="is no known climate"):
        resolve_climate("Atlantis", "UA", None)
    with pytest.raises(ExportError, match="the source has no weather table"):
        resolve_climate("source", "UA", None)


def test_normals_from_the_sources_weather_recover_the_climate_it_was_drawn_from() -> None:
    weather = daily_weather(dt.date(2000, 1, 1), dt.date(2019, 12, 31), seed=5, normals=SHANGHAI)  # twenty years
    got = normals_from_weather(weather, "source-CN")
    for month in range(12):  # 20 draws of a month: its mean within about three standard errors
        assert abs(got.t_max_c[month] - SHANGHAI.t_max_c[month]) <= 1.0, month
        assert abs(got.wet_days[month] - SHANGHAI.wet_days[month]) <= 2.0, month  # wet spells persist: noisier
        assert abs(got.precip_mm[month] / SHANGHAI.precip_mm[month] - 1) <= 0.25, month
    few = weather[weather["date"] < "2000-03-01"]
    with pytest.raises(ExportError, match="gives 2 months with 10 or more days"):
        normals_from_weather(few, "x")


def test_a_normals_file(tmp_path: Path) -> None:
    path = tmp_path / "kyiv.csv"
    path.write_text("month,t_max_c,precip_mm,wet_days\n" + "".join(f"{m},{m}.5,40,8\n" for m in range(1, 13)))
    normals = resolve_climate("kyiv.csv", "UA", None, tmp_path)
    assert normals.name == "kyiv" and normals.t_max_c[0] == 1.5 and normals.precip_mm == (40.0,) * 12
    path.write_text("month,t_max_c,precip_mm\n1,2,3\n")
    with pytest.raises(ExportError, match=r"lacks the columns \['wet_days'\]"):
        read_normals(path)
    path.write_text("month,t_max_c,precip_mm,wet_days\n" + "".join(f"{m},1,40,8\n" for m in range(1, 12)))
    with pytest.raises(ExportError, match="one row per month, month 1 to 12"):
        read_normals(path)
