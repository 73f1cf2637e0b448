"""The console's gate and door: Host and Origin (DNS rebinding), the CSRF token, the bearer token, hostile bodies.

Requests go over real HTTP to the app served by uvicorn on 127.0.0.1 (http.client, which lets a test set any
Host header, as a rebinding page's browser does). Every refused request must leave the episode as it was: the
same day, no call in the trajectory.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
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


def test_a_post_whose_body_is_cut_short_is_answered_408_and_changes_nothing(tmp_path):
    """Before, a POST declaring Content-Length 1000 that sent 10 bytes held its connection open forever."""
    episode = PlayEpisode(small_world(), 1, tmp_path / "run", days=2).start()
    try:
        with running(play_app(episode), read_timeout_s=1.0) as url:
            parts = urlsplit(url)
            head = (
                f"POST /api/tools/write_memory HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json"
                f"\r\nX-AutoVend-CSRF: {csrf(url)}\r\nContent-Length: 1000\r\n\r\n"
            )
            start = time.monotonic()
            with socket.create_connection((parts.hostname, parts.port)) as hanging:
                hanging.sendall(head.encode() + b'{"text": "')
                meanwhile = request(url, "GET", "/api/state")
                answered_at = time.monotonic() - start
                hanging.settimeout(6)
                answer = b""
                while chunk := hanging.recv(65536):  # until the console closes the connection
                    answer += chunk
            seconds = time.monotonic() - start
        status_line, _, body = answer.partition(b"\r\n\r\n")
        assert status_line.startswith(b"HTTP/1.1 408") and 0.95 <= seconds <= 4
        assert json.loads(body)["error"].startswith("the request did not arrive in full within 1 s")
        assert meanwhile[0] == 200 and answered_at < 1.0  # the page was served at once meanwhile
        untouched(episode)
    finally:
        episode.close()


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


@pytest.fixture(scope="module")
def off_loopback(served):
    """The gate's rules for a console on 0.0.0.0 with the token s3cret (served on 127.0.0.1)."""
    _, episode = served
    with running(play_app(episode, host="0.0.0.0", token="s3cret")) as url:
        yield url, episode


@pytest.mark.parametrize(
    "origin",
    [
        "http://vending.lan:8770.evil.example",  # contains the Host: a check loosened to "contains" lets it by
        "http://evil.example/vending.lan:8770",
        "http://vending.lan:8770@evil.example",
        "http://xvending.lan:8770",
        "http://vending.lan:877",
        "http://vending.lan",
        "null",
    ],
)
def test_off_loopback_an_origin_must_be_exactly_the_consoles_own(off_loopback, origin):
    url, episode = off_loopback
    calls = len(read_calls(episode.run_dir / "trajectory.jsonl"))
    headers = {"Authorization": "Bearer s3cret", "Content-Type": "application/json", "Host": "vending.lan:8770"}
    refused = request(url, "POST", "/api/tools/get_weather", b"{}", {**headers, "Origin": origin})
    own = request(url, "POST", "/api/tools/get_weather", b"{}", {**headers, "Origin": "http://vending.lan:8770"})
    assert refused[0] == 403 and "the page of another site" in refused[2]["error"]
    assert own[0] == 200 and len(read_calls(episode.run_dir / "trajectory.jsonl")) == calls + 1  # only the own


@pytest.mark.parametrize(
    "target,location",
    [
        ("//evil.example/?token=s3cret", "/evil.example/"),  # before: //evil.example/, another site
        ("///evil.example?token=s3cret&x=1", "/evil.example?x=1"),
        ("/%2F%2Fevil.example?token=s3cret", "/evil.example"),
        ("/\\evil.example/?token=s3cret", "/%5Cevil.example/"),  # a browser reads /\ as //
        ("/%5Cevil.example/?token=s3cret", "/%5Cevil.example/"),
        ("http://evil.example/?token=s3cret", "/http://evil.example/"),  # an absolute-form target
        ("/%0d%0aSet-Cookie:%20x=1?token=s3cret", "/%0D%0ASet-Cookie:%20x=1"),  # before: the connection dropped
        ("/%E2%82%AC?token=s3cret", "/%E2%82%AC"),  # before: 500 (the path in latin-1)
        ("/?x=%E2%82%AC&token=s3cret", "/?x=%E2%82%AC"),
    ],
)
def test_the_login_redirect_stays_on_the_consoles_own_origin(off_loopback, target, location):
    url, _ = off_loopback
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port)) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode("latin-1"))
        s.settimeout(10)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in head[1:])
    assert head[0] == "HTTP/1.1 303 See Other" and fields["location"] == location
    assert fields["set-cookie"].startswith("autovend_console_token=s3cret; HttpOnly")


@pytest.mark.parametrize("given", ["%E2%82%AC", "s3cre", "s3cret2", "S3CRET", "s3cret%00", ""])
def test_a_wrong_token_in_the_address_is_401_never_a_crash(off_loopback, given):
    url, _ = off_loopback
    status, headers, body = request(url, "GET", f"/?token={given}")
    assert status == 401 and "location" not in headers and "?token=<token>" in body["error"]


def test_no_redirect_but_the_login(off_loopback):
    url, _ = off_loopback
    bearer = {"Authorization": "Bearer s3cret"}
    for path in ("/api/state/", "/api/state//", "//evil.example/api/state/", "/report/"):
        assert request(url, "GET", path, headers=bearer)[0] == 404, path  # before: 307 to an address from Host


@pytest.mark.parametrize("change", ["cut", "longer", "upper"])
def test_the_csrf_token_and_the_cookie_must_be_exact(served, off_loopback, change):
    def changed(token: str) -> str:
        return {"cut": token[:-1], "longer": token + "x", "upper": token.upper()}[change]

    url, episode = served
    real, calls = csrf(url), len(read_calls(episode.run_dir / "trajectory.jsonl"))
    assert request(url, "POST", "/api/tools/end_day", b"{}", {"X-AutoVend-CSRF": changed(real)})[0] == 403
    assert episode.state().day == 1 and len(read_calls(episode.run_dir / "trajectory.jsonl")) == calls
    url, _ = off_loopback
    assert (
        request(url, "GET", "/api/state", headers={"Cookie": f"autovend_console_token={changed('s3cret')}"})[0] == 401
    )
    assert request(url, "GET", "/api/state", headers={"Cookie": "autovend_console_token=s3cret"})[0] == 200


def test_the_tokens_are_compared_in_constant_time(off_loopback, monkeypatch):
    import hmac

    url, _ = off_loopback
    seen, real = [], hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        seen.append(b)
        return real(a, b)

    monkeypatch.setattr("autovend.console.security.hmac.compare_digest", spy)
    request(url, "GET", "/?token=guess")  # the address's token
    request(url, "GET", "/api/state", headers={"Cookie": "autovend_console_token=guess"})  # the cookie
    page = request(url, "GET", "/", headers={"Authorization": "Bearer s3cret"})[2]  # the bearer token
    token = page.split('name="autovend-csrf" content="')[1].split('"')[0]
    request(url, "POST", "/api/tools/get_weather", b"{}", {"Cookie": "autovend_console_token=s3cret"})  # cookie, CSRF
    assert seen == [b"s3cret", b"s3cret", b"s3cret", b"s3cret", token.encode()]


def test_a_console_off_loopback_without_a_token_cannot_be_built():
    from autovend.console.security import ConsoleGate

    with pytest.raises(ValueError, match="a console on 0.0.0.0 \\(not loopback\\) needs a bearer token"):
        ConsoleGate(None, host="0.0.0.0", csrf="x")


def test_the_replay_refuses_another_host_too(baseline_runs):
    with running(replay_app([RunData.load(baseline_runs[0])])) as url:
        assert request(url, "GET", "/api/runs", headers={"Host": "evil.example"})[0] == 421
        assert request(url, "GET", "/api/runs")[0] == 200
