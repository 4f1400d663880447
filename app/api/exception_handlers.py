"""Every error becomes the envelope of api.md; validation errors are 400, not 422."""

from __future__ import annotations

from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import AppError

log = structlog.get_logger("app.api")

HTTP_CODES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 405: "INVALID_ARGUMENT",
    409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 429: "RATE_LIMITED", 503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def error_response(status: int, code: str, message: str, details: dict[str, Any] | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(body, status_code=status, headers=headers)


def _loc(loc: tuple[Any, ...]) -> list[Any]:
    return [part for part in loc]


async def _app_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return error_response(exc.http_status, exc.code, exc.message, exc.details)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": _loc(e.get("loc", ())), "message": e.get("msg", "invalid")} for e in exc.errors()]
    first = errors[0] if errors else {"loc": [], "message": "invalid request"}
    where = ".".join(str(p) for p in first["loc"])
    message = f"Invalid request: {where}: {first['message']}" if where else f"Invalid request: {first['message']}"
    return error_response(400, "INVALID_ARGUMENT", message, {"errors": errors})


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = HTTP_CODES.get(exc.status_code, "INTERNAL" if exc.status_code >= 500 else "INVALID_ARGUMENT")
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    return error_response(exc.status_code, code, message, {}, dict(exc.headers or {}))


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled_error", exc_info=exc)
    return error_response(500, "INTERNAL", "Internal server error")


def install_exception_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
