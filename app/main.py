"""The app factory: ``create_app(settings)`` wires everything in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
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
from app.providers.llm import OpenAICompatibleLLM
from app.settings import Settings
from app.working_memory.llm_builder import LlmWorkingMemoryBuilder
from app.working_memory.service import ExtractiveBuilder, WorkingMemoryBuilder

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
    if settings.wm.mode == "llm" and not settings.llm.configured:
        raise ValueError("CE_WM__MODE=llm needs CE_LLM__BASE_URL and CE_LLM__MODEL")
    if configure_logs:
        configure_logging(settings.log_format, settings.log_level)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_db_engine(settings)
        if settings.auto_migrate:
            await run_in_threadpool(upgrade_to_head, engine)
        uow = UnitOfWork(engine)
        http = httpx.AsyncClient(timeout=settings.llm.timeout_s)
        builder = working_memory_builder(settings, http, metrics)
        worker = None
        if settings.worker.enabled:
            worker = Phase2Worker(uow, builder, settings.worker, observe=metrics.observe_job)
            # The embedded default owns its database: jobs left running belong to a dead process.
            await worker.start(reclaim_own=True)
        app.state.services = Services(settings, uow, metrics, NoRecall(), worker)
        try:
            yield
        finally:
            if worker is not None:
                await worker.stop()
            await http.aclose()
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


def working_memory_builder(settings: Settings, http: httpx.AsyncClient, metrics: Metrics) -> WorkingMemoryBuilder:
    """The LLM builder when a model is configured (and not switched off), else the extractive one."""
    if not settings.uses_llm:
        return ExtractiveBuilder()
    llm = settings.llm
    model = OpenAICompatibleLLM(
        http,
        base_url=llm.base_url or "",
        model=llm.model or "",
        api_key=llm.api_key,
        timeout_s=llm.timeout_s,
        max_attempts=llm.max_attempts,
        temperature=llm.temperature,
        max_output_tokens=llm.max_output_tokens,
        extra_headers=llm.extra_headers,
        observe=metrics.observe_llm,
    )
    return LlmWorkingMemoryBuilder(model)


def _operation_id(route: APIRoute) -> str:
    return route.operation_id or route.name
