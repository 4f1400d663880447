"""Chat completions over an OpenAI-compatible HTTP API, with retries of transient errors."""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import structlog

from app.providers.protocols import (
    ChatResult,
    PermanentProviderError,
    ToolCallResult,
    TransientProviderError,
)

log = structlog.get_logger("app.providers.llm")

BASE_DELAY_S = 1.0
MAX_DELAY_S = 8.0
JITTER_RATIO = 0.25
MAX_RETRY_AFTER_S = 120.0
FORCED_TOOL_FALLBACKS: tuple[str, ...] = ("required", "auto")
_TEXT_PART_TYPES = (None, "text", "output_text")
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
_MAX_ERROR_CHARS = 300

# (outcome, token usage, seconds the attempt took)
Observer = Callable[[str, dict[str, int], float], None]


def backoff_delay(attempt: int, rng: random.Random) -> float:
    """Delay after failed ``attempt`` (1-based): ``min(8, 2^(attempt-1))`` s plus up to 25% jitter."""
    delay = min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (max(attempt, 1) - 1))
    return delay + rng.uniform(0.0, delay * JITTER_RATIO)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked by a ``Retry-After`` header (delta-seconds or HTTP-date), capped at 120 s."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


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

    def _headers(self) -> dict[str, str]:
        """Request headers: the bearer token when set, then the extra headers."""
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        headers.update(self._extra_headers)
        return headers

    async def _execute(self, payload: dict[str, Any], tally: _Tally) -> ChatResult:
        """Send ``payload`` until it succeeds, fails permanently, or runs out of attempts."""
        for attempt in range(1, self._max_attempts + 1):
            tally.count += 1
            started = time.perf_counter()
            try:
                result = await self._attempt(payload)
            except PermanentProviderError as error:
                self._notify("permanent_error", {}, time.perf_counter() - started)
                log.warning("llm_permanent_error", status=error.status, attempt=attempt)
                raise
            except TransientProviderError as error:
                self._notify("transient_error", {}, time.perf_counter() - started)
                if attempt >= self._max_attempts:
                    raise TransientProviderError(
                        f"LLM call failed after {attempt} attempts: {error}",
                        retry_after=error.retry_after,
                        status=error.status,
                    ) from error
                delay = max(backoff_delay(attempt, self._rng), error.retry_after or 0.0)
                log.warning("llm_retry", status=error.status, attempt=attempt, delay_s=round(delay, 3))
                await self._sleep(delay)
                continue
            self._notify("ok", dict(result.usage), time.perf_counter() - started)
            return replace(result, attempts=tally.count)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _attempt(self, payload: dict[str, Any]) -> ChatResult:
        """One HTTP attempt, its failures mapped to typed provider errors."""
        try:
            response = await self._client.post(
                self._url, json=payload, headers=self._headers(), timeout=self._timeout
            )
        except httpx.TimeoutException as error:
            raise TransientProviderError(f"LLM request timed out ({type(error).__name__})") from error
        except httpx.TransportError as error:
            raise TransientProviderError(f"LLM connection failed ({type(error).__name__})") from error
        except httpx.HTTPError as error:
            raise PermanentProviderError(f"LLM request failed ({type(error).__name__})") from error
        status = response.status_code
        if status == 429 or status >= 500:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            message = self._scrub(f"LLM provider returned HTTP {status}{_error_detail(response)}")
            raise TransientProviderError(message, retry_after=retry_after, status=status)
        if not 200 <= status < 300:
            message = self._scrub(f"LLM provider returned HTTP {status}{_error_detail(response)}")
            raise PermanentProviderError(message, status=status)
        return parse_chat_response(response, default_model=self._model)

    def _scrub(self, text: str) -> str:
        """``text`` with the API key masked, should a provider echo it."""
        return text.replace(self._api_key, "***") if self._api_key else text

    def _notify(self, outcome: str, usage: dict[str, int], seconds: float) -> None:
        """Report one attempt's outcome to the observer; an observer failure never fails the call."""
        if self._observe is None:
            return
        try:
            self._observe(outcome, usage, seconds)
        except Exception:
            log.exception("llm_observer_failed")


def _error_detail(response: httpx.Response) -> str:
    """``": <provider message>"`` from an error body, or ``""`` when it carries none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            message = error.get("message")
        elif isinstance(error, str):
            message = error
        message = message or body.get("message") or body.get("detail")
    if not isinstance(message, str) or not message.strip():
        return ""
    return f": {message.strip()[:_MAX_ERROR_CHARS]}"


def parse_chat_response(response: httpx.Response, *, default_model: str | None = None) -> ChatResult:
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
            f"LLM answer has no choices{_error_detail(response)}", status=status
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
            if isinstance(part, str) or (isinstance(part, dict) and part.get("type") in _TEXT_PART_TYPES)
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
