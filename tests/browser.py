"""Headless Chromium for tests that look at HTML pages: Debian's `chromium` driven by Playwright, offline.

`offline_page(path, profile_dir)` opens a local file in a fresh profile with every request that is not
a `file:` URL refused and recorded (`Visit.blocked`), and the page's uncaught errors recorded
(`Visit.errors`). The browser is found by `find_chromium` (AUTOVEND_CHROMIUM, then the usual paths);
where there is none, or Playwright is not installed, `require_browser` skips the test and says why.
Playwright only drives the browser: it never downloads one (`playwright install` is not used).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL_HINT = "install Debian's chromium (apt-get install -y chromium) and the dev extras (playwright)"


def find_chromium() -> str | None:
    """The Chromium executable: $AUTOVEND_CHROMIUM, else the first of CANDIDATES or `chromium` on PATH."""
    given = os.environ.get("AUTOVEND_CHROMIUM")
    if given:
        return given if Path(given).exists() else None
    for path in CANDIDATES:
        if Path(path).exists():
            return path
    return shutil.which("chromium")


def require_browser() -> str:
    """The Chromium path, or skip the test (no browser, or no Playwright) with the reason and the fix."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip(f"Playwright is not installed: {INSTALL_HINT}")
    exe = find_chromium()
    if exe is None:
        pytest.skip(f"no Chromium found (AUTOVEND_CHROMIUM, {', '.join(CANDIDATES)}, PATH): {INSTALL_HINT}")
    return exe


@dataclass
class Visit:
    """What happened while a page was open: requests refused (not file:), uncaught page errors, console errors."""

    page: Any
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)  # console.error messages (failed loads included)


@contextmanager
def open_page(
    url: str, allowed: str, profile_dir: str | Path, width: int, height: int, *, offline: bool
) -> Iterator[Visit]:
    """Open `url` in headless Chromium (fresh profile); requests not starting with `allowed` are refused and recorded.

    offline: the browser's network is off as well (for local files; a page served on loopback needs it on).
    """
    from playwright.sync_api import sync_playwright

    exe = require_browser()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile_dir),
            executable_path=exe,
            headless=True,
            args=LAUNCH_ARGS,
            viewport={"width": width, "height": height},
            offline=offline,
        )
        try:
            visit = Visit(page=None)

            def route(r: Any) -> None:
                if r.request.url.startswith(allowed):
                    r.continue_()
                else:
                    visit.blocked.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.on("pageerror", lambda exc: visit.errors.append(str(exc)))
            page.on("console", lambda m: visit.console_errors.append(m.text) if m.type == "error" else None)
            visit.page = page
            page.goto(url)
            yield visit
        finally:
            context.close()


@contextmanager
def offline_page(path: str | Path, profile_dir: str | Path, width: int = 1280, height: int = 900) -> Iterator[Visit]:
    """Open the local file `path` in headless Chromium (fresh profile in `profile_dir`) with the network off."""
    with open_page(Path(path).resolve().as_uri(), "file:", profile_dir, width, height, offline=True) as visit:
        yield visit


CANVAS_PIXELS = """
([id, colours, tol]) => {
  const canvases = [];
  (function walk(node) {
    if (!node) return;
    if (node.tagName === 'CANVAS') canvases.push(node);
    if (node.shadowRoot) walk(node.shadowRoot);
    for (const child of node.children || []) walk(child);
  })(document.getElementById(id));
  let drawn = 0, matching = 0;
  for (const c of canvases) {
    if (!c.width || !c.height) continue;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] === 0 || (d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245)) continue;
      drawn++;
      if ((colours || []).some(c => Math.abs(d[i] - c[0]) + Math.abs(d[i + 1] - c[1]) + Math.abs(d[i + 2] - c[2]) <= tol))
        matching++;
    }
  }
  return {canvases: canvases.length, drawn: drawn, matching: matching};
}
"""


def canvas_pixels(
    page: Any, element_id: str, colours: list[tuple[int, int, int]] | None = None, tol: int = 60
) -> dict[str, int]:
    """Canvases under the element (shadow roots included) and their painted pixels: {canvases, drawn, matching}.

    drawn: pixels neither transparent nor white (axes, labels and grid included); matching: those within
    `tol` (sum of the channel differences) of one of `colours`, e.g. the series' colours.
    """
    return page.evaluate(CANVAS_PIXELS, [element_id, [list(c) for c in colours or []], tol])


def wait_until_painted(
    page: Any,
    element_ids: list[str] | tuple[str, ...],
    colours: list[tuple[int, int, int]] | None = None,
    min_pixels: int = 1,
    timeout_ms: int = 60_000,
) -> None:
    """Wait until under every element at least `min_pixels` are painted (in one of `colours`, when given).

    Raises Playwright's TimeoutError when a chart never gets there.
    """
    key = "matching" if colours else "drawn"
    page.wait_for_function(
        f"([ids, colours, least]) => ids.every(id => ({CANVAS_PIXELS})([id, colours, 60]).{key} >= least)",
        arg=[list(element_ids), [list(c) for c in colours or []], min_pixels],
        timeout=timeout_ms,
    )
