"""The operator console at /console: server-rendered pages, htmx for the interactive parts.

It reads and changes data only through the domain services, like the JSON API, and is kept out
of the OpenAPI document (it is for people, not clients).
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.api.console import jobs, login, memories, sessions
from app.api.console.rendering import STATIC_DIR


def mount_console(app: FastAPI) -> None:
    """Add the console's pages and its static files (htmx, the style sheet) to the app."""
    for module in (login, sessions, memories, jobs):
        app.include_router(module.router, include_in_schema=False)
    app.mount("/console/static", StaticFiles(directory=STATIC_DIR), name="console-static")
