"""Every text a person or an agent reads names the world's money, never another currency.

Two worlds that are not in CNY: the shipped nj5 (USD) and a toy world in UAH (a bundle on disk). For each,
every text surface is rendered: the tool definitions and schemas as an MCP client lists them, the system and
daily prompts and a refusal, an 8-day run's report.md, report.html and figures (their axis labels and titles),
`autovend run`'s and `autovend compare`'s terminal output and files, `autovend replay --summary` and
`autovend world info`, the console's play pages (before and after the end) and its replay page, and the
leaderboard's Markdown and HTML. Each must name the world's currency and never CNY, fen, yuan, RMB or ¥.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import matplotlib.figure
import pytest
from mcp.client import Client
from typer.testing import CliRunner

from autovend.cli import app
from autovend.console.episode import PlayEpisode
from autovend.console.play import play_app
from autovend.console.replay import replay_app
from autovend.console.server import running
from autovend.currency import minor_unit
from autovend.env import VendingEnv
from autovend.evaluation import figures
from autovend.evaluation.rundata import RunData
from autovend.mcp.server import build_server
from autovend.sim.simulator import Simulator
from autovend.sweep.leaderboard import leaderboard_markdown
from autovend.sweep.leaderboard_html import leaderboard_html
from autovend.sweep.results import read_result
from autovend.sweep.spec import AgentEntry
from autovend.sweep.tasks import RunTask
from autovend.world.bundle import load_world, make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world

from .console.conftest import post_json

ROOT = Path(__file__).resolve().parents[1]
OTHER_MONEY = re.compile(r"CNY|RMB|¥|\b[Yy]uan\b|\bfen\b")
DAYS = 8


def other_money(text: str) -> list[str]:
    """Each mention of another currency, with 40 characters around it."""
    return [text[max(0, m.start() - 40) : m.end() + 40] for m in OTHER_MONEY.finditer(text)]


@pytest.fixture(scope="module", params=["nj5", "uah"])
def world_path(request, tmp_path_factory) -> Path:
    if request.param == "nj5":
        return ROOT / "worlds" / "nj5"
    world = toy_world(4, 20, seed=0, name="toy-uah", economics=Economics(currency="UAH", horizon_days=30))
    files = world_files(world)
    files["README.md"] = b"# a toy world in hryvnias\n"
    out = tmp_path_factory.mktemp("worlds") / "toy-uah"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


@pytest.fixture(scope="module")
def figure_texts() -> Iterator[list[str]]:
    """The titles, axis labels and legends of every figure the evaluation saves while the fixture is active."""
    texts: list[str] = []
    real = figures.save_png

    def record(fig: matplotlib.figure.Figure, path: Any) -> Any:
        texts.extend(t.get_text() for t in fig.findobj(matplotlib.text.Text))
        return real(fig, path)

    figures.save_png = record  # type: ignore[assignment]
    try:
        yield texts
    finally:
        figures.save_png = real  # type: ignore[assignment]


@pytest.fixture(scope="module")
def runs(world_path: Path, figure_texts: list[str], tmp_path_factory) -> dict[str, Any]:
    """Two 8-day baseline runs (seeds 1, 2) through `autovend run`, compared by `autovend compare`."""
    base = tmp_path_factory.mktemp("runs")
    out: dict[str, Any] = {"dirs": [], "cli": []}
    for seed in (1, 2):
        run_dir = base / f"baseline-s{seed}"
        args = ["run", "--world", str(world_path), "--agent", "baseline", "--seed", str(seed)]
        result = CliRunner().invoke(app, [*args, "--days", str(DAYS), "--out", str(run_dir)])
        assert result.exit_code == 0, result.output
        out["dirs"].append(run_dir)
        out["cli"].append(result.output)
    args = ["compare", *(str(d) for d in out["dirs"]), "--out", str(base / "compare"), "--no-references"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out["cli"].append(result.output)
    for args in (["replay", str(out["dirs"][0]), "--summary"], ["world", "info", str(world_path)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        out["cli"].append(result.output)
    out["compare"] = base / "compare"
    out["figures"] = list(figure_texts)
    return out


def _currency(world_path: Path) -> str:
    return load_world(world_path).economics.currency


def test_the_tools_as_an_mcp_client_lists_them_and_the_prompts(world_path: Path, tmp_path: Path) -> None:
    server = build_server(world_path, seed=1, trajectory_path=tmp_path / "t.jsonl")

    async def listing() -> tuple[list[Any], Any, str]:
        async with Client(server.server) as c:
            tools = (await c.list_tools()).tools
            refused = await c.call_tool("adjust_price", {"items": [{"device_id": "x", "sku_id": "y", "price": 1e400}]})
            prompts = [await c.get_prompt(name) for name in ("system", "daily")]
            return tools, refused, json.dumps([p.model_dump(mode="json") for p in prompts], ensure_ascii=False)

    tools, refused, mcp_prompts = anyio.run(listing)
    server.close()
    text = json.dumps([t.model_dump(mode="json") for t in tools], ensure_ascii=False)
    cur = _currency(world_path)
    assert len(tools) == 18 and other_money(text) == [] and other_money(mcp_prompts) == []
    assert text.count(f"{cur}, rounded to the {minor_unit(cur)}.") >= 10  # every money field of the schemas
    assert f"New price in {cur}" in text and f"money is {cur}" in text
    world = load_world(world_path)
    env = VendingEnv(world)
    env.reset(seed=1)
    prompts = env.system_prompt() + "\n" + env.daily_prompt()
    assert other_money(prompts) == [] and f"Money is counted in {cur}, to the {minor_unit(cur)}." in prompts
    item = {"device_id": str(world.machines["device_id"][0]), "sku_id": str(world.catalog["sku_id"][0])}
    env.close()
    refusals = Simulator(world, seed=1).adjust_price([item, {**item, "price": "cheap"}]).rejected
    assert [r.message for r in refusals] == [
        f"the item has no price; give it in {cur} as a number, e.g. 3.5",
        f"price must be a finite number in {cur}, got 'cheap'",
    ]
    assert other_money(refused.content[0].text) == []


def test_the_run_reports_figures_and_terminal_output(world_path: Path, runs: dict[str, Any]) -> None:
    cur = _currency(world_path)
    texts = {
        "report.md": (runs["dirs"][0] / "report.md").read_text(encoding="utf-8"),
        "report.html": (runs["dirs"][0] / "report.html").read_text(encoding="utf-8"),
        "comparison.md": (runs["compare"] / "comparison.md").read_text(encoding="utf-8"),
        "comparison report.html": (runs["compare"] / "report.html").read_text(encoding="utf-8"),
        "terminal": "\n".join(runs["cli"]),
        "figures": "\n".join(runs["figures"]),
    }
    found = {name: other_money(text) for name, text in texts.items() if other_money(text)}
    assert found == {}
    assert f"Start cash {load_world(world_path).economics.start_cash:,.2f} {cur}" in texts["report.md"]
    assert "| Net assets | " in texts["report.md"] and f"| thousand {cur} |" in texts["report.md"]
    assert f'<span class="unit">{cur}</span>' in texts["report.html"]
    assert f"Net assets (thousand {cur})" in texts["comparison.md"]
    assert "final net assets" in texts["terminal"] and f" {cur} (cash " in texts["terminal"]
    assert f"net assets (thousand {cur})" in texts["figures"] and f"{cur} per day" in texts["figures"]


def test_the_leaderboard(world_path: Path, runs: dict[str, Any], tmp_path: Path) -> None:
    cur = _currency(world_path)
    rows = []
    for d in runs["dirs"]:
        task = RunTask("w", str(world_path), "", AgentEntry(agent="baseline"), 1, DAYS, str(d))
        row = read_result(task, d.parent)
        assert row is not None and row.currency == cur
        rows.append(row)
    md, html = leaderboard_markdown(rows), leaderboard_html(rows, tmp_path)
    assert other_money(md) == [] and other_money(html) == []
    assert f"Net assets (thousand {cur})" in md and f"Net assets (thousand {cur})" in html


def test_the_console_pages(world_path: Path, runs: dict[str, Any], tmp_path: Path) -> None:
    cur = _currency(world_path)
    episode = PlayEpisode(load_world(world_path), 1, tmp_path / "play", days=1).start()
    pages = []
    try:
        with running(play_app(episode)) as url:
            pages.append(urllib.request.urlopen(url).read().decode())
            pages.append(urllib.request.urlopen(url + "api/tools").read().decode())
            status, _, _ = post_json(url + "api/tools/end_day", {})
            assert status == 200
            pages.append(urllib.request.urlopen(url).read().decode())
            pages.append(urllib.request.urlopen(url + "report").read().decode())
    finally:
        episode.close()
    with running(replay_app([RunData.load(d) for d in runs["dirs"]])) as url:
        pages.append(urllib.request.urlopen(url).read().decode())
    found = [other_money(p) for p in pages]
    assert found == [[]] * len(pages)
    assert f"</b> {cur} · cash" in pages[0]  # the header's net assets
    assert "The episode is over" in pages[2] and f"thousand {cur}" in pages[2]
    assert f"by day ({cur})" in pages[4]
