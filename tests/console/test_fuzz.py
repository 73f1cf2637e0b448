"""Fuzzing the console's HTTP door: any request, any headers, any body, over real HTTP to the served play app.

Properties, for every example: never a 500; a request that is refused (any status but 200) or a tool call that is
refused (X-AutoVend-Tool-Ok: false) changes nothing (tests/fuzz.py `fingerprint`), and a request refused at the
door (any 4xx) adds nothing to the trajectory; the state stays readable (GET /api/state answers 200).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autovend.console.episode import PlayEpisode
from autovend.console.play import play_app
from autovend.console.server import running
from autovend.env.boundary import _episode  # a job runs inside the agent's turn: the tools' own access

from ..fuzz import QUIET_TOOLS, fingerprint, fuzz, json_texts, text
from .conftest import small_world
from .test_security import csrf, request


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    episode = PlayEpisode(small_world(), 1, tmp_path_factory.mktemp("fuzz") / "run", days=2).start()
    try:
        with running(play_app(episode)) as url:
            yield url, episode, csrf(url)
    finally:
        episode.close()


def _state(episode: PlayEpisode) -> tuple[Any, ...]:
    return episode._submit(lambda s: (fingerprint(_episode(s).sim, s.notebook), s.counters["seq"]))


paths = st.one_of(
    st.sampled_from(QUIET_TOOLS).map(lambda n: f"/api/tools/{n}"),
    st.sampled_from(["/", "/api/state", "/fragment/state", "/api/tools", "/api/csrf", "/report", "/api/tools/"]),
    text.map(lambda t: "/api/tools/" + quote(t[:200], safe="", errors="surrogatepass")),
)
bodies = st.one_of(
    json_texts.map(lambda t: t.encode("utf-8", "surrogatepass")),  # a lone surrogate as bytes: not UTF-8
    st.binary(max_size=40),
)
requests = st.fixed_dictionaries(
    {
        "method": st.sampled_from(["POST"] * 6 + ["GET", "PUT", "DELETE", "OPTIONS"]),
        "path": paths,
        "body": bodies,
        "content_type": st.sampled_from(["application/json"] * 4 + ["text/plain", "application/json; charset=latin-1"]),
        "csrf": st.sampled_from(["right"] * 4 + ["missing", "wrong"]),
        "host": st.sampled_from([None] * 6 + ["evil.example", "localhost", "[::1]:1", ""]),
        "origin": st.sampled_from([None] * 4 + ["own", "http://evil.example", "null"]),
    }
)


@pytest.mark.slow
@fuzz(300)
@given(req=requests)
def test_fuzz_no_request_gives_500_and_a_refused_one_changes_nothing(console, req):
    url, episode, token = console
    headers = {"Content-Type": req["content_type"]}
    if req["csrf"] != "missing":
        headers["X-AutoVend-CSRF"] = token if req["csrf"] == "right" else "wrong"
    if req["host"] is not None:
        headers["Host"] = req["host"]
    if req["origin"] is not None:
        headers["Origin"] = url.rstrip("/") if req["origin"] == "own" else req["origin"]
    before, seq = _state(episode)
    status, got, _ = request(url, req["method"], req["path"], req["body"], headers)
    after, seq_after = _state(episode)
    assert status < 500
    tool_ok = got.get("x-autovend-tool-ok")
    if status != 200 or tool_ok == "false":
        assert after == before
    if 400 <= status < 500:
        assert seq_after == seq
    assert request(url, "GET", "/api/state")[0] == 200
