"""Messages every common OpenAI-compatible server takes, and refusals that stop at once naming the rejected field.

The scripted server enforces the OpenAI API's and the llama.cpp server's request rules (`server_rules`) in every
harness test; these tests check the rules themselves, the shapes the harness sends in the cases small models
produce (no text beside the tool calls, missing or repeated call ids, empty arguments), and what the user reads
when a server refuses a request.
"""

from __future__ import annotations

import json

import pytest

from autovend.agents.llm.client import ChatClient, RequestRefusedError, assistant_message, wire_messages
from autovend.agents.llm.config import LLMConfig
from autovend.agents.llm.refusal import describe_refusal, is_refusal, rejected_fields
from autovend.rng import stream
from tests.agents.llm.conftest import make_agent, play
from tests.agents.llm.fake_openai import Call, FakeOpenAI, Fault, Reply
from tests.agents.llm.server_rules import all_rules, llamacpp_rules, openai_rules

CALL = {"id": "call_1", "type": "function", "function": {"name": "end_day", "arguments": "{}"}}
SYSTEM = {"role": "system", "content": "You run vending machines."}
USER = {"role": "user", "content": "Day 1 of 8 — go."}
TOOLS = [{"type": "function", "function": {"name": "end_day", "description": "End.", "parameters": {"type": "object"}}}]


def _body(*messages):
    return {"model": "m", "messages": [SYSTEM, USER, *messages]}


# ---------------------------------------------------------------------------- the rules refuse what servers refuse


def test_llamacpp_refuses_null_assistant_content_with_seven_validation_errors():
    fault = llamacpp_rules(_body({"role": "assistant", "content": None, "tool_calls": [CALL]}))
    assert fault is not None and fault.status == 500
    assert fault.message.startswith("7 validation errors:")
    assert (
        "'loc': ('body', 'messages', 2, 'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should"
        in (fault.message)
    )
    assert llamacpp_rules(_body({"role": "assistant", "tool_calls": [CALL]})) is None  # absent content is fine
    assert llamacpp_rules(_body({"role": "assistant", "content": "", "tool_calls": [CALL]})) is None


@pytest.mark.parametrize(
    "messages,param",
    [
        pytest.param(
            [{"role": "assistant", "content": "", "tool_calls": [CALL]}], "messages.[3].role", id="unanswered"
        ),
        pytest.param(
            [{"role": "tool", "tool_call_id": "call_1", "content": "{}"}],
            "messages.[2].tool_call_id",
            id="answers-nothing",
        ),  # fmt: skip
        pytest.param(
            [
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{**CALL, "function": {"name": "x", "arguments": ""}}],
                }
            ],
            "messages.[2].tool_calls.[0].function.arguments",
            id="empty-arguments",
        ),
        pytest.param(
            [{"role": "assistant", "content": "", "tool_calls": [{**CALL, "id": ""}]}],
            "messages.[2].tool_calls.[0].id",
            id="no-id",
        ),  # fmt: skip
    ],
)
def test_openai_refuses_unpaired_or_malformed_tool_calls(messages, param):
    body = _body(*messages, USER)
    fault = openai_rules(body)
    assert fault is not None and (fault.status, fault.param) == (400, param)


def test_a_well_formed_exchange_passes_both_servers():
    answered = [{"role": "assistant", "content": "", "tool_calls": [CALL]}, {"role": "tool", "tool_call_id": "call_1",
                "content": "{}"}]  # fmt: skip
    assert all_rules(_body(*answered, USER)) is None


# ---------------------------------------------------------------------------- what the harness sends


def test_assistant_message_has_string_content_and_one_id_per_call():
    raw = {
        "content": None,
        "tool_calls": [
            {"type": "function", "function": {"name": "get_warehouse", "arguments": None}},
            {"id": "same", "type": "function", "function": {"name": "end_day", "arguments": "{}"}},
            {"id": "same", "type": "function", "function": {"name": "read_memory", "arguments": {"a": 1}}},
        ],
    }
    message, _ = assistant_message(raw, id_prefix="call_d1_t1")
    assert message["content"] == ""
    assert [tc["id"] for tc in message["tool_calls"]] == ["call_d1_t1_0", "same", "same_2"]
    assert [tc["function"]["arguments"] for tc in message["tool_calls"]] == ["", "{}", '{"a": 1}']
    wire = wire_messages([message])[0]
    assert wire["tool_calls"][0]["function"]["arguments"] == "{}"  # "" is not JSON: sent as no arguments
    assert message["tool_calls"][0]["function"]["arguments"] == ""  # the kept conversation is not changed


def test_messages_kept_with_null_content_are_sent_with_a_string():
    old = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    assert wire_messages([SYSTEM, old])[1]["content"] == ""
    assert old["content"] is None


def _terse(req):
    """A small model's replies: never any text, ids missing or repeated, empty arguments, then end_day."""
    if req.turn == 1:
        return Reply((Call("get_warehouse", ""), Call("read_memory"), Call("get_calendar")), ids=(None, "x", "x"))
    return Reply((Call("end_day", ""),), ids=("x",))


def test_a_terse_model_over_days_sends_only_what_both_servers_take(world, tmp_path):
    with FakeOpenAI(_terse) as server:
        session, agent = play(world, lambda: make_agent(server.base_url, max_turns_per_day=3), tmp_path / "run")
        agent.close()
    assert session.done and server.refused == []
    later = server.requests[-1]["messages"]
    assistants = [m for m in later if m["role"] == "assistant"]
    assert assistants and all(m["content"] == "" for m in assistants)
    ids = [tc["id"] for m in assistants for tc in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in later if m["role"] == "tool"]
    assert sorted(ids) == sorted(answered)
    assert {"x", "x_2"} <= set(ids)  # the server's id kept, the repeat told apart


# ---------------------------------------------------------------------------- refusals stop at once


def _client(url, sleeps):
    config = LLMConfig(backoff_initial_s=1.0, backoff_max_s=8.0)
    return ChatClient("m", base_url=url, api_key="EMPTY", config=config, rng=stream(1, "llm", "retry"),
                      sleep=sleeps.append)  # fmt: skip


def test_a_validation_error_in_a_500_is_not_retried_and_names_the_field():
    bad = llamacpp_rules(_body({"role": "assistant", "content": None, "tool_calls": [CALL]}))
    sleeps: list[float] = []
    sent = [SYSTEM, USER, {"role": "assistant", "content": "", "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{}"}]  # fmt: skip
    with (
        FakeOpenAI(lambda req: Reply(content="ok"), faults={1: bad}) as server,
        pytest.raises(RequestRefusedError) as err,
    ):
        _client(server.base_url, sleeps).complete(sent, TOOLS)
    assert len(server.requests) == 1 and sleeps == []
    text = str(err.value)
    assert "HTTP 500: 7 validation errors:" in text and "not retried" in text
    assert (
        'rejected field: messages[2].content (the assistant message; sent ""): Input should be a valid string' in text
    )
    assert err.value.fields == ["messages[2].content"] and err.value.status == 500


def test_a_plain_500_is_still_retried():
    sleeps: list[float] = []
    with FakeOpenAI(lambda req: Reply(content="ok"), faults={1: Fault(500, message="CUDA out of memory")}) as server:
        reply = _client(server.base_url, sleeps).complete([SYSTEM, USER], TOOLS)
    assert reply.attempts == 2 and len(sleeps) == 1


def test_an_openai_400_names_its_param_with_what_was_sent():
    fault = Fault(400, message="Invalid type for 'temperature'.", param="temperature", kind="invalid_request_error")
    with (
        FakeOpenAI(lambda req: Reply(content="ok"), faults={1: fault}) as server,
        pytest.raises(RequestRefusedError) as err,
    ):
        client = _client(server.base_url, [])
        client.config = LLMConfig(temperature=3.5)
        client.complete([SYSTEM, USER], TOOLS)
    assert "rejected field: temperature (sent 3.5): Invalid type for 'temperature'." in str(err.value)
    assert len(server.requests) == 1


def test_a_fastapi_422_detail_names_the_field():
    body = {"detail": [{"type": "missing", "loc": ["body", "messages", 1, "tool_call_id"], "msg": "Field required"}]}
    request = {"messages": [SYSTEM, {"role": "tool", "content": "{}"}]}
    assert is_refusal(422, json.dumps(body))
    fields = rejected_fields(body, "Error code: 422")
    assert [(f.field, f.problem) for f in fields] == [("messages[1].tool_call_id", "Field required")]
    assert describe_refusal(422, body, "Error code: 422", request).endswith(
        "rejected field: messages[1].tool_call_id (the tool message; not sent): Field required"
    )


def test_pydantic_text_errors_are_read_too():
    text = "1 validation error for ChatRequest\nmessages.3.content\n  Input should be a valid string [type=string_type]"
    assert [(f.field, f.kind) for f in rejected_fields(None, text)] == [("messages[3].content", "string_type")]


@pytest.mark.parametrize(
    "status,text,final",
    [(400, "bad", True), (404, "no model", True), (422, "x", True), (408, "timeout", False), (409, "x", False),
     (429, "slow down", False), (500, "internal error", False), (503, "overloaded", False),
     (500, "2 validation errors: ...", True), (502, "{'type': 'missing', 'loc': ('body', 'model')}", True)],
)  # fmt: skip
def test_which_errors_are_final(status, text, final):
    assert is_refusal(status, text) is final


# ---------------------------------------------------------------------------- tool results as one user message


def test_tool_results_as_user_messages_for_servers_that_drop_tool_messages():
    reply = {"role": "assistant", "content": "", "tool_calls": [CALL, {**CALL, "id": "call_2"}]}
    results = [{"role": "tool", "tool_call_id": "call_1", "content": '{"a":1}'},
               {"role": "tool", "tool_call_id": "call_2", "content": '{"error":"no"}'}]  # fmt: skip
    kept = [SYSTEM, USER, reply, *results, USER]
    sent = wire_messages(kept, "user")
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "user"]
    assert sent[3]["content"] == (
        '[Results of your tool calls, in order]\n1. end_day: {"a":1}\n\n2. end_day: {"error":"no"}'
    )
    assert wire_messages(kept) == kept  # the default sends tool messages
    assert llamacpp_rules({"messages": sent}) is None
    assert openai_rules({"messages": sent}) is not None  # the OpenAI API wants tool messages: opt-in only


def test_a_run_with_tool_results_as_user_reads_every_result(world, tmp_path):
    with FakeOpenAI(rules=llamacpp_rules) as server:
        session, agent = play(world, lambda: make_agent(server.base_url, tool_results_as="user"), tmp_path / "run")
        agent.close()
    assert session.done and server.refused == []
    assert all(m["role"] != "tool" for body in server.requests for m in body["messages"])
    last = server.requests[-1]["messages"]
    replies = [m for m in last if m["role"] == "assistant" and m.get("tool_calls")]
    answers = [m for m in last if m["role"] == "user" and m["content"].startswith("[Results of your tool calls")]
    assert len(answers) == len(replies)
    for reply, answer in zip(replies, answers, strict=True):  # each result under its call's number and name
        lines = [line for line in answer["content"].split("\n") if line[:1].isdigit()]
        names = [tc["function"]["name"] for tc in reply["tool_calls"]]
        assert [line.split(": ", 1)[0] for line in lines] == [f"{i}. {n}" for i, n in enumerate(names, 1)]
