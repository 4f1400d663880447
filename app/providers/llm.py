"""Chat completions over an OpenAI-compatible HTTP API, with retries of transient errors."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx
import structlog

from app.core.backoff import BASE_DELAY_S, JITTER_RATIO, MAX_DELAY_S, backoff_delay
from app.providers.protocols import ChatResult, PermanentProviderError, ToolCallResult
from app.providers.retry import (
    MAX_RETRY_AFTER_S,
    error_detail,
    parse_retry_after,
    post_json,
    with_retries,
)

log = structlog.get_logger("app.providers.llm")

FORCED_TOOL_FALLBACKS: tuple[str, ...] = ("required", "auto")
_TEXT_PART_TYPES = (None, "text", "output_text")
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")

# (outcome, token usage, seconds the attempt took)
Observer = Callable[[str, dict[str, int], float], None]


@dataclass(slots=True)
class _Tally:
    """HTTP attempts spent on one logical call."""

    count: int = 0


class OpenAICompatibleLLM:
    """A ChatModel over ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_attempts: int = 4,
        temperature: float = 0.0,
        max_output_tokens: int = 4096,
        extra_headers: dict[str, str] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        observe: Observer | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._client = client
        self._url = f"{base_url.rstrip('/')}/chat/completions"
        self._model = model
        self._api_key = api_key
        self._timeout = httpx.Timeout(timeout_s)
        self._max_attempts = max_attempts
        self._temperature = temperature
        self._max_output_tokens = max_output_tokens
        self._extra_headers = dict(extra_headers or {})
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._observe = observe

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> ChatResult:
        """One chat completion, retrying transient errors up to ``max_attempts`` attempts."""
        return await self._execute(self._payload(messages, tools, tool_choice), _Tally())

    async def complete_with_forced_tool(
        self, messages: list[dict[str, Any]], tool: dict[str, Any]
    ) -> ChatResult:
        """A completion forcing ``tool``; a 400 on the forced choice falls back to "required", then "auto"."""
        forced = {"type": "function", "function": {"name": tool["function"]["name"]}}
        choices: list[Any] = [forced, *FORCED_TOOL_FALLBACKS]
        tally = _Tally()
        for index, choice in enumerate(choices):
            try:
                result = await self._execute(self._payload(messages, [tool], choice), tally)
            except PermanentProviderError as error:
                if error.status != 400 or index == len(choices) - 1:
                    raise
                log.warning("llm_tool_choice_rejected", fallback=choices[index + 1])
                continue
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _payload(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: Any
    ) -> dict[str, Any]:
        """The JSON body of one request."""
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": messages,
            "temperature": self._temperature,
            "max_tokens": self._max_output_tokens,
        }
        if tools:
            payload["tools"] = tools
        if tool_choice is not None:
            payload["tool_choice"] = tool_choice
        return payload

    async def _execute(self, payload: dict[str, Any], tally: _Tally) -> ChatResult:
        """Send ``payload`` until it succeeds, fails permanently, or runs out of attempts."""

        async def attempt() -> ChatResult:
            tally.count += 1
            return await self._attempt(payload)

        result = await with_retries(
            attempt,
            max_attempts=self._max_attempts,
            sleep=self._sleep,
            rng=self._rng,
            on_outcome=self._notify,
            describe="LLM call",
            logger=log,
            retry_event="llm_retry",
            permanent_event="llm_permanent_error",
        )
        return replace(result, attempts=tally.count)

    async def _attempt(self, payload: dict[str, Any]) -> ChatResult:
        """One HTTP attempt, its failures mapped to typed provider errors."""
        response = await post_json(
            self._client,
            self._url,
            payload,
            timeout=self._timeout,
            label="LLM",
            api_key=self._api_key,
            extra_headers=self._extra_headers,
        )
        return parse_chat_response(response, default_model=self._model)

    def _notify(self, outcome: str, result: ChatResult | None, seconds: float) -> None:
        """Report one attempt's outcome and usage to the observer; its failure never fails the call."""
        if self._observe is None:
            return
        try:
            self._observe(outcome, dict(result.usage) if result is not None else {}, seconds)
        except Exception:
            log.exception("llm_observer_failed")


def parse_chat_response(
    response: httpx.Response, *, default_model: str | None = None
) -> ChatResult:
    """A ChatResult from a 2xx answer; malformed answers raise PermanentProviderError."""
    status = response.status_code
    try:
        body = response.json()
    except ValueError as error:
        raise PermanentProviderError("LLM answer is not JSON", status=status) from error
    if not isinstance(body, dict):
        raise PermanentProviderError("LLM answer is not a JSON object", status=status)
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise PermanentProviderError(
            f"LLM answer has no choices{error_detail(response)}", status=status
        )
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise PermanentProviderError("LLM answer has no message object", status=status)
    model = body.get("model")
    return ChatResult(
        content=_content(message.get("content")),
        tool_calls=_tool_calls(message),
        usage=_usage(body.get("usage")),
        model=model if isinstance(model, str) else default_model,
    )


def _content(raw: Any) -> str | None:
    """Message content as text: a string as is, content parts joined, anything else None."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        texts = [
            part if isinstance(part, str) else part.get("text")
            for part in raw
            if isinstance(part, str)
            or (
                isinstance(part, dict)
                and isinstance(part.get("type"), (str, type(None)))
                and part.get("type") in _TEXT_PART_TYPES
            )
        ]
        return "".join(text for text in texts if isinstance(text, str))
    return None


def _tool_calls(message: dict[str, Any]) -> list[ToolCallResult]:
    """Tool calls of a message (entries without a function name are skipped); legacy function_call too."""
    calls: list[ToolCallResult] = []
    raw_calls = message.get("tool_calls")
    for raw in raw_calls if isinstance(raw_calls, list) else []:
        function = raw.get("function") if isinstance(raw, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            call_id = raw.get("id")
            calls.append(
                ToolCallResult(
                    name=function["name"],
                    arguments=function.get("arguments"),
                    id=call_id if isinstance(call_id, str) else None,
                )
            )
    legacy = message.get("function_call")
    if not calls and isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        calls.append(ToolCallResult(name=legacy["name"], arguments=legacy.get("arguments")))
    return calls


def _usage(raw: Any) -> dict[str, int]:
    """Token usage with all three counts; missing or invalid counts are 0 (total: their sum)."""
    source = raw if isinstance(raw, dict) else {}
    usage = {key: _count(source.get(key)) for key in _USAGE_KEYS}
    if not usage["total_tokens"]:
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _count(value: Any) -> int:
    """A non-negative token count, or 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


__all__ = [
    "BASE_DELAY_S",
    "FORCED_TOOL_FALLBACKS",
    "JITTER_RATIO",
    "MAX_DELAY_S",
    "MAX_RETRY_AFTER_S",
    "Observer",
    "OpenAICompatibleLLM",
    "backoff_delay",
    "parse_chat_response",
    "parse_retry_after",
]
