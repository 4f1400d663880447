"""Templates, responses and error pages of the console."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from app.api.console.auth import ForeignOrigin, LoginRequired
from app.api.console.messages import pretty
from app.errors import AppError

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
TEMPLATES = Jinja2Templates(directory=HERE / "templates")
# Pages show a tenant's conversations and memories: never cached, never framed, no foreign code.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}


def when(value: str | None) -> str:
    """An ISO-8601 UTC time as a person reads it: ``2026-11-23 10:52:01 UTC``."""
    if not value:
        return "—"
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime(
            "%Y-%m-%d %H:%M:%S UTC"
        )
    except ValueError:
        return value


TEMPLATES.env.filters["when"] = when
TEMPLATES.env.filters["segment"] = lambda value: quote(str(value), safe="")
TEMPLATES.env.filters["pretty"] = pretty


def page(
    request: Request, template: str, context: dict[str, Any], status: int = 200
) -> HTMLResponse:
    """A full HTML page; ``context`` must hold the signed-in ``user``."""
    response = TEMPLATES.TemplateResponse(request, template, context, status_code=status)
    response.headers.update(PAGE_HEADERS)
    return response


def redirect(request: Request, url: str) -> Response:
    """After a form post: a 303 for a plain form, a full-page navigation for an htmx request."""
    if request.headers.get("hx-request") == "true":
        return Response(status_code=200, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    titles = {400: "Invalid request", 403: "Not allowed", 404: "Not found", 409: "Conflict"}
    context = {
        "user": None,
        "title": titles.get(status, "Something went wrong"),
        "message": message,
    }
    return page(request, "error.html", context, status)


Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class ConsoleRoute(APIRoute):
    """Console routes answer in HTML: the sign-in form when signed out, error pages for errors."""

    def get_route_handler(self) -> Handler:
        handle = super().get_route_handler()

        async def console_handler(request: Request) -> Response:
            try:
                return await handle(request)
            except LoginRequired:
                return redirect(request, f"/console/login?next={quote(_here(request), safe='')}")
            except ForeignOrigin:
                return error_page(request, 403, "This form was sent from another site.")
            except AppError as exc:
                return error_page(request, exc.http_status, exc.message)
            except RequestValidationError as exc:
                first = exc.errors()[0] if exc.errors() else {}
                where = ".".join(str(part) for part in first.get("loc", ()))
                return error_page(request, 400, f"{where}: {first.get('msg', 'invalid')}")

        return console_handler


def _here(request: Request) -> str:
    """Where to come back to after signing in: this page, or for an htmx request the page it is on."""
    current = request.headers.get("hx-current-url")
    if current:
        parts = urlsplit(current)
        return safe_next(parts.path + (f"?{parts.query}" if parts.query else ""))
    if request.method != "GET":
        return "/console"
    return safe_next(request.url.path + (f"?{request.url.query}" if request.url.query else ""))


def safe_next(path: str | None) -> str:
    """A console path to go to after signing in; anything else (another site) is the home page."""
    if path and path.startswith("/console") and not path.startswith("//") and "\\" not in path:
        return path
    return "/console"
