"""OpenAICompatibleLLM against a mocked provider HTTP API."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
import respx

from app.providers.llm import (
    MAX_RETRY_AFTER_S,
    OpenAICompatibleLLM,
    backoff_delay,
    parse_retry_after,
)
from app.providers.protocols import ChatModel, PermanentProviderError, TransientProviderError

BASE = "https://llm.example.test/v1"
URL = f"{BASE}/chat/completions"
KEY = "sk-test-secret-123"
MESSAGES = [{"role": "user", "content": "hello"}]
TOOL = {
    "type": "function",
    "function": {"name": "update_working_memory", "parameters": {"type": "object"}},
}


def answer(
    message: dict[str, Any] | None = None, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    """A chat completion body with one choice."""
    body: dict[str, Any] = {
        "id": "cmpl-1",
        "model": "served-model",
        "choices": [{"index": 0, "message": message or {"role": "assistant", "content": "hi"}}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_message(arguments: Any) -> dict[str, Any]:
    """An assistant message with one tool call carrying ``arguments``."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "update_working_memory", "arguments": arguments},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class Harness:
    """An LLM wired to a recording sleep and observer."""

    def __init__(self, client: httpx.AsyncClient, **overrides: Any) -> None:
        self.sleeps: list[float] = []
        self.events: list[tuple[str, dict[str, int]]] = []
        options: dict[str, Any] = {
            "base_url": BASE,
            "model": "test-model",
            "api_key": KEY,
            "sleep": self._sleep,
            "rng": random.Random(7),
            "observe": self._observe,
        }
        options.update(overrides)
        self.llm = OpenAICompatibleLLM(client, **options)

    async def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def _observe(self, outcome: str, usage: dict[str, int], seconds: float) -> None:
        assert seconds >= 0
        self.events.append((outcome, usage))


@pytest.fixture
async def client():
    async with httpx.AsyncClient() as http:
        yield http


@pytest.fixture
def harness(client: httpx.AsyncClient) -> Harness:
    return Harness(client)


@pytest.fixture
def api():
    with respx.mock(assert_all_called=False) as router:
        yield router


def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
    """The JSON body of one recorded request."""
    return json.loads(route.calls[index].request.content)


def test_the_provider_satisfies_the_chat_model_protocol(harness: Harness):
    model: ChatModel = harness.llm
    assert callable(model.complete) and callable(model.complete_with_forced_tool)


async def test_success_returns_content_model_and_one_attempt(harness: Harness, api: respx.Router):
    api.post(URL).respond(200, json=answer())
    result = await harness.llm.complete(MESSAGES)
    assert result.content == "hi"
    assert result.tool_calls == []
    assert result.model == "served-model"
    assert result.attempts == 1
    assert harness.sleeps == []


async def test_tool_call_arguments_as_json_string_pass_through(harness: Harness, api: respx.Router):
    arguments = '{"sections": {"Session Title": {"op": "KEEP"}}}'
    api.post(URL).respond(200, json=answer(tool_message(arguments)))
    result = await harness.llm.complete(MESSAGES, tools=[TOOL])
    assert len(result.tool_calls) == 1
    call = result.tool_calls[0]
    assert (call.name, call.id, call.arguments) == ("update_working_memory", "call_1", arguments)
    assert result.content is None


async def test_tool_call_arguments_as_object_pass_through(harness: Harness, api: respx.Router):
    arguments = {"sections": {"Session Title": {"op": "UPDATE", "content": "x"}}}
    api.post(URL).respond(200, json=answer(tool_message(arguments)))
    result = await harness.llm.complete(MESSAGES, tools=[TOOL])
    assert result.tool_calls[0].arguments == arguments


async def test_legacy_function_call_becomes_one_tool_call(harness: Harness, api: respx.Router):
    message = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "f", "arguments": "{}"},
    }
    api.post(URL).respond(200, json=answer(message))
    result = await harness.llm.complete(MESSAGES)
    assert [(c.name, c.arguments, c.id) for c in result.tool_calls] == [("f", "{}", None)]


async def test_content_parts_are_joined(harness: Harness, api: respx.Router):
    parts = [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]
    api.post(URL).respond(200, json=answer({"role": "assistant", "content": parts}))
    assert (await harness.llm.complete(MESSAGES)).content == "Hello, world"


async def test_usage_is_returned_and_observed(harness: Harness, api: respx.Router):
    usage = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    api.post(URL).respond(200, json=answer(usage=usage))
    result = await harness.llm.complete(MESSAGES)
    assert result.usage == usage
    assert harness.events == [("ok", usage)]


async def test_missing_usage_gives_zeros(harness: Harness, api: respx.Router):
    api.post(URL).respond(200, json=answer())
    result = await harness.llm.complete(MESSAGES)
    assert result.usage == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


async def test_429_with_retry_after_seconds_waits_at_least_that_long(
    harness: Harness, api: respx.Router
):
    route = api.post(URL)
    route.side_effect = [
        httpx.Response(429, headers={"Retry-After": "2"}),
        httpx.Response(200, json=answer()),
    ]
    result = await harness.llm.complete(MESSAGES)
    assert result.content == "hi"
    assert result.attempts == 2
    assert route.call_count == 2
    assert len(harness.sleeps) == 1 and harness.sleeps[0] >= 2


async def test_429_with_http_date_retry_after(harness: Harness, api: respx.Router):
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    route = api.post(URL)
    route.side_effect = [
        httpx.Response(429, headers={"Retry-After": when}),
        httpx.Response(200, json=answer()),
    ]
    result = await harness.llm.complete(MESSAGES)
    assert result.attempts == 2
    assert len(harness.sleeps) == 1 and 25 <= harness.sleeps[0] <= 31


async def test_small_retry_after_never_shortens_the_backoff(harness: Harness, api: respx.Router):
    route = api.post(URL)
    route.side_effect = [
        httpx.Response(429, headers={"Retry-After": "0"}),
        httpx.Response(200, json=answer()),
    ]
    await harness.llm.complete(MESSAGES)
    assert 1.0 <= harness.sleeps[0] <= 1.25


async def test_huge_retry_after_is_capped(harness: Harness, api: respx.Router):
    route = api.post(URL)
    route.side_effect = [
        httpx.Response(503, headers={"Retry-After": "86400"}),
        httpx.Response(200, json=answer()),
    ]
    await harness.llm.complete(MESSAGES)
    assert harness.sleeps == [MAX_RETRY_AFTER_S]


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried_up_to_max_attempts(
    harness: Harness, api: respx.Router, status: int
):
    route = api.post(URL).respond(status, json={"error": {"message": "overloaded"}})
    with pytest.raises(TransientProviderError) as caught:
        await harness.llm.complete(MESSAGES)
    assert route.call_count == 4
    assert caught.value.status == status
    assert "overloaded" in str(caught.value)
    assert len(harness.sleeps) == 3
    assert [outcome for outcome, _ in harness.events] == ["transient_error"] * 4


async def test_final_transient_error_carries_the_last_retry_after(
    client: httpx.AsyncClient, api: respx.Router
):
    harness = Harness(client, max_attempts=2)
    route = api.post(URL).respond(429, headers={"Retry-After": "5"})
    with pytest.raises(TransientProviderError) as caught:
        await harness.llm.complete(MESSAGES)
    assert route.call_count == 2
    assert (caught.value.status, caught.value.retry_after) == (429, 5.0)


@pytest.mark.parametrize("failure", [httpx.ReadTimeout("slow"), httpx.ConnectError("refused")])
async def test_timeouts_and_connection_errors_are_retried_then_transient(
    harness: Harness, api: respx.Router, failure: Exception
):
    route = api.post(URL)
    route.side_effect = failure
    with pytest.raises(TransientProviderError) as caught:
        await harness.llm.complete(MESSAGES)
    assert route.call_count == 4
    assert caught.value.status is None
    assert len(harness.sleeps) == 3


async def test_recovery_after_two_failures(harness: Harness, api: respx.Router):
    route = api.post(URL)
    route.side_effect = [
        httpx.ReadTimeout("slow"),
        httpx.Response(502),
        httpx.Response(200, json=answer()),
    ]
    result = await harness.llm.complete(MESSAGES)
    assert result.content == "hi"
    assert result.attempts == 3
    assert route.call_count == 3
    assert [outcome for outcome, _ in harness.events] == [
        "transient_error",
        "transient_error",
        "ok",
    ]


async def test_sleeps_follow_the_exponential_schedule(harness: Harness, api: respx.Router):
    api.post(URL).respond(500)
    with pytest.raises(TransientProviderError):
        await harness.llm.complete(MESSAGES)
    for delay, base in zip(harness.sleeps, [1.0, 2.0, 4.0], strict=True):
        assert base <= delay <= base * 1.25


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_permanent_and_not_retried(
    harness: Harness, api: respx.Router, status: int
):
    route = api.post(URL).respond(status, json={"error": {"message": "bad things happened"}})
    with pytest.raises(PermanentProviderError) as caught:
        await harness.llm.complete(MESSAGES)
    assert route.call_count == 1
    assert caught.value.status == status
    assert "bad things happened" in str(caught.value)
    assert harness.sleeps == []
    assert harness.events == [("permanent_error", {})]


async def test_an_echoed_api_key_never_reaches_the_error(harness: Harness, api: respx.Router):
    api.post(URL).respond(401, json={"error": {"message": f"Incorrect API key provided: {KEY}"}})
    with pytest.raises(PermanentProviderError) as caught:
        await harness.llm.complete(MESSAGES)
    assert KEY not in str(caught.value)
    assert "Incorrect API key" in str(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"id": "x"}, id="missing-choices"),
        pytest.param({"choices": []}, id="empty-choices"),
        pytest.param({"choices": {"0": {}}}, id="choices-not-a-list"),
        pytest.param({"choices": [{"index": 0}]}, id="message-missing"),
        pytest.param({"choices": [{"message": "hi"}]}, id="message-not-an-object"),
        pytest.param([1, 2], id="body-not-an-object"),
    ],
)
async def test_malformed_answers_are_permanent(harness: Harness, api: respx.Router, body: Any):
    route = api.post(URL).respond(200, json=body)
    with pytest.raises(PermanentProviderError):
        await harness.llm.complete(MESSAGES)
    assert route.call_count == 1
    assert harness.sleeps == []


async def test_body_not_json_is_permanent(harness: Harness, api: respx.Router):
    route = api.post(URL).respond(200, text="<html>gateway says hi</html>")
    with pytest.raises(PermanentProviderError, match="not JSON"):
        await harness.llm.complete(MESSAGES)
    assert route.call_count == 1


@pytest.mark.parametrize("content", [None, ""])
async def test_empty_message_is_an_answer_not_an_error(
    harness: Harness, api: respx.Router, content: Any
):
    api.post(URL).respond(200, json=answer({"role": "assistant", "content": content}))
    result = await harness.llm.complete(MESSAGES)
    assert result.content == content
    assert result.tool_calls == []


async def test_forced_tool_choice_is_sent_first(harness: Harness, api: respx.Router):
    route = api.post(URL).respond(200, json=answer(tool_message("{}")))
    result = await harness.llm.complete_with_forced_tool(MESSAGES, TOOL)
    assert route.call_count == 1
    assert sent(route)["tools"] == [TOOL]
    assert sent(route)["tool_choice"] == {
        "type": "function",
        "function": {"name": "update_working_memory"},
    }
    assert result.tool_calls[0].name == "update_working_memory"


async def test_rejected_forced_choice_falls_back_to_required(harness: Harness, api: respx.Router):
    route = api.post(URL)
    route.side_effect = [
        httpx.Response(400, json={"error": {"message": "tool_choice not supported"}}),
        httpx.Response(200, json=answer(tool_message("{}"))),
    ]
    result = await harness.llm.complete_with_forced_tool(MESSAGES, TOOL)
    assert route.call_count == 2
    assert sent(route, 1)["tool_choice"] == "required"
    assert result.tool_calls[0].name == "update_working_memory"
    assert result.attempts == 2


async def test_rejected_required_choice_falls_back_to_auto(harness: Harness, api: respx.Router):
    route = api.post(URL)
    route.side_effect = [
        httpx.Response(400),
        httpx.Response(400),
        httpx.Response(200, json=answer(tool_message("{}"))),
    ]
    result = await harness.llm.complete_with_forced_tool(MESSAGES, TOOL)
    assert [sent(route, i)["tool_choice"] for i in range(3)][1:] == ["required", "auto"]
    assert result.attempts == 3


async def test_every_choice_rejected_raises_the_last_error(harness: Harness, api: respx.Router):
    route = api.post(URL).respond(400)
    with pytest.raises(PermanentProviderError) as caught:
        await harness.llm.complete_with_forced_tool(MESSAGES, TOOL)
    assert route.call_count == 3
    assert caught.value.status == 400


async def test_forced_tool_does_not_fall_back_on_other_errors(harness: Harness, api: respx.Router):
    route = api.post(URL).respond(401)
    with pytest.raises(PermanentProviderError) as caught:
        await harness.llm.complete_with_forced_tool(MESSAGES, TOOL)
    assert route.call_count == 1
    assert caught.value.status == 401


async def test_request_body_and_headers(client: httpx.AsyncClient, api: respx.Router):
    harness = Harness(client, max_output_tokens=1234, extra_headers={"X-Title": "context-engine"})
    route = api.post(URL).respond(200, json=answer())
    await harness.llm.complete(MESSAGES, tools=[TOOL], tool_choice="auto")
    body = sent(route)
    assert body == {
        "model": "test-model",
        "messages": MESSAGES,
        "temperature": 0.0,
        "max_tokens": 1234,
        "tools": [TOOL],
        "tool_choice": "auto",
    }
    headers = route.calls[0].request.headers
    assert headers["Authorization"] == f"Bearer {KEY}"
    assert headers["X-Title"] == "context-engine"


async def test_plain_request_has_no_tools_and_no_key_when_unset(
    client: httpx.AsyncClient, api: respx.Router
):
    harness = Harness(client, api_key=None)
    route = api.post(URL).respond(200, json=answer())
    await harness.llm.complete(MESSAGES)
    assert "tools" not in sent(route) and "tool_choice" not in sent(route)
    assert "Authorization" not in route.calls[0].request.headers


async def test_per_call_timeout_is_applied(client: httpx.AsyncClient, api: respx.Router):
    harness = Harness(client, timeout_s=7.5)
    route = api.post(URL).respond(200, json=answer())
    await harness.llm.complete(MESSAGES)
    assert route.calls[0].request.extensions["timeout"]["read"] == 7.5


async def test_base_url_with_trailing_slash(client: httpx.AsyncClient, api: respx.Router):
    harness = Harness(client, base_url=BASE + "/")
    route = api.post(URL).respond(200, json=answer())
    await harness.llm.complete(MESSAGES)
    assert route.call_count == 1
    assert str(route.calls[0].request.url) == URL


def test_backoff_values_lie_within_the_documented_bounds():
    rng = random.Random(42)
    for attempt in range(1, 8):
        base = min(8.0, 2.0 ** (attempt - 1))
        values = [backoff_delay(attempt, rng) for _ in range(200)]
        assert all(base <= value <= base * 1.25 for value in values)
        assert len(set(values)) > 1


def test_backoff_is_reproducible_with_a_seed():
    first = [backoff_delay(n, random.Random(3)) for n in range(1, 5)]
    second = [backoff_delay(n, random.Random(3)) for n in range(1, 5)]
    assert first == second


def test_parse_retry_after():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:10 GMT", now=now) == 10.0
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("100000") == MAX_RETRY_AFTER_S
    assert parse_retry_after("soon") is None
    assert parse_retry_after("") is None
    assert parse_retry_after(None) is None


def test_max_attempts_must_be_positive(client: httpx.AsyncClient):
    with pytest.raises(ValueError):
        OpenAICompatibleLLM(client, base_url=BASE, model="m", max_attempts=0)
