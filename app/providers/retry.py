"""Provider HTTP calls and their retries: failures mapped to typed provider errors, transient ones
retried with exponential backoff and jitter, honouring ``Retry-After``."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
import structlog

from app.core.backoff import backoff_delay
from app.providers.protocols import PermanentProviderError, TransientProviderError

log = structlog.get_logger("app.providers.retry")

T = TypeVar("T")

MAX_RETRY_AFTER_S = 120.0
_MAX_ERROR_CHARS = 300

# (outcome: "ok", "transient_error" or "permanent_error", the result when ok, seconds the attempt took)
OutcomeHook = Callable[[str, Any, float], None]


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


def error_detail(response: httpx.Response) -> str:
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


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    *,
    timeout: httpx.Timeout,  # noqa: ASYNC109 (an HTTP timeout passed to httpx)
    label: str,
    api_key: str | None,
    extra_headers: dict[str, str] | None = None,
) -> httpx.Response:
    """One JSON POST; a 2xx answer is returned, everything else raises a typed provider error.

    Sent with ``Accept: application/json``, the bearer ``api_key`` when set, then ``extra_headers``.
    Timeouts, connection failures, 429 and 5xx are transient (with the ``Retry-After`` asked);
    other failures are permanent. Messages start with ``label`` and never show ``api_key``.
    """
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    headers.update(extra_headers or {})
    try:
        response = await client.post(url, json=payload, headers=headers, timeout=timeout)
    except httpx.TimeoutException as error:
        raise TransientProviderError(
            f"{label} request timed out ({type(error).__name__})"
        ) from error
    except httpx.TransportError as error:
        raise TransientProviderError(
            f"{label} connection failed ({type(error).__name__})"
        ) from error
    except httpx.HTTPError as error:
        raise PermanentProviderError(f"{label} request failed ({type(error).__name__})") from error
    status = response.status_code
    if 200 <= status < 300:
        return response
    message = f"{label} provider returned HTTP {status}{error_detail(response)}"
    if api_key:
        message = message.replace(api_key, "***")
    if status == 429 or status >= 500:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        raise TransientProviderError(message, retry_after=retry_after, status=status)
    raise PermanentProviderError(message, status=status)


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    max_attempts: int,
    sleep: Callable[[float], Awaitable[None]],
    rng: random.Random,
    on_outcome: OutcomeHook | None = None,
    describe: str = "LLM call",
    logger: Any = log,
    retry_event: str = "llm_retry",
    permanent_event: str | None = None,
) -> T:
    """``attempt()``'s result, retrying TransientProviderError up to ``max_attempts`` attempts.

    After a transient failure it sleeps ``backoff_delay`` or the ``Retry-After`` asked, whichever
    is longer; the last one is raised as "<describe> failed after N attempts: …". A permanent
    failure is raised at once (logged as ``permanent_event`` when given). ``on_outcome`` hears
    of every attempt.
    """
    for number in range(1, max_attempts + 1):
        started = time.perf_counter()
        try:
            result = await attempt()
        except PermanentProviderError as error:
            _report(on_outcome, "permanent_error", None, started)
            if permanent_event:
                logger.warning(permanent_event, status=error.status, attempt=number)
            raise
        except TransientProviderError as error:
            _report(on_outcome, "transient_error", None, started)
            if number >= max_attempts:
                raise TransientProviderError(
                    f"{describe} failed after {number} attempts: {error}",
                    retry_after=error.retry_after,
                    status=error.status,
                ) from error
            delay = max(backoff_delay(number, rng), error.retry_after or 0.0)
            logger.warning(
                retry_event, status=error.status, attempt=number, delay_s=round(delay, 3)
            )
            await sleep(delay)
            continue
        _report(on_outcome, "ok", result, started)
        return result
    raise ValueError("max_attempts must be at least 1")


def _report(hook: OutcomeHook | None, outcome: str, result: Any, started: float) -> None:
    if hook is not None:
        hook(outcome, result, time.perf_counter() - started)


__all__ = [
    "MAX_RETRY_AFTER_S",
    "OutcomeHook",
    "error_detail",
    "parse_retry_after",
    "post_json",
    "with_retries",
]
