"""The service's error hierarchy: each error carries its code and HTTP status (docs/api.md, Errors)."""

from __future__ import annotations

import json
import math
from typing import Any


def error_envelope(
    code: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The one shape of every error the API returns: ``{"error": {code, message, details}}``."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


def error_envelope_bytes(code: str, message: str, details: dict[str, Any] | None = None) -> bytes:
    """The envelope as a JSON body, for the layers below FastAPI (ASGI middleware, the parser)."""
    return json.dumps(error_envelope(code, message, details), separators=(",", ":")).encode()


class AppError(Exception):
    """Base of every error that is rendered as the API error envelope."""

    code = "INTERNAL"
    http_status = 500

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    @property
    def headers(self) -> dict[str, str]:
        """Extra response headers (Retry-After on 429 and 503)."""
        return {}


class InvalidArgument(AppError):
    code = "INVALID_ARGUMENT"
    http_status = 400


class Unauthenticated(AppError):
    code = "UNAUTHENTICATED"
    http_status = 401


class NotFound(AppError):
    code = "NOT_FOUND"
    http_status = 404

    def __init__(self, kind: str, resource: str) -> None:
        super().__init__(
            f"{kind.capitalize()} not found: {resource}", {"type": kind, "resource": resource}
        )


class Conflict(AppError):
    code = "CONFLICT"
    http_status = 409


class PayloadTooLarge(AppError):
    code = "PAYLOAD_TOO_LARGE"
    http_status = 413


class RateLimited(AppError):
    code = "RATE_LIMITED"
    http_status = 429

    def __init__(
        self, message: str, retry_after_s: float, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, details)
        self.retry_after_s = retry_after_s

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(max(1, math.ceil(self.retry_after_s)))}


class Unavailable(AppError):
    code = "UNAVAILABLE"
    http_status = 503

    def __init__(
        self, message: str, details: dict[str, Any] | None = None, retry_after_s: float = 5
    ) -> None:
        super().__init__(message, details)
        self.retry_after_s = retry_after_s

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(max(1, math.ceil(self.retry_after_s)))}


class StorageUnavailable(Unavailable):
    """The database cannot take the write (disk full, read-only file, I/O error): nothing was stored."""

    code = "STORAGE_UNAVAILABLE"
