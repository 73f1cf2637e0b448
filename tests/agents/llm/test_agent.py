"""The harness against the scripted fake server: days of play, malformed calls, caps, retries, compaction."""

from __future__ import annotations

import json

import pytest

from autovend.agents.llm import build_llm_agent
from autovend.agents.llm.transcript import read_transcript
from autovend.env.boundary import simulator_of
from autovend.errors import ConfigError
from autovend.session import ToolSession
from autovend.tools.trajectory import read_trajectory
from tests.agents.llm.conftest import DAYS, SEED, make_agent, play
from tests.agents.llm.fake_openai import Call, FakeOpenAI, Fault, Reply, default_script, parse_request


def _calls(path):
    return [r for r in read_trajectory(path) if r["kind"] == "call"]


def _replayed_net_assets(world, calls) -> float:
    """The same tool calls made directly on a fresh session of the same world and seed."""
    s = ToolSession(world, seed=SEED)
    for c in calls:
        s.call(c["tool"], c["arguments"])
    assert s.done
    return simulator_of(s).net_assets


@pytest.fixture(scope="module")
def played(world, prices_file, tmp_path_factory):
    """The default script over the whole toy episode (8 days)."""
    out = tmp_path_factory.mktemp("play")
    with FakeOpenAI() as server:
        session, agent = play(world, lambda: make_agent(server.base_url, prices_file), out)
        agent.close()
    return {"server": server, "session": session, "agent": agent, "out": out}


def test_first_request_has_the_system_prompt_the_day_1_prompt_and_the_18_tools(played, world):
    first = played["server"].requests[0]
    local = ToolSession(world, seed=SEED)
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][0]["content"] == local.system_prompt()
    assert first["messages"][1]["content"] == local.daily_prompt()
    assert first["model"] == "fake" and first["tool_choice"] == "auto"
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert len(tools) == 18
    for t in local.tools():  # one source of truth: the session's own definitions
        assert tools[t["name"]]["parameters"] == t["input_schema"]
        assert tools[t["name"]]["description"] == t["description"]


def test_every_tool_call_is_answered_before_the_next_message(played):
    for body in played["server"].requests[1:]:
        msgs = body["messages"]
        for i, m in enumerate(msgs):
            if m["role"] != "assistant" or not m.get("tool_calls"):
                continue
            ids = [tc["id"] for tc in m["tool_calls"]]
            answers = [x["tool_call_id"] for x in msgs[i + 1 : i + 1 + len(ids)]]
            assert answers == ids


def test_the_tools_ran_on_the_session(played, world):
    calls = _calls(played["out"] / "trajectory.jsonl")
    session = played["session"]
    assert session.done and session.day == DAYS
    # day 1: write_memory, place_order, end_day; days 2-5: get_warehouse (+ read_memory on day 5), end_day;
    # days 6-8 (workdays, stock arrived): get_warehouse, restock, end_day
    assert [c["tool"] for c in calls if c["day"] == 1] == ["write_memory", "place_order", "end_day"]
    assert [c["tool"] for c in calls if c["day"] == 5] == ["get_warehouse", "read_memory", "end_day"]
    assert [c["tool"] for c in calls if c["day"] == 6] == ["get_warehouse", "restock", "end_day"]
    assert len(calls) == 3 + 3 * 2 + 3 + 3 * 3 == 21
    assert all(c["ok"] for c in calls)
    assert simulator_of(session).net_assets == _replayed_net_assets(world, calls)
    assert session.notebook == "Plan: sell SKU0001 and SKU0002 at CN_WORKSITE_01."


def test_days_turns_and_usage_add_up(played):
    agent, server = played["agent"], played["server"]
    days = agent.days
    assert [d["day"] for d in days] == list(range(1, DAYS + 1))
    assert [d["turns"] for d in days] == [2, 2, 2, 2, 2, 3, 3, 3]
    assert all(d["by"] == "agent" for d in days)
    usage = [a["usage"] for a in server.answered]
    total = agent.usage()
    assert total["requests"] == len(server.requests) == 19
    assert total["input_tokens"] == sum(u["prompt_tokens"] for u in usage)
    assert total["cached_tokens"] == sum(u["prompt_tokens_details"]["cached_tokens"] for u in usage)
    assert total["output_tokens"] == sum(u["completion_tokens"] for u in usage)
    # price of 'fake': 2.0 USD per million fresh input, 0.5 cached, 8.0 output
    fresh = total["input_tokens"] - total["cached_tokens"]
    cost = (fresh * 2.0 + total["cached_tokens"] * 0.5 + total["output_tokens"] * 8.0) / 1e6
    assert agent.usage()["api_cost_usd"] == pytest.approx(cost, abs=1e-6)
    assert agent.usage()["price_entry"] == "fake"


def test_end_day_results_leave_the_report_to_the_next_prompt(played):
    body = played["server"].requests[2]  # day 2, turn 1: after day 1's end_day
    end_day, prompt = body["messages"][-2], body["messages"][-1]
    assert end_day["role"] == "tool"
    content = json.loads(end_day["content"])
    assert content["settled"]["day"] == 1 and content["next_day"].startswith("Day 2 of 8")
    assert content["observation"] == "The full report of the new day follows in the next message."
    assert prompt["role"] == "user" and prompt["content"].startswith("Day 2 of 8 — Thursday, 2025-01-02.")


def test_transcript_records_everything_the_model_saw_and_did(played):
    records = read_transcript(played["out"] / "llm.jsonl")
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "start" and kinds.count("start") == 1
    assert kinds.count("response") == 19 and kinds.count("day_closed") == DAYS
    start = records[0]
    assert start["model"] == "fake" and len(start["tools"]) == 18 and start["config"]["max_turns_per_day"] == 50
    tool_msgs = [r for r in records if r["kind"] == "message" and r["tag"] == "tool"]
    assert len(tool_msgs) == 21 and all(r["ok"] for r in tool_msgs)


# --------------------------------------------------------------------------- malformed calls


def _malformed_script(req):
    if req.day == 2 and req.turn == 1:
        return Reply(
            (
                Call("place_order", '{"items": [{"sku_id": "SKU0001", "qty": 5}'),  # cut-off JSON
                Call("sell_everything", {}),  # no such tool
                Call("get_calendar", "[1, 2]"),  # JSON, but not an object
                Call("get_weather", ""),  # empty text = no arguments
            )
        )
    return default_script(req)


def test_malformed_tool_calls_get_error_results_not_a_crash(world, prices_file, tmp_path):
    with FakeOpenAI(_malformed_script) as server:
        session, agent = play(world, lambda: make_agent(server.base_url, prices_file), tmp_path)
    assert session.done
    day2 = server.requests[3]  # day 2, turn 2: sees the four results
    results = [m for m in day2["messages"] if m["role"] == "tool" and m["tool_call_id"].startswith("call_2_1_")]
    texts = [json.loads(m["content"]) for m in results]
    assert "not valid JSON" in texts[0]["error"] and "The call was not run" in texts[0]["error"]
    assert "there is no tool 'sell_everything'" in texts[1]["error"]
    assert "arguments must be a JSON object" in texts[2]["error"]
    assert texts[3]["day"] == 2 and texts[3]["days"][0]["date"] == "2025-01-02"  # the weather, served
    kept = [m for m in day2["messages"] if m["role"] == "assistant"][-1]
    assert json.loads(kept["tool_calls"][0]["function"]["arguments"]) == {
        "__malformed_arguments__": '{"items": [{"sku_id": "SKU0001", "qty": 5}'
    }
    assert agent.days[1]["malformed_tool_calls"] == 1 and agent.days[1]["tool_calls"] == 5
    assert agent.days[1]["refused_tool_calls"] == 2  # the unknown tool and the arguments that are no object
    day2_calls = [c["tool"] for c in _calls(tmp_path / "trajectory.jsonl") if c["day"] == 2]
    assert day2_calls == ["sell_everything", "get_calendar", "get_weather", "end_day"]  # bad JSON never ran


# --------------------------------------------------------------------------- caps


def _greedy_script(req):
    if req.day == 1:
        return Reply((Call("get_weather"),))  # never ends the day
    if req.day == 2:
        return Reply(tuple(Call("get_weather") for _ in range(5)))  # 5 calls, cap 4
    if req.day == 3:
        return Reply((Call("end_day"), Call("get_weather")))  # a call after end_day
    if req.day == 4:
        return Reply(content="Thinking about it.") if req.turn == 1 else Reply((Call("end_day"),))
    if req.day == 5:
        return Reply(content="Still thinking.")  # never calls a tool
    return Reply((Call("end_day"),))


def test_daily_caps_end_the_day_through_the_harness(world, prices_file, tmp_path):
    with FakeOpenAI(_greedy_script) as server:
        session, agent = play(
            world,
            lambda: make_agent(
                server.base_url, prices_file, max_turns_per_day=3, max_tool_calls_per_day=4, max_idle_turns=2
            ),
            tmp_path,
        )
    days = {d["day"]: d for d in agent.days}
    assert (days[1]["by"], days[1]["turns"], days[1]["tool_calls"]) == ("harness", 3, 3)
    assert days[1]["reason"] == "the cap of 3 model turns per day was reached"
    assert (days[2]["by"], days[2]["turns"], days[2]["tool_calls"]) == ("harness", 1, 4)
    assert days[2]["reason"] == "the cap of 4 tool calls per day was reached"
    assert (days[3]["by"], days[3]["tool_calls"]) == ("agent", 1)
    assert (days[4]["by"], days[4]["turns"]) == ("agent", 2)
    assert (days[5]["by"], days[5]["turns"], days[5]["reason"]) == ("harness", 3, "3 replies in a row called no tool")
    assert agent.usage()["harness"]["days_ended_by_harness"] == [1, 2, 5]
    # the model is told at the top of the next day's prompt
    day2_prompt = next(
        m["content"] for m in server.requests[3]["messages"] if m["role"] == "user" and "Day 2 of 8" in m["content"]
    )
    assert day2_prompt.startswith("[Harness note] Day 1 was ended by the harness, not by you: the cap of 3 model")
    assert '"day":1' in day2_prompt.split("\n\n")[0]  # with its settlement
    # the harness's end_day is in the trajectory like any other call
    calls = _calls(tmp_path / "trajectory.jsonl")
    assert [c["tool"] for c in calls if c["day"] == 1] == ["get_weather"] * 3 + ["end_day"]
    assert [c["tool"] for c in calls if c["day"] == 2] == ["get_weather"] * 4 + ["end_day"]
    records = read_transcript(tmp_path / "llm.jsonl")
    day2_tools = [
        r["message"]["content"] for r in records if r["kind"] == "message" and r["day"] == 2 and r["tag"] == "tool"
    ]
    assert sum("not run, because the cap of 4 tool calls per day" in t for t in day2_tools) == 1
    day3_tools = [
        r["message"]["content"] for r in records if r["kind"] == "message" and r["day"] == 3 and r["tag"] == "tool"
    ]
    assert "not run, because end_day earlier in the same reply already closed day 3" in day3_tools[1]
    nudges = [r for r in records if r["kind"] == "message" and r["tag"] == "nudge"]
    assert [r["day"] for r in nudges] == [4, 5, 5]


# --------------------------------------------------------------------------- 429 then success


def test_a_429_is_retried_after_a_backoff(world, prices_file, tmp_path, played):
    sleeps: list[float] = []
    with FakeOpenAI(faults={3: Fault(429, retry_after=0.02)}) as server:
        session, agent = play(world, lambda: make_agent(server.base_url, prices_file, sleeps=sleeps), tmp_path)
    assert len(server.requests) == 19 + 1  # the refused request, then the same again
    assert server.requests[2] == server.requests[3]
    assert len(sleeps) == 1 and 0.02 <= sleeps[0] <= 0.05  # Retry-After (0.02) within the cap (0.05)
    usage = agent.usage()
    assert usage["requests"] == 19 and usage["harness"]["retries"] == 1
    retry = [r for r in read_transcript(tmp_path / "llm.jsonl") if r["kind"] == "retry"]
    assert len(retry) == 1 and retry[0]["day"] == 2 and "HTTP 429" in retry[0]["error"]
    assert (
        simulator_of(session).net_assets == simulator_of(played["session"]).net_assets
    )  # the same play as without the fault


# --------------------------------------------------------------------------- compaction


def test_compaction_keeps_the_conversation_within_the_budget(world, prices_file, tmp_path, played):
    budget, free = 7500, 1500
    with FakeOpenAI() as server:
        session, agent = play(
            world,
            lambda: make_agent(
                server.base_url, prices_file, context_budget_tokens=budget, evict_tokens=free, keep_last_groups=2
            ),
            tmp_path,
        )
    events = [r for r in read_transcript(tmp_path / "llm.jsonl") if r["kind"] == "compaction"]
    assert len(events) >= 2
    for e in events:
        assert e["tokens_before"] > budget
        assert e["tokens_after"] <= budget - 500  # back under the budget with room (or every old group is gone)
        assert e["groups_removed"] >= 1
    system = played["server"].requests[0]["messages"][0]
    prompt_tokens = [a["usage"]["prompt_tokens"] for a in server.answered]
    uncompacted = [a["usage"]["prompt_tokens"] for a in played["server"].answered]
    assert max(uncompacted) > budget + 1500  # without eviction the conversation outgrows the budget ...
    assert max(prompt_tokens) <= budget + 100  # ... with it, every request stays within it (server's count)
    for body in server.requests:
        msgs = body["messages"]
        assert msgs[0] == system  # the system message is never touched
        notes = [m for m in msgs if m["role"] == "user" and m["content"].startswith("[Harness note] To keep")]
        assert len(notes) <= 1 and (not notes or msgs[1] is not None and msgs[1]["content"] == notes[0]["content"])
    # the notebook survives: day 5 reads the plan written on day 1, whose messages are gone
    day5 = next(b for b in server.requests if (parse_request(b).day, parse_request(b).turn) == (5, 2))
    assert not any("Plan: sell" in json.dumps(m) for m in day5["messages"][:-1] if m["role"] != "tool")
    memory = [m for m in day5["messages"] if m["role"] == "tool" and "Plan: sell SKU0001" in m["content"]]
    assert memory, "read_memory returned the day-1 notes"
    # a compaction breaks the prompt-cache prefix: the first request after it has nothing cached
    after = [
        i for i, b in enumerate(server.requests) if i and b["messages"][1] != server.requests[i - 1]["messages"][1]
    ]
    assert after and all(server.answered[i]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0 for i in after)
    assert agent.usage()["harness"]["compactions"] == len(events)
    assert (
        simulator_of(session).net_assets == simulator_of(played["session"]).net_assets
    )  # this script does not need old turns


# --------------------------------------------------------------------------- servers that differ


def test_a_context_overflow_forces_an_eviction_and_a_retry(world, prices_file, tmp_path, played):
    overflow = Fault(400, message="This model's maximum context length is 8192 tokens, your request has 9000")
    with FakeOpenAI(faults={9: overflow}) as server:  # day 5, turn 1
        session, agent = play(world, lambda: make_agent(server.base_url, prices_file), tmp_path)
    events = [r for r in read_transcript(tmp_path / "llm.jsonl") if r["kind"] == "compaction"]
    assert len(events) == 1 and events[0]["emergency"] is True and events[0]["day"] == 5
    assert events[0]["days_removed"] == [1, 4]  # everything but the newest group and today's prompt
    assert len(server.requests[9]["messages"]) < len(server.requests[8]["messages"])  # the retry was shorter
    assert agent.usage()["harness"]["context_overflows"] == 1
    assert simulator_of(session).net_assets == simulator_of(played["session"]).net_assets


def test_a_server_without_usage_is_estimated_from_characters(world, prices_file, tmp_path):
    with FakeOpenAI(report_usage=False) as server:
        session, agent = play(world, lambda: make_agent(server.base_url, prices_file, context_budget_tokens=7000,
                                                        evict_tokens=1000), tmp_path)  # fmt: skip
    usage = agent.usage()
    assert (usage["requests"], usage["unreported"], usage["input_tokens"]) == (19, 19, 0)
    assert agent.conversation.tokens_per_char == 0.25  # never calibrated: 4 characters per token
    assert any(r["kind"] == "compaction" for r in read_transcript(tmp_path / "llm.jsonl"))


def test_load_state_refuses_another_model(played, prices_file):
    state = played["agent"].state_dict()
    make_agent("http://127.0.0.1:9/v1", prices_file).load_state(state)  # the same model loads
    other = build_llm_agent("openai:other", base_url="http://127.0.0.1:9/v1", api_key_env="AUTOVEND_TEST_NO_KEY")
    with pytest.raises(ConfigError, match="resume it with --agent openai:fake"):
        other.load_state(state)
    with pytest.raises(ConfigError, match="holds no LLM agent state"):
        other.load_state({"format": "baseline"})
