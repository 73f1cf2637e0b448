"""The chat client against the fake server: usage, retries with seeded backoff, errors that stop the run."""

from __future__ import annotations

import pytest

from autovend.agents.llm.client import ChatClient, ContextOverflowError, Usage, parse_usage
from autovend.agents.llm.config import LLMConfig
from autovend.errors import LLMError
from autovend.rng import stream
from tests.agents.llm.fake_openai import Call, FakeOpenAI, Fault, Reply

MESSAGES = [{"role": "system", "content": "You run vending machines."}, {"role": "user", "content": "Day 1 of 8 — go."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "end_day",
            "description": "End the day.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
]


def _client(url: str, sleeps: list[float], seed: int = 1, **cfg) -> ChatClient:
    config = LLMConfig(backoff_initial_s=1.0, backoff_max_s=8.0, **cfg)
    return ChatClient(
        "fake", base_url=url, api_key="EMPTY", config=config, rng=stream(seed, "llm", "retry"), sleep=sleeps.append
    )


def test_reply_and_usage():
    with FakeOpenAI(lambda req: Reply((Call("end_day"),), content="Closing.")) as server:
        reply = _client(server.base_url, []).complete(MESSAGES, TOOLS)
    assert reply.message == {
        "role": "assistant",
        "content": "Closing.",
        "tool_calls": [{"id": "call_1_1_0", "type": "function", "function": {"name": "end_day", "arguments": "{}"}}],
    }
    assert reply.finish_reason == "tool_calls" and reply.attempts == 1
    sent = server.requests[0]
    assert sent["messages"] == MESSAGES and sent["tools"] == TOOLS and sent["tool_choice"] == "auto"
    assert "temperature" not in sent and "seed" not in sent  # server defaults unless configured
    u = server.answered[0]["usage"]
    assert reply.usage == Usage(
        requests=1, input_tokens=u["prompt_tokens"], cached_tokens=0, output_tokens=u["completion_tokens"]
    )


def test_request_options_are_sent_when_configured():
    with FakeOpenAI(lambda req: Reply(content="ok")) as server:
        client = _client(server.base_url, [], temperature=0.2, max_completion_tokens=500, reasoning_effort="high",
                         parallel_tool_calls=False, send_seed=True, extra_body={"top_k": 20})  # fmt: skip
        client.seed = 7
        client.complete(MESSAGES, TOOLS)
    sent = server.requests[0]
    assert (sent["temperature"], sent["max_completion_tokens"], sent["reasoning_effort"]) == (0.2, 500, "high")
    assert (sent["parallel_tool_calls"], sent["seed"], sent["top_k"]) == (False, 7, 20)


@pytest.mark.parametrize(
    "raw,expected",
    [
        pytest.param(None, Usage(requests=1, unreported=1), id="absent"),
        pytest.param(
            {
                "prompt_tokens": 1000,
                "completion_tokens": 50,
                "prompt_tokens_details": {"cached_tokens": 800},
                "completion_tokens_details": {"reasoning_tokens": 30},
            },
            Usage(1, 1000, 800, 50, 30, 0),
            id="openai",
        ),  # fmt: skip
        pytest.param(
            {
                "prompt_tokens": 1000,
                "completion_tokens": 50,
                "prompt_cache_hit_tokens": 600,
                "prompt_cache_miss_tokens": 400,
            },
            Usage(1, 1000, 600, 50, 0, 0),
            id="deepseek",
        ),
        pytest.param(
            {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}, Usage(1, 120, 0, 9, 0, 0), id="ollama"
        ),
    ],
)
def test_parse_usage(raw, expected):
    assert parse_usage(raw) == expected


def test_no_usage_reported():
    with FakeOpenAI(lambda req: Reply(content="ok"), report_usage=False) as server:
        reply = _client(server.base_url, []).complete(MESSAGES, TOOLS)
    assert reply.usage == Usage(requests=1, unreported=1)


def test_429_then_success_waits_with_seeded_jitter():
    sleeps: list[float] = []
    with FakeOpenAI(lambda req: Reply(content="ok"), faults={1: Fault(429), 2: Fault(503)}) as server:
        reply = _client(server.base_url, sleeps).complete(MESSAGES, TOOLS)
    assert reply.attempts == 3 and len(server.requests) == 3
    assert [r["attempt"] for r in reply.retries] == [1, 2]
    assert "HTTP 429" in reply.retries[0]["error"] and "HTTP 503" in reply.retries[1]["error"]
    # step = min(8, 1 * 2**(attempt-1)): 1 s then 2 s; the wait is step/2 + uniform(0, step/2)
    rng = stream(1, "llm", "retry")
    expected = [0.5 + rng.uniform(0, 0.5), 1.0 + rng.uniform(0, 1.0)]
    assert sleeps == pytest.approx(expected)
    assert 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0


def test_retry_after_is_honoured_up_to_the_cap():
    sleeps: list[float] = []
    with FakeOpenAI(
        lambda req: Reply(content="ok"), faults={1: Fault(429, retry_after=5), 2: Fault(429, retry_after=60)}
    ) as server:
        _client(server.base_url, sleeps).complete(MESSAGES, TOOLS)
    assert sleeps[0] == 5.0  # the server's 5 s beats the 0.5-1 s backoff
    assert sleeps[1] == 8.0  # 60 s is capped at backoff_max_s


def test_gives_up_after_max_attempts_with_a_resumable_message():
    sleeps: list[float] = []
    with FakeOpenAI(lambda req: Reply(content="ok"), fail_from=1) as server, pytest.raises(LLMError) as err:
        _client(server.base_url, sleeps, max_attempts=4).complete(MESSAGES, TOOLS)
    assert len(server.requests) == 4 and len(sleeps) == 3
    assert (
        "gave up after 4 attempts" in str(err.value) and "HTTP 500" in str(err.value) and "--resume" in str(err.value)
    )


@pytest.mark.parametrize(
    "fault,error,text",
    [
        pytest.param(Fault(401), LLMError, "the API key was refused", id="401"),
        pytest.param(Fault(404), LLMError, "check --base-url", id="404"),
        pytest.param(
            Fault(400, message="Unsupported parameter: reasoning_effort"),
            LLMError,
            "the server refused the request",
            id="400",
        ),
        pytest.param(
            Fault(400, message="This model's maximum context length is 8192 tokens"),
            ContextOverflowError,
            "does not fit the model's context",
            id="overflow",
        ),
    ],
)
def test_errors_that_are_not_retried(fault, error, text):
    sleeps: list[float] = []
    with FakeOpenAI(lambda req: Reply(content="ok"), faults={1: fault}) as server, pytest.raises(error, match=text):
        _client(server.base_url, sleeps).complete(MESSAGES, TOOLS)
    assert len(server.requests) == 1 and sleeps == []


def test_connection_refused_is_retried_then_reported():
    sleeps: list[float] = []
    with FakeOpenAI() as server:
        url = server.base_url  # the port is free again once the server is closed
    with pytest.raises(LLMError, match="gave up after 2 attempts; last error APIConnectionError"):
        _client(url, sleeps, max_attempts=2, request_timeout_s=2).complete(MESSAGES, TOOLS)
    assert len(sleeps) == 1
