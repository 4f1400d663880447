"""Pure ASGI middleware (not BaseHTTPMiddleware, which breaks contextvars): request id, body-size
limit, body read timeout, access log and request metrics."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import structlog
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import error_envelope_bytes
from app.metrics import Metrics

log = structlog.get_logger("app.access")
REQUEST_ID_HEADER = b"x-request-id"


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` past the limit. An HTTPException, because FastAPI turns any other
    error raised while it reads the body into a 400."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body exceeds {limit} bytes")


class BodyTimedOut(HTTPException):
    """Raised from ``receive`` when the body has not arrived in time (a client trickling it)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"the request body did not arrive within {seconds:g} s")


class RequestContextMiddleware:
    """Request id in and out, body limit and read timeout, one access-log line and metrics per request."""

    def __init__(
        self, app: ASGIApp, max_body_bytes: int, metrics: Metrics, body_timeout_s: float = 60.0
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(REQUEST_ID_HEADER, b"").decode("latin-1")[:128] or uuid.uuid4().hex
        started = time.perf_counter()
        state: dict[str, Any] = {"status": 500, "started": False}
        structlog.contextvars.bind_contextvars(request_id=request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                state["started"] = True
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (REQUEST_ID_HEADER, request_id.encode("latin-1")),
                ]
            await send(message)

        try:
            declared = headers.get(b"content-length")
            if declared is not None and not declared.strip().isdigit():
                await self._reject(
                    send_with_id,
                    400,
                    "INVALID_ARGUMENT",
                    "Content-Length must be a non-negative integer",
                )
            elif self._declared_too_large(headers):
                await self._reject_too_large(send_with_id)
            else:
                await self.app(scope, self._limited(receive), send_with_id)
        except BodyTooLarge:
            if not state["started"]:
                await self._reject_too_large(send_with_id)
        except BodyTimedOut as exc:
            if not state["started"]:
                await self._reject(send_with_id, 408, "REQUEST_TIMEOUT", str(exc.detail))
        finally:
            self._record(scope, state["status"], time.perf_counter() - started)
            structlog.contextvars.unbind_contextvars("request_id")

    def _declared_too_large(self, headers: dict[bytes, bytes]) -> bool:
        declared = headers.get(b"content-length")
        return declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes

    def _limited(self, receive: Receive) -> Receive:
        """``receive`` with the size limit, and a deadline on the whole body while it arrives."""
        seen = 0
        complete = False
        deadline = asyncio.get_running_loop().time() + self.body_timeout_s

        async def wrapped() -> Message:
            nonlocal seen, complete
            if complete:  # after the body only a disconnect can come, whenever it does
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise BodyTimedOut(self.body_timeout_s) from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
                complete = not message.get("more_body", False)
            return message

        return wrapped

    async def _reject_too_large(self, send: Send) -> None:
        await self._reject(
            send, 413, "PAYLOAD_TOO_LARGE", f"request body exceeds {self.max_body_bytes} bytes"
        )

    async def _reject(self, send: Send, status: int, code: str, message: str) -> None:
        """The error envelope; the connection closes (the rest of the body is never read)."""
        body = error_envelope_bytes(code, message)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        route = getattr(scope.get("route"), "path", None) or "unmatched"
        method = scope.get("method", "")
        self.metrics.requests.labels(route, method, str(status)).inc()
        self.metrics.latency.labels(route).observe(seconds)
        state = scope.get("state") or {}
        if "tenant" in state:  # set once the request's key was accepted
            kind = state.get("kind", "other")
            self.metrics.tenant_requests.labels(state["tenant"], kind, str(status)).inc()
        log.info(
            "request",
            method=method,
            route=route,
            status=status,
            duration_ms=round(seconds * 1000, 2),
        )
