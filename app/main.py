"""The app factory: ``create_app(settings)`` wires everything in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from app import __version__
from app.api import archives, hooks, ops, sessions
from app.api.deps import Services
from app.api.exception_handlers import install_exception_handlers
from app.api.middleware import RequestContextMiddleware
from app.api.schemas.base import ErrorEnvelope
from app.assembly.recall import NoRecall
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.jobs.worker import Phase2Worker
from app.logging import configure_logging
from app.metrics import Metrics
from app.settings import Settings
from app.working_memory.service import ExtractiveBuilder

ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorEnvelope, "description": description}
    for status, description in (
        (400, "Invalid argument"), (401, "Unauthenticated"), (404, "Not found"),
        (413, "Payload too large"), (500, "Internal error"),
    )
}


def create_app(settings: Settings | None = None, *, configure_logs: bool = True) -> FastAPI:
    """Build the application for ``settings`` (read from the environment when omitted)."""
    settings = settings or Settings()
    if configure_logs:
        configure_logging(settings.log_format, settings.log_level)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_db_engine(settings)
        if settings.auto_migrate:
            await run_in_threadpool(upgrade_to_head, engine)
        uow = UnitOfWork(engine)
        worker = None
        if settings.worker.enabled:
            worker = Phase2Worker(uow, ExtractiveBuilder(), settings.worker, observe=metrics.observe_job)
            # The embedded default owns its database: jobs left running belong to a dead process.
            await worker.start(reclaim_own=True)
        app.state.services = Services(settings, uow, metrics, NoRecall(), worker)
        try:
            yield
        finally:
            if worker is not None:
                await worker.stop()
            engine.dispose()

    app = FastAPI(
        title="context-engine",
        version=__version__,
        summary="Lossless, bounded, self-improving context for AI agents.",
        lifespan=lifespan,
        responses=ERROR_RESPONSES,
        generate_unique_id_function=_operation_id,
    )
    install_exception_handlers(app)
    for module in (hooks, archives, sessions, ops):
        app.include_router(module.router)
    app.add_middleware(RequestContextMiddleware, max_body_bytes=settings.max_body_bytes, metrics=metrics)
    return app


def _operation_id(route: APIRoute) -> str:
    return route.operation_id or route.name
