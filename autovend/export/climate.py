"""Climate normals a world's seeded weather is drawn from (`autovend.data.weather.daily_weather`).

A world's weather is synthetic: a seeded series around monthly normals, so that the agent's forecasts
and the environment multipliers behave as in the source's climate without shipping a weather record.
The normals are borrowed from public climatologies (rounded 1991-2020 monthly means, approximate), named
by the export's `climate` setting.
"""

from __future__ import annotations

from autovend.data.weather import SHANGHAI, ClimateNormals

# New York City (Central Park), for sources in the New York - New Jersey area.
NEW_YORK = ClimateNormals(
    name="NewYork",
    t_max_c=(4.2, 5.7, 9.9, 16.6, 21.9, 26.5, 29.4, 28.5, 24.6, 18.1, 12.2, 6.8),
    precip_mm=(92, 81, 109, 104, 101, 115, 117, 116, 109, 111, 91, 111),
    wet_days=(8, 8, 9, 9, 9, 9, 8, 8, 7, 8, 8, 9),
)
CLIMATES: dict[str, ClimateNormals] = {c.name: c for c in (SHANGHAI, NEW_YORK)}
