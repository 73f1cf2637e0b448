"""Identifiers made from an export's text: slugs and stable, collision-free sku ids from product names."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable


def slugify(text: str) -> str:
    """Lower-case ASCII words joined by single dashes: 'Brunswick Sq Mall' -> 'brunswick-sq-mall'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def sku_ids(names: Iterable[str], prefix: str) -> dict[str, str]:
    """A stable, collision-free sku_id per distinct product name.

    The id is ``prefix + slug(name)``. Names whose slugs collide (or are empty) get ``'--'`` plus the
    shortest prefix (8 hex digits or more) of the SHA-256 of the exact name that separates them. A slug
    never contains ``'--'``, so a suffixed id cannot equal a plain one: distinct names get distinct ids.
    """
    by_slug: dict[str, list[str]] = {}
    for name in sorted(set(names)):
        by_slug.setdefault(slugify(name), []).append(name)
    ids: dict[str, str] = {}
    for slug, group in by_slug.items():
        if slug and len(group) == 1:
            ids[group[0]] = prefix + slug
            continue
        digests = {name: hashlib.sha256(name.encode("utf-8")).hexdigest() for name in group}
        width = 8
        while len({digests[name][:width] for name in group}) < len(group):
            width += 4
        for name in group:
            ids[name] = f"{prefix}{slug or 'unnamed'}--{digests[name][:width]}"
    return ids
