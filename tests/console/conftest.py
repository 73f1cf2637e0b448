"""Worlds, runs, a console server in a subprocess and a Chromium page on it, for the console tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from autovend.agents.baseline import BaselineAgent, BaselineConfig
from autovend.console.server import free_port
from autovend.runner import run_episode
from autovend.world.bundle import make_manifest, world_files, write_bundle
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

from ..browser import Visit, open_page

ROOT = Path(__file__).resolve().parents[2]
DAYS = 10
START_TIMEOUT_S = 120.0


def small_world() -> World:
    """3 machines, 12 products, a 5-day horizon."""
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=5))


@pytest.fixture(scope="session")
def small_bundle(tmp_path_factory) -> Path:
    """`small_world()` exported as a bundle (what `--world` takes)."""
    world = small_world()
    files = world_files(world)
    files["README.md"] = b"# toy world for the console tests\n"
    out = tmp_path_factory.mktemp("worlds") / "toy3"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


@pytest.fixture(scope="session")
def baseline_runs(tmp_path_factory) -> list[Path]:
    """Two evaluated 10-day baseline runs (seeds 1 and 2) on a 4-machine toy world; shelves are stocked on day 6."""
    world = toy_world(4, 30, seed=0, economics=Economics(horizon_days=DAYS))
    base = tmp_path_factory.mktemp("console-runs")
    dirs = []
    for seed in (1, 2):
        agent = BaselineAgent(BaselineConfig(starter_skus=12, n_skus=10), seed=seed)
        run_episode(world, agent, seed, out_dir=base / f"baseline-s{seed}", checkpoint="off")
        dirs.append(base / f"baseline-s{seed}")
    return dirs


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def csrf_token(url: str) -> str:
    """The console's CSRF token (`GET /api/csrf` beside the tool URL `url`)."""
    base = url.split("/api/")[0].rstrip("/") + "/"
    return get_json(base + "api/csrf")["csrf_token"]


def post_raw(url: str, data: bytes, headers: dict[str, str]) -> tuple[int, Any, Any]:
    """POST `data` with `headers`; (status, headers, decoded JSON body) whatever the status."""
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.loads(exc.read())


def post_json(url: str, body: Any, content_type: str = "application/json") -> tuple[int, Any, Any]:
    """POST `body` as JSON with the console's CSRF token; (status, headers, decoded body) whatever the status."""
    headers = {"Content-Type": content_type, "X-AutoVend-CSRF": csrf_token(url)}
    return post_raw(url, json.dumps(body).encode(), headers)


@contextmanager
def console_process(*args: str) -> Iterator[str]:
    """`autovend console ARGS --port P` in a subprocess; yields its base URL once /api/state or / answers.

    Stopped with SIGINT (Ctrl-C), as a person stops it.
    """
    port = free_port()
    cmd = [sys.executable, "-m", "autovend.cli", "console", *args, "--port", str(port)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"autovend console exited with {proc.returncode}: {proc.stdout.read()}")
            try:
                urllib.request.urlopen(url, timeout=5).close()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    raise AssertionError("autovend console did not answer") from None
                time.sleep(0.2)
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()


@contextmanager
def browser_page(url: str, profile_dir: Path, width: int = 1400, height: int = 1000) -> Iterator[Visit]:
    """`url` in headless Chromium; requests to anything but the console's own server are refused and recorded."""
    parts = urllib.parse.urlsplit(url)
    server = f"{parts.scheme}://{parts.netloc}/"  # the page's own address may hold a query (?day=7)
    with open_page(url, server, profile_dir, width, height, offline=False) as visit:
        yield visit
