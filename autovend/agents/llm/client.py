"""The chat client: one OpenAI-compatible Chat Completions request with tools, timeouts and retries.

    client = ChatClient("gpt-4.1-mini", base_url=None, api_key=key, config=LLMConfig(), rng=rng)
    reply = client.complete(messages, tools)        # -> Completion (assistant message, usage, attempts)

The official `openai` client speaks to hosted APIs and to local servers (vLLM, Ollama) alike. Its
own retries are switched off: this module retries 429s, 5xx answers, timeouts and connection
errors with exponential backoff and jitter drawn from a seeded generator (so tests are
deterministic; `sleep` is injectable), honours a server's Retry-After, and after `max_attempts`
raises `LLMError` (the run stops after its last completed day and can be resumed); a connection
error to a model server this harness started whose process has ended (`local_server.server_exit`) is
not retried: "the model server died (exit N)" says so at once. A request the
model's context cannot hold raises `ContextOverflowError`, so the harness can evict and retry. A request
the server refuses for good (a 4xx other than 408/409/429, or a 5xx whose body is a schema or
validation error, as the llama.cpp Python server answers one) is not retried: `RequestRefusedError`
quotes the server and names the rejected request field with what was sent there (`refusal`).

Messages go out in the shape every common server accepts (`wire_messages`): string content everywhere
(an assistant message with tool calls and no text carries "", never null, which the llama.cpp server's
schema refuses), the tool calls' ids as the server gave them (unique within a reply), arguments as JSON
text ("{}" for none), and each tool result as a `tool` message with its `tool_call_id`, or, with
`tool_results_as: user`, the results of one reply as one user message, for servers whose chat template
drops tool messages (llama-cpp-python's chatml-function-calling).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import openai

from autovend.agents.llm.config import LLMConfig
from autovend.agents.llm.local_server import describe_exit, server_exit
from autovend.agents.llm.refusal import describe_refusal, is_refusal, rejected_fields, relevant, server_text
from autovend.errors import LLMError

_OVERFLOW_HINTS = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
)


class ContextOverflowError(LLMError):
    """The server refused a request longer than the model's context: evict older turns or lower the budget."""


class RequestRefusedError(LLMError):
    """The server refused the request in a way no retry can fix; `fields` are the request fields it named."""

    def __init__(self, message: str, status: int | None, fields: list[str]) -> None:
        super().__init__(message)
        self.status = status
        self.fields = fields


@dataclass
class Usage:
    """Token counts of one or more requests (`requests` counts the answered ones).

    input_tokens: prompt tokens as billed (cached ones included); cached_tokens: the part served
    from the provider's prompt cache; output_tokens: completion tokens (reasoning included);
    reasoning_tokens: the reasoning part of the output, when reported; unreported: answered
    requests whose response carried no usage (their tokens are missing from the totals).
    """

    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    unreported: int = 0

    def add(self, other: Usage) -> None:
        """Add `other`'s counts to these."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def plus(self, other: Usage) -> Usage:
        """A new `Usage`: these counts plus `other`'s."""
        out = Usage(**asdict(self))
        out.add(other)
        return out

    def to_dict(self) -> dict[str, int]:
        """JSON-ready counts."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Usage:
        """Counts from `to_dict` (missing keys are 0)."""
        d = d or {}
        return cls(**{f.name: int(d.get(f.name, 0) or 0) for f in fields(cls)})


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if obj is None:
            return None
        obj = obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
    return obj


def parse_usage(raw: dict[str, Any] | None) -> Usage:
    """One request's `Usage` from the response's `usage` object (OpenAI, DeepSeek, vLLM, Ollama names)."""
    if not raw:
        return Usage(requests=1, unreported=1)
    prompt = int(raw.get("prompt_tokens") or raw.get("input_tokens") or 0)
    output = int(raw.get("completion_tokens") or raw.get("output_tokens") or 0)
    cached = (
        _get(raw, "prompt_tokens_details", "cached_tokens")
        or raw.get("prompt_cache_hit_tokens")  # DeepSeek
        or _get(raw, "input_tokens_details", "cached_tokens")
        or 0
    )
    reasoning = _get(raw, "completion_tokens_details", "reasoning_tokens") or 0
    return Usage(
        requests=1,
        input_tokens=prompt,
        cached_tokens=min(int(cached), prompt),
        output_tokens=output,
        reasoning_tokens=int(reasoning),
    )


@dataclass
class Completion:
    """One answered request: the assistant `message` (OpenAI message dict) and what it cost.

    message: {"role": "assistant", "content": str | None, "tool_calls": [...]} with every tool
    call as {"id", "type": "function", "function": {"name", "arguments" (text)}}; reasoning: the
    server's separate reasoning text, if any (kept out of the conversation); usage: this request's
    tokens; raw_usage: the server's usage object; attempts: tries it took; retries: one entry per
    failed try (attempt, error, wait in seconds); latency_s: time of the successful try.
    """

    message: dict[str, Any]
    finish_reason: str | None
    usage: Usage
    raw_usage: dict[str, Any] | None
    reasoning: str | None = None
    attempts: int = 1
    retries: list[dict[str, Any]] = field(default_factory=list)
    latency_s: float = 0.0


def _tool_call_dict(call: Any, fallback_id: str) -> dict[str, Any]:
    fn = _get(call, "function")
    args = _get(fn, "arguments")
    if args is not None and not isinstance(args, str):  # some servers send an object instead of JSON text
        args = json.dumps(args, ensure_ascii=False)
    return {
        "id": str(_get(call, "id") or fallback_id),
        "type": "function",
        "function": {"name": str(_get(fn, "name") or ""), "arguments": "" if args is None else args},
    }


def assistant_message(message: Any, id_prefix: str = "call") -> tuple[dict[str, Any], str | None]:
    """The assistant message dict to keep in the conversation, and the reasoning text kept apart.

    The content is a string ("" when the model sent none); tool-call ids are the server's, except that
    a call without one gets `{id_prefix}_{i}` and a repeated id within the reply gets `_{i}` appended, so
    every tool result answers exactly one call.
    """
    calls = _get(message, "tool_calls") or []
    content = _get(message, "content")
    out: dict[str, Any] = {"role": "assistant", "content": content if isinstance(content, str) else ""}
    if calls:
        out["tool_calls"] = []
        seen: set[str] = set()
        for i, c in enumerate(calls):
            tc = _tool_call_dict(c, f"{id_prefix}_{i}")
            if tc["id"] in seen:
                tc["id"] = f"{tc['id']}_{i}"
            seen.add(tc["id"])
            out["tool_calls"].append(tc)
    extra = getattr(message, "model_extra", None) or {}
    reasoning = _get(message, "reasoning_content") or extra.get("reasoning_content") or extra.get("reasoning")
    return out, reasoning if isinstance(reasoning, str) and reasoning else None


TOOL_RESULTS_HEADER = "[Results of your tool calls, in order]"


def wire_messages(messages: list[dict[str, Any]], tool_results_as: str = "tool") -> list[dict[str, Any]]:
    """The conversation as sent (see the module docstring): no null content, arguments as JSON text.

    Messages kept from older runs (content None) are sent in the same shape; the kept ones are not changed.
    With `tool_results_as="user"` the tool messages after an assistant message go as one user message
    (`TOOL_RESULTS_HEADER`, then per call `n. name: result`, in the order of the calls), for servers that
    drop tool messages; the ids stay out of the text (a server's random ids would change the prompt from run
    to run and spoil its prefix cache).
    """
    out: list[dict[str, Any]] = []
    calls: dict[str, tuple[int, str]] = {}
    for m in messages:
        if tool_results_as == "user" and m.get("role") == "tool":
            n, name = calls.get(str(m.get("tool_call_id", "")), (0, "tool"))
            line = f"{n}. {name}: {m.get('content') or ''}"
            last = out[-1] if out else None
            if last is not None and last.get("role") == "user" and str(last["content"]).startswith(TOOL_RESULTS_HEADER):
                last["content"] += "\n\n" + line
            else:
                out.append({"role": "user", "content": TOOL_RESULTS_HEADER + "\n" + line})
            continue
        for i, tc in enumerate(m.get("tool_calls") or (), 1):
            calls[str(tc.get("id", ""))] = (i, str(tc.get("function", {}).get("name", "")))
        if m.get("content") is None or (m.get("role") == "assistant" and m.get("tool_calls")):
            m = dict(m)
            if m.get("content") is None:
                m["content"] = ""
            if m.get("tool_calls"):
                m["tool_calls"] = [
                    tc
                    if isinstance(tc.get("function", {}).get("arguments"), str) and tc["function"]["arguments"].strip()
                    else {**tc, "function": {**tc.get("function", {}), "arguments": "{}"}}
                    for tc in m["tool_calls"]
                ]
        out.append(m)
    return out


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _is_retryable(exc: Exception) -> bool:
    if isinstance(exc, (openai.RateLimitError, openai.APIConnectionError, openai.APIResponseValidationError)):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in (408, 409)
    return False


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {text[:300]}"


class ChatClient:
    """Chat Completions requests to one model (see the module docstring)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str,
        config: LLMConfig,
        rng: np.random.Generator,
        sleep: Callable[[float], None] = time.sleep,
        seed: int | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.config = config
        self.rng = rng
        self.sleep = sleep
        self.seed = seed
        self.on_retry: Callable[[dict[str, Any]], None] | None = None  # told of each failed try before the wait
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=config.request_timeout_s, max_retries=0
        )

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        c = self.config
        kwargs: dict[str, Any] = {"model": self.model, "messages": wire_messages(messages, c.tool_results_as)}
        if tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = "auto"
            if c.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = c.parallel_tool_calls
        if c.temperature is not None:
            kwargs["temperature"] = c.temperature
        if c.max_completion_tokens is not None:
            kwargs["max_completion_tokens"] = c.max_completion_tokens
        if c.reasoning_effort is not None:
            kwargs["reasoning_effort"] = c.reasoning_effort
        if c.send_seed and self.seed is not None:
            kwargs["seed"] = self.seed
        if c.extra_body:
            kwargs["extra_body"] = dict(c.extra_body)
        return kwargs

    def _raise_if_final(self, exc: Exception, request: dict[str, Any]) -> None:
        """Raise the `LLMError` for an error no retry can fix; return for one worth retrying."""
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
        body = getattr(exc, "body", None)
        message = getattr(exc, "message", None) or str(exc)
        text = f"{message} {server_text(body, message)}"
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            raise LLMError(
                f"{self.model}: the API key was refused ({_describe(exc)}); set the key in the variable "
                "named by --api-key-env"
            ) from exc
        if isinstance(exc, openai.NotFoundError):
            raise LLMError(
                f"{self.model}: not found at {self.base_url or 'the default OpenAI URL'} ({_describe(exc)}); "
                "check --base-url (it usually ends in /v1) and the model name"
            ) from exc
        if status is not None and is_refusal(status, text):
            if status in (400, 413) and any(h in text.lower() for h in _OVERFLOW_HINTS):
                raise ContextOverflowError(
                    f"{self.model}: the request does not fit the model's context ({_describe(exc)}); "
                    "lower context_budget_tokens in the harness config"
                ) from exc
            fields = [r.field for r in relevant(rejected_fields(body, message), request)]
            raise RequestRefusedError(
                f"{self.model}: the server refused the request, not retried because the same request would be "
                f"refused again ({describe_refusal(status, body, message, request)}). Check the model name and "
                "the request options (temperature, reasoning_effort, extra_body) for this server; a rejected "
                "messages field is a message shape this server does not take (docs/llm-agents.md, Servers)",
                status,
                fields,
            ) from exc
        if not _is_retryable(exc):
            raise LLMError(f"{self.model}: request failed ({_describe(exc)})") from exc

    def _raise_if_server_died(self, exc: Exception) -> None:
        """After a connection error: raise `LLMError` if the model server this harness started has ended."""
        if not isinstance(exc, openai.APIConnectionError):
            return
        code = server_exit(self.base_url)
        if code is not None:
            raise LLMError(
                f"{self.model}: the model server died ({describe_exit(code)}); no retry can reach it. The run keeps "
                "its last completed day: see the server's log, start it again and continue with --resume"
            ) from exc

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed try `attempt` (1-based): half the capped exponential step plus jitter."""
        c = self.config
        step = min(c.backoff_max_s, c.backoff_initial_s * 2.0 ** (attempt - 1))
        wait = step / 2.0 + float(self.rng.uniform(0.0, step / 2.0))
        if retry_after is not None:
            wait = max(wait, min(retry_after, c.backoff_max_s))
        return wait

    def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], id_prefix: str = "call"
    ) -> Completion:
        """Send the conversation and return the model's reply (retrying as the module docstring says)."""
        kwargs = self._request(messages, tools)
        retries: list[dict[str, Any]] = []
        attempts = self.config.max_attempts
        for attempt in range(1, attempts + 1):
            start = time.perf_counter()
            try:
                response = self._client.chat.completions.create(**kwargs)
                if not getattr(response, "choices", None):
                    raise openai.APIResponseValidationError(
                        response=None,  # type: ignore[arg-type]
                        body=None,
                        message="the server answered without any choice",
                    )
            except Exception as exc:
                self._raise_if_final(exc, kwargs)
                self._raise_if_server_died(exc)
                if attempt == attempts:
                    raise LLMError(
                        f"{self.model}: gave up after {attempts} attempts; last error {_describe(exc)}. The run "
                        "keeps its last completed day: fix the cause and continue with --resume"
                    ) from exc
                wait = self.backoff(attempt, _retry_after(exc))
                info = {"attempt": attempt, "error": _describe(exc), "wait_s": round(wait, 3)}
                retries.append(info)
                if self.on_retry is not None:
                    self.on_retry(info)
                self.sleep(wait)
                self._raise_if_server_died(exc)  # its watcher may have noticed the end while we waited
                continue
            latency = time.perf_counter() - start
            choice = response.choices[0]
            message, reasoning = assistant_message(choice.message, id_prefix)
            raw = response.usage.model_dump(exclude_none=True) if getattr(response, "usage", None) else None
            if raw is not None and getattr(response.usage, "model_extra", None):
                raw.update({k: v for k, v in response.usage.model_extra.items() if v is not None})
            return Completion(
                message=message,
                finish_reason=getattr(choice, "finish_reason", None),
                usage=parse_usage(raw),
                raw_usage=raw,
                reasoning=reasoning,
                attempts=attempt,
                retries=retries,
                latency_s=latency,
            )
        raise AssertionError("unreachable")  # pragma: no cover


def api_key_for(api_key_env: str, base_url: str | None, environ: dict[str, str] | None = None) -> str:
    """The API key from the environment variable `api_key_env`; local servers (a base URL) may go without."""
    env = os.environ if environ is None else environ
    key = env.get(api_key_env, "").strip()
    if key:
        return key
    if base_url is not None:
        return "EMPTY"  # vLLM and Ollama accept any key unless started with one
    raise LLMError(
        f"no API key: set the environment variable {api_key_env} (or name another with --api-key-env), "
        "or give --base-url of a local server"
    )
