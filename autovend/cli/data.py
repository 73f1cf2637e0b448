"""Commands on raw sources: synth (the embedded synthetic operator); check and adapt register elsewhere."""

from __future__ import annotations
