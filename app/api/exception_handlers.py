"""Every error becomes the envelope of docs/api.md; validation errors are 400, not 422."""

from __future__ import annotations

import re
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from app.db.storage import DESCRIPTIONS, storage_problem
from app.errors import AppError, StorageUnavailable, Unavailable, error_envelope

log = structlog.get_logger("app.api")

HTTP_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    405: "INVALID_ARGUMENT",
    408: "REQUEST_TIMEOUT",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    429: "RATE_LIMITED",
    503: "UNAVAILABLE",
}
BUSY_RETRY_AFTER_S = 1
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def error_response(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(error_envelope(code, message, details), status_code=status, headers=headers)


def _loc(loc: tuple[Any, ...]) -> list[Any]:
    return list(loc)


async def _app_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return error_response(exc.http_status, exc.code, exc.message, exc.details, exc.headers or None)


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    """A full disk, a read-only file or a locked database is a 503 that says so; anything else a 500."""
    reason = storage_problem(exc)
    if reason is None:
        return await _unexpected(request, exc)
    if reason == "busy":
        error: AppError = Unavailable(
            "the database is busy; retry shortly", {"reason": reason}, BUSY_RETRY_AFTER_S
        )
    else:
        retry_after = request.app.state.services.settings.db.storage_retry_after_s
        log.error(
            "storage_unavailable",
            reason=reason,
            error=str(exc.orig if isinstance(exc, DBAPIError) else exc),
        )
        error = StorageUnavailable(
            f"storage unavailable: {DESCRIPTIONS[reason]}; nothing was stored",
            {"reason": reason},
            retry_after,
        )
    return await _app_error(request, error)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": _loc(e.get("loc", ())), "message": e.get("msg", "invalid")} for e in exc.errors()
    ]
    first = errors[0] if errors else {"loc": [], "message": "invalid request"}
    where = ".".join(str(p) for p in first["loc"])
    message = (
        f"Invalid request: {where}: {first['message']}"
        if where
        else f"Invalid request: {first['message']}"
    )
    return error_response(400, "INVALID_ARGUMENT", message, {"errors": errors})


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = HTTP_CODES.get(
        exc.status_code, "INTERNAL" if exc.status_code >= 500 else "INVALID_ARGUMENT"
    )
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    headers = dict(exc.headers or {})
    if exc.status_code in (408, 413):
        headers["Connection"] = "close"  # the rest of the body is never read
    allowed = _allowed_methods(request) if exc.status_code == 405 else []
    if allowed:
        headers["Allow"] = ", ".join(allowed)
    return error_response(exc.status_code, code, message, {}, headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every documented method of the request's path. The router's own Allow names only the first
    route whose path matches, which for /memories/{memoryId} leaves out PATCH and DELETE. A path
    without parameters (/archives/search) outranks a template that also matches it, as in OpenAPI."""
    paths: dict[str, dict[str, Any]] = request.app.openapi().get("paths", {})
    path = request.scope["path"].removeprefix(request.scope.get("root_path", "")) or "/"
    matching = [template for template in paths if _template_regex(template).fullmatch(path)]
    concrete = [template for template in matching if "{" not in template]
    return sorted(
        {
            method.upper()
            for template in concrete or matching
            for method in paths[template]
            if method in HTTP_METHODS
        }
    )


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^/}]+\})", template)
    return re.compile(
        "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts)
    )


async def _method_not_allowed(_request: Request) -> None:
    raise StarletteHTTPException(405)


def add_method_guards(app: FastAPI) -> None:
    """405 for an undeclared method on a path that a templated route also matches: without a guard
    ``GET /archives/search`` reaches ``GET /archives/{archiveId}`` with the id "search" (a 400 or
    404 where HTTP says 405 with ``Allow: POST``). Call once every router is included."""
    paths: dict[str, dict[str, Any]] = app.openapi().get("paths", {})
    templates = [template for template in paths if "{" in template]
    guards = []
    for path in (p for p in paths if "{" not in p):
        declared = {method for method in paths[path] if method in HTTP_METHODS}
        shadowing = {
            method
            for template in templates
            if _template_regex(template).fullmatch(path)
            for method in paths[template]
            if method in HTTP_METHODS
        } - declared
        if shadowing:
            guards.append(
                Route(
                    path,
                    _method_not_allowed,
                    methods=sorted(m.upper() for m in shadowing),
                    include_in_schema=False,
                )
            )
    app.router.routes[:0] = guards


async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled_error", exc_info=exc)
    return error_response(500, "INTERNAL", "Internal server error")


def install_exception_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(DBAPIError, _database_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
