"""Prompts: the facts of Appendix A in our own words, filled in from the world's settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autovend.tools.prompts import DAILY_TEMPLATE, prompt_facts, system_prompt
from autovend.tools.registry import TOOLS
from autovend.world.model import Economics
from autovend.world.toy import toy_world

PAPER = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_2e4a8a2ad9c83154.txt"


@pytest.fixture(scope="module")
def paper_world():
    return toy_world(20, 30, seed=0)


def test_system_prompt_states_the_rules(paper_world):
    text = system_prompt(paper_world)
    for fact in (
        "20 smart vending machines",
        "180-day run",
        "40,000 CNY",
        "catalog of 30 SKUs",
        "promised in 3 days",
        "from 0.50 to 2.00 times",
        "costs 0.03 a day for each unit of volume",
        "fixed fee of 80",
        "costs 35 for that day",
        "additional 1,000 fine",
        "at most 6,000 characters",
        "Shanghai, CN (time zone Asia/Shanghai)",
        "shelf_life_days",
        "Cash may go below zero",
        "call end_day",
    ):
        assert fact in text, fact
    for section in (
        "Goal",
        "Where you start",
        "How goods move",
        "Prices",
        "Costs",
        "Shelf life",
        "Money",
        "Environment",
        "Demand",
        "Memory",
        "Working alone",
    ):
        assert f"## {section}\n" in text


def test_numbers_follow_the_world():
    eco = Economics(visit_fee=50.0, memory_limit_chars=4000, start_cash=25_000.0, horizon_days=90)
    text = system_prompt(toy_world(4, 10, seed=0, economics=eco))
    assert "4 smart vending machines over a 90-day run, with 25,000 CNY" in text
    assert "costs 50 for that day" in text and "at most 4,000 characters" in text
    assert "fixed fee of 16" in text  # 4 machines x 4.0
    assert prompt_facts(toy_world(4, 10, seed=0, economics=eco))["n_skus"] == "10"


def _shingles(text: str, n: int) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


@pytest.mark.skipif(not PAPER.exists(), reason="needs the text of the AutoVend paper, which is not in the repository")
def test_prompts_and_descriptions_are_our_own_words(paper_world):
    paper = PAPER.read_text(encoding="utf-8")
    appendix = paper[paper.index("## Appendix A") : paper.index("## Appendix C")]
    ours = system_prompt(paper_world) + "\n" + DAILY_TEMPLATE
    assert _shingles(ours, 7) & _shingles(appendix, 7) == set()
    # tool descriptions may repeat parameter lists, but no run of 7 other words
    descriptions = " ".join(re.sub(r"\[\{\{.*?\}\}\]", " ", t.summary) for t in TOOLS)
    shared = _shingles(descriptions, 7) & _shingles(appendix, 7)
    assert {s for s in shared if not s.startswith(("category l1", "l1 category"))} == set()


def test_daily_template_shape():
    first, *_ = DAILY_TEMPLATE.split("\n")
    assert first == "Day {day} of {horizon} — {weekday}, {date}."
    assert "{observation}" in DAILY_TEMPLATE and DAILY_TEMPLATE.rstrip().endswith("today's work.")
