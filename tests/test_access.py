"""The rules of who may reach a web door (`autovend.access`), shared by the MCP HTTP server and the console.

Every comparison is exact: an Origin passes off loopback only when its host[:port] is the request's Host (a
check loosened to "contains the Host" or "starts with it" lets `http://HOST:PORT.evil.example` through), and
the bearer token only when it is the token, compared with `hmac.compare_digest` (constant time).
"""

from __future__ import annotations

import hmac

import pytest

from autovend.access import bearer_authorized, host_allowed, hostname, origin_allowed

HOST = "vending.lan:8770"  # a console or server off loopback, as a browser names it


@pytest.mark.parametrize("origin", ["http://vending.lan:8770", "https://vending.lan:8770", "HTTP://Vending.LAN:8770"])
def test_off_loopback_the_doors_own_origin_passes(origin):
    assert origin_allowed(origin, HOST, loopback=False)


@pytest.mark.parametrize(
    "origin",
    [
        "http://vending.lan:8770.evil.example",  # contains the Host, and starts with it
        "http://evil.example/vending.lan:8770",  # contains the Host
        "http://vending.lan:8770@evil.example",  # starts with the Host
        "http://xvending.lan:8770",  # ends with the Host
        "http://vending.lan:877",  # a prefix of the Host
        "http://vending.lan:87700",
        "http://vending.lan",  # another port
        "http://vending.lan:8770/",  # an Origin has no path
        "http://vending.lan:8770?x",
        "ftp://vending.lan:8770",
        "vending.lan:8770",
        "null",
        "",
        "http://evil.example",
    ],
)
def test_off_loopback_any_other_origin_is_refused(origin):
    assert not origin_allowed(origin, HOST, loopback=False)


def test_off_loopback_on_port_80_a_name_that_contains_the_host_is_refused():
    assert origin_allowed("http://vending.lan", "vending.lan", loopback=False)
    assert not origin_allowed("http://vending.lan.evil.example", "vending.lan", loopback=False)
    assert not origin_allowed("http://evil-vending.lan", "vending.lan", loopback=False)


@pytest.mark.parametrize(
    "origin,allowed",
    [
        ("http://127.0.0.1:8770", True),
        ("http://localhost:5173", True),
        ("http://[::1]:8080", True),
        ("https://127.0.0.2", True),
        ("http://127.0.0.1:8770.evil.example", False),  # the SDK's prefix check ("http://127.0.0.1:*") let it by
        ("http://127.0.0.1.evil.example", False),
        ("http://localhost.evil.example:80", False),
        ("http://127.0.0.1@evil.example", False),
        ("http://evil.example#127.0.0.1", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_on_loopback_an_origin_must_be_a_loopback_address(origin, allowed):
    assert origin_allowed(origin, "127.0.0.1:8770", loopback=True) is allowed


@pytest.mark.parametrize(
    "host,allowed",
    [
        ("127.0.0.1:8770", True),
        ("localhost", True),
        ("[::1]:1", True),
        ("127.0.0.2:80", True),
        ("evil.example", False),
        ("127.0.0.1.evil.example", False),
        ("localhost.evil.example:80", False),
        ("127.0.0.1:8770@evil.example", False),
        ("127.0.0.1:80x", False),
        ("127.0.0.1/x", False),
        ("127.0.0.1 evil", False),
        ("", False),
    ],
)
def test_on_loopback_the_host_must_be_a_loopback_address(host, allowed):
    assert host_allowed(host, loopback=True) is allowed
    assert host_allowed(host, loopback=False)  # off loopback the token is the gate


def test_a_host_name_is_read_exactly():
    assert [hostname(x) for x in ("LocalHost:1", "[::1]", "a:b", "a@b", "")] == ["localhost", "::1", None, None, None]


@pytest.mark.parametrize(
    "header,allowed",
    [
        (b"Bearer s3cret", True),
        (b"bearer s3cret", True),  # the scheme's case does not matter (RFC 7235), the token's does
        (b"Bearer S3CRET", False),
        (b"Bearer s3cre", False),
        (b"Bearer s3cret2", False),
        (b"Bearer xs3cret", False),
        (b"Bearer s3cret s3cret", False),
        (b"Basic s3cret", False),
        (b"s3cret", False),
        (b"Bearer", False),
        (b"", False),
    ],
)
def test_the_bearer_token_is_compared_exactly(header, allowed):
    assert bearer_authorized({b"authorization": header}, b"s3cret") is allowed


def test_the_bearer_token_is_compared_in_constant_time(monkeypatch):
    seen, real = [], hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr("autovend.access.hmac.compare_digest", spy)
    assert bearer_authorized({b"authorization": b"Bearer guess"}, b"s3cret") is False
    assert seen == [(b"guess", b"s3cret")]
