"""The console's gate and door: Host and Origin (DNS rebinding), the CSRF token, the bearer token, hostile bodies.

Requests go over real HTTP to the app served by uvicorn on 127.0.0.1 (http.client, which lets a test set any
Host header, as a rebinding page's browser does). Every refused request must leave the episode as it was: the
same day, no call in the trajectory.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from autovend.console.episode import PlayEpisode
from autovend.console.play import play_app
from autovend.console.replay import replay_app
from autovend.console.server import running
from autovend.env.boundary import _episode  # a job runs inside the agent's turn: the tools' own access
from autovend.evaluation.rundata import RunData, read_calls

from .conftest import small_world


def request(
    url: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """(status, headers, body as JSON or text) of one request; `headers` may set Host."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        kind = r.getheader("content-type", "")
        return r.status, dict(r.getheaders()), json.loads(data) if "json" in kind else data.decode("utf-8")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    episode = PlayEpisode(small_world(), 1, tmp_path_factory.mktemp("sec") / "run", days=2).start()
    try:
        with running(play_app(episode)) as url:
            yield url, episode
    finally:
        episode.close()


def csrf(url: str) -> str:
    return request(url, "GET", "/api/csrf")[2]["csrf_token"]


def untouched(episode: PlayEpisode) -> None:
    assert episode.state().day == 1 and read_calls(episode.run_dir / "trajectory.jsonl") == []


def post(url: str, path: str, body: bytes, **headers: str) -> tuple[int, dict[str, str], Any]:
    base = {"Content-Type": "application/json", "X-AutoVend-CSRF": csrf(url)}
    return request(url, "POST", path, body, {**base, **headers})


# ----------------------------------------------------------------------------------- Host and Origin


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8770", "127.0.0.1.evil.example", "", "a:b:c"])
def test_a_request_for_another_host_is_refused_421(served, host):
    url, episode = served
    status, _, body = post(url, "/api/tools/end_day", b"{}", Host=host)
    assert status == 421 and "only requests addressed to this machine" in body["error"]
    assert request(url, "GET", "/", headers={"Host": host})[0] == 421
    assert request(url, "GET", "/api/state", headers={"Host": host})[0] == 421
    untouched(episode)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:1", "[::1]:8770", "127.0.0.2:80"])
def test_loopback_names_are_this_machine(served, host):
    url, _ = served
    assert request(url, "GET", "/api/state", headers={"Host": host})[0] == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example:80", "file://"])
def test_a_request_from_another_sites_page_is_refused_403(served, origin):
    url, episode = served
    status, _, body = post(url, "/api/tools/end_day", b"{}", Origin=origin)
    assert status == 403 and "the page of another site" in body["error"]
    untouched(episode)


def test_the_consoles_own_origin_passes(served):
    url, episode = served
    status, headers, _ = post(url, "/api/tools/get_weather", b"{}", Origin=url.rstrip("/"))
    assert (status, headers["x-autovend-tool-ok"]) == (200, "true")
    assert [c["tool"] for c in read_calls(episode.run_dir / "trajectory.jsonl")][-1] == "get_weather"


# ----------------------------------------------------------------------------------- the CSRF token


@pytest.mark.parametrize("token", [None, "", "guess"])
def test_a_post_without_the_csrf_token_is_refused_and_changes_nothing(tmp_path, token):
    episode = PlayEpisode(small_world(), 1, tmp_path / "run", days=2).start()
    try:
        with running(play_app(episode)) as url:
            headers = {"Content-Type": "application/json"} | ({} if token is None else {"X-AutoVend-CSRF": token})
            status, _, body = request(url, "POST", "/api/tools/end_day", b"{}", headers)
            page = request(url, "GET", "/")[2]
            real = csrf(url)
        assert status == 403 and "needs the console's CSRF token in the header x-autovend-csrf" in body["error"]
        assert f'<meta name="autovend-csrf" content="{real}">' in page and len(real) == 43
        untouched(episode)
    finally:
        episode.close()


def test_each_console_has_its_own_csrf_token(served, tmp_path):
    url, _ = served
    other = PlayEpisode(small_world(), 1, tmp_path / "other", days=2).start()
    try:
        with running(play_app(other)) as other_url:
            assert csrf(other_url) != csrf(url)
            status, _, _ = request(
                other_url,
                "POST",
                "/api/tools/get_weather",
                b"{}",
                {"Content-Type": "application/json", "X-AutoVend-CSRF": csrf(url)},
            )
        assert status == 403
    finally:
        other.close()


# ----------------------------------------------------------------------------------- hostile bodies


@pytest.mark.parametrize(
    "body,status,message",
    [
        pytest.param(
            b'{"page": 1' + b"0" * 5000 + b"}", 400, "page in the body is an integer of 5,001 digits", id="int"
        ),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, 400, "the body: nested too deeply to read", id="deep"),
        pytest.param(
            b'{"a":' * 40 + b"1" + b"}" * 40, 400, "in the body is nested deeper than 32 levels", id="deep-40"
        ),
        pytest.param(b'{"price_min": NaN}', 400, "price_min in the body is NaN, which is not JSON", id="nan"),
        pytest.param(b'{"page": 1, "page": 2}', 400, "the body: the key 'page' is given twice", id="duplicate"),
        pytest.param(
            b'{"text": "\\ud800"}', 400, "text in the body holds a lone UTF-16 surrogate (U+D800)", id="surrogate"
        ),
        pytest.param(b'{"query": "\xff"}', 400, "the body: not UTF-8 text (byte 11 cannot be read", id="not-utf8"),
        pytest.param(b'{"q": "' + b"x" * 200_000 + b'"}', 413, "the body: over the limit of 131,072", id="args-200k"),
        pytest.param(b" " * 2_000_000, 413, "the body is over 1,048,576 bytes", id="body-2MB"),
        pytest.param(b'{"page": ', 400, "the body: not valid JSON (Expecting value at line 1 column 10", id="cut"),
    ],
)
def test_a_hostile_body_is_refused_with_a_clear_message_and_changes_nothing(served, body, status, message):
    url, episode = served
    got, _, answer = post(url, "/api/tools/write_memory", body)
    assert (got, message in answer["error"], answer["error"].endswith("Nothing was done")) == (status, True, True)
    assert len(answer["error"]) < 500
    assert request(url, "GET", "/")[0] == 200 and request(url, "GET", "/api/state")[0] == 200
    assert episode.state().snapshot.notebook == ""


# ----------------------------------------------------------------------------------- the bricked episode


def test_an_episode_whose_records_hold_a_lone_surrogate_still_shows_after_a_restart(tmp_path):
    run = tmp_path / "run"
    episode = PlayEpisode(small_world(), 1, run, days=3).start()
    try:  # what older AutoVend let through: a surrogate notebook (saved in the checkpoint) and a refused call
        episode._submit(lambda s: setattr(_episode(s).ctx, "notebook", "x\ud800y"))
        assert not episode.call("write_memory", {"text": "\udc00"}).ok
        assert episode.call("end_day", {}).ok
    finally:
        episode.close()
    again = PlayEpisode(small_world(), 1, run, days=3).start()
    try:
        assert again.call("query_sql", {"sql": "SELECT '\udfff'"}).ok is False  # refused, recorded with its escape
        with running(play_app(again)) as url:
            page = request(url, "GET", "/")
            state = request(url, "GET", "/api/state")
            fragment = request(url, "GET", "/fragment/state")
        assert (page[0], state[0], fragment[0]) == (200, 200, 200)
        assert state[2]["notebook"] == "x?y" and state[2]["day"] == 2
        assert "\\udfff" in fragment[2]  # today's refused call, its surrogate shown as its escape
    finally:
        again.close()
    tools = [(c["tool"], c["ok"]) for c in read_calls(run / "trajectory.jsonl")]
    assert tools == [("write_memory", False), ("end_day", True), ("query_sql", False)]


# ----------------------------------------------------------------------------------- the bearer token


def test_off_loopback_every_request_needs_the_token_and_a_browser_logs_in_once(served):
    _, episode = served
    app = play_app(episode, host="0.0.0.0", token="s3cret")  # the gate's rules for a console on 0.0.0.0
    with running(app) as url:
        bare = request(url, "GET", "/api/state")
        wrong = request(url, "GET", "/api/state", headers={"Authorization": "Bearer guess"})
        login = request(url, "GET", "/?token=s3cret&x=1")
        cookie = login[1]["set-cookie"].split(";")[0]
        page = request(url, "GET", "/", headers={"Cookie": cookie, "Host": "vending.lan:8770"})
        token = page[2].split('name="autovend-csrf" content="')[1].split('"')[0]
        json_headers = {"Cookie": cookie, "Content-Type": "application/json"}
        no_csrf = request(url, "POST", "/api/tools/get_weather", b"{}", json_headers)
        with_csrf = request(url, "POST", "/api/tools/get_weather", b"{}", {**json_headers, "X-AutoVend-CSRF": token})
        bearer = {"Authorization": "Bearer s3cret", "Content-Type": "application/json"}
        api = request(url, "POST", "/api/tools/get_weather", b"{}", bearer)
        foreign = request(url, "POST", "/api/tools/get_weather", b"{}", {**bearer, "Origin": "http://evil.example"})
    assert (bare[0], wrong[0]) == (401, 401) and "?token=<token>" in bare[2]["error"]
    assert (login[0], login[1]["location"]) == (303, "/?x=1")
    assert "HttpOnly" in login[1]["set-cookie"] and "SameSite=Strict" in login[1]["set-cookie"]
    assert page[0] == 200  # off loopback any Host passes: the token is the gate
    assert (no_csrf[0], with_csrf[0], api[0], foreign[0]) == (403, 200, 200, 403)


def test_a_console_off_loopback_without_a_token_cannot_be_built():
    from autovend.console.security import ConsoleGate

    with pytest.raises(ValueError, match="a console on 0.0.0.0 \\(not loopback\\) needs a bearer token"):
        ConsoleGate(None, host="0.0.0.0", csrf="x")


def test_the_replay_refuses_another_host_too(baseline_runs):
    with running(replay_app([RunData.load(baseline_runs[0])])) as url:
        assert request(url, "GET", "/api/runs", headers={"Host": "evil.example"})[0] == 421
        assert request(url, "GET", "/api/runs")[0] == 200
