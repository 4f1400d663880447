"""The app factory: ``create_app(settings)`` wires everything in the lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from app import __version__
from app.api import archives, docs, hooks, imports, memories, ops, sessions
from app.api.console import mount_console
from app.api.deps import Services
from app.api.exception_handlers import add_method_guards, install_exception_handlers
from app.api.mcp.server import McpEndpoint, mount_mcp, running
from app.api.middleware import RequestContextMiddleware
from app.api.rate_limit import RATE_LIMITED, rate_limit
from app.api.schemas.base import ErrorEnvelope
from app.assembly.service import StoredHistoryCache
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.jobs.phase2 import ArchiveContext, Learner
from app.jobs.retry import RetryStrategy
from app.jobs.worker import Phase2Worker
from app.logging import configure_logging
from app.memory.learning.from_archive import ArchiveForLearning, learn_from_archive
from app.memory.recall.source import MemoryRecall
from app.memory.service import MemoryService
from app.memory.store.embedding_cache import CachedEmbedder
from app.memory.store.preparing import EmbeddingLimits
from app.metrics import Metrics
from app.providers.embeddings import LocalE5Embedder, OpenAICompatibleEmbedder
from app.providers.llm import OpenAICompatibleLLM
from app.providers.protocols import ChatModel, Embedder
from app.sessions.recall import SessionRecall
from app.settings import Settings
from app.working_memory.llm_builder import LlmWorkingMemoryBuilder
from app.working_memory.service import ExtractiveBuilder, WmInputs

ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorEnvelope, "description": description}
    for status, description in (
        (400, "Invalid argument"),
        (401, "Unauthenticated"),
        (404, "Not found"),
        (408, "Request body not received in time (REQUEST_TIMEOUT)"),
        (413, "Payload too large"),
        (500, "Internal error"),
        (
            503,
            "Storage unavailable (STORAGE_UNAVAILABLE: disk full, read-only database) or database busy; "
            "Retry-After says when to retry",
        ),
    )
}


Lifespan = Callable[[FastAPI], AbstractAsyncContextManager[None]]


def create_app(settings: Settings | None = None, *, configure_logs: bool = True) -> FastAPI:
    """Build the application for ``settings`` (read from the environment when omitted)."""
    settings = settings or Settings()
    if settings.wm.mode == "llm" and not settings.llm.configured:
        raise ValueError("CE_WM__MODE=llm needs CE_LLM__BASE_URL and CE_LLM__MODEL")
    if configure_logs:
        configure_logging(settings.log_format, settings.log_level)
    metrics = Metrics()
    mcp = McpEndpoint() if settings.mcp.enabled else None
    app = FastAPI(
        title="context-engine",
        version=__version__,
        summary="Lossless, bounded, self-improving context for AI agents.",
        lifespan=_lifespan(settings, metrics, mcp),
        responses=ERROR_RESPONSES,
        generate_unique_id_function=_operation_id,
        # Served by app.api.docs, behind the API key when keys are set.
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    install_exception_handlers(app)
    # Every hook, the host's newer ones included, counts against the tenant's hook rate.
    app.include_router(
        hooks.router, dependencies=[Depends(rate_limit("hooks"))], responses=RATE_LIMITED
    )
    for module in (archives, sessions, memories, imports, ops, docs):
        app.include_router(module.router)
    if settings.console.enabled:
        mount_console(app)
    if mcp is not None:
        mount_mcp(app, mcp)
    app.add_middleware(
        RequestContextMiddleware,
        max_body_bytes=settings.max_body_bytes,
        metrics=metrics,
        body_timeout_s=settings.http.body_timeout_s,
    )
    app.openapi = _without_422(app)  # type: ignore[method-assign]
    add_method_guards(app)
    return app


def _without_422(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The OpenAPI document without FastAPI's default 422: validation errors are 400 here."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            for path in document.get("paths", {}).values():
                for operation in path.values():
                    operation.get("responses", {}).pop("422", None)
            schemas = document.get("components", {}).get("schemas", {})
            schemas.pop("HTTPValidationError", None)
            schemas.pop("ValidationError", None)
            app.openapi_schema = document
        return app.openapi_schema

    return openapi


def _lifespan(settings: Settings, metrics: Metrics, mcp: McpEndpoint | None = None) -> Lifespan:
    """Start-up opens the database, the providers and the worker; shutdown closes them."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_db_engine(settings)
        if settings.auto_migrate:
            await run_in_threadpool(upgrade_to_head, engine)
        uow = UnitOfWork(engine, settings.db.vector_cache_mb)
        http = httpx.AsyncClient(timeout=settings.llm.timeout_s)
        services = await _start_services(settings, metrics, uow, http)
        app.state.services = services
        try:
            async with running(mcp):
                yield
        finally:
            if services.worker is not None:
                await services.worker.stop(settings.worker.drain_s)
            await services.hook_notes.drain()  # tool-loop calls held in process
            if services.memory.embedder is not None:
                await services.memory.embedder.drain()  # query vectors still being cached
            await http.aclose()
            engine.dispose()

    return lifespan


async def _start_services(
    settings: Settings, metrics: Metrics, uow: UnitOfWork, http: httpx.AsyncClient
) -> Services:
    """The providers, memory, recall and (when enabled) the started Phase 2 worker."""
    model = chat_model(settings, http, metrics)
    builder = LlmWorkingMemoryBuilder(model) if model is not None else ExtractiveBuilder()
    embedder = build_embedder(settings, http)
    if isinstance(embedder, LocalE5Embedder):
        await embedder.warm()  # load the bundled model now, not inside the first request
    cached = (
        CachedEmbedder(uow, embedder, metrics.observe_embedding) if embedder is not None else None
    )
    memory = MemoryService(uow, cached, EmbeddingLimits.of(settings.embedding))
    recall = SessionRecall(
        MemoryRecall(
            memory, settings.recall, embed_timeout_s=settings.assemble.recall_timeout_ms / 2000
        ),
        uow,
        cached,
        settings.recall,
    )
    learner = (
        make_learner(memory, model) if model is not None and settings.memory.extraction else None
    )
    worker = None
    if settings.worker.enabled:
        cached = memory.embedder
        retry = RetryStrategy(
            settings.worker.max_attempts, storage_retry_after_s=settings.db.storage_retry_after_s
        )
        worker = Phase2Worker(
            uow,
            builder,
            settings.worker,
            observe=metrics.observe_job,
            retry=retry,
            learn=learner,
            embed=cached.embed_passages if cached is not None else None,
            embed_model=cached.model_id if cached is not None else None,
        )
        # The embedded default owns its database: jobs left running belong to a dead process.
        await worker.start(reclaim_own=True)
    cache_chars = int(settings.assemble.history_cache_mb * 1_000_000)
    history = StoredHistoryCache(cache_chars) if cache_chars > 0 else None
    return Services(settings, uow, metrics, recall, worker, memory, history_cache=history)


def chat_model(settings: Settings, http: httpx.AsyncClient, metrics: Metrics) -> ChatModel | None:
    """The configured chat model, or None (no LLM, or the extractive mode forced)."""
    if not settings.uses_llm:
        return None
    llm = settings.llm
    return OpenAICompatibleLLM(
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


def build_embedder(settings: Settings, http: httpx.AsyncClient) -> Embedder | None:
    """The embedding provider: the bundled local model, an /embeddings endpoint, or none."""
    embedding = settings.embedding
    if embedding.provider == "none":
        return None
    if embedding.provider == "openai":
        return OpenAICompatibleEmbedder(
            http,
            base_url=embedding.base_url or "",
            model=embedding.model or "",
            api_key=embedding.api_key,
            dimensions=embedding.dimensions,
            timeout_s=embedding.timeout_s,
            similarity_floor=embedding.similarity_floor or 0.0,
        )
    if embedding.similarity_floor is not None:
        return LocalE5Embedder(similarity_floor=embedding.similarity_floor)
    return LocalE5Embedder()


def make_learner(memory: MemoryService, model: ChatModel) -> Learner:
    """Phase 2's learning step: extract memories from an archive and apply the decisions."""

    async def learn(
        archive: ArchiveContext, inputs: WmInputs, overview: str
    ) -> tuple[dict[str, int], dict[str, Any]]:
        wrapped = [
            {"seq": seq, "message": m} for seq, m in zip(archive.seqs, inputs.messages, strict=True)
        ]
        return await learn_from_archive(
            memory,
            model,
            ArchiveForLearning(
                archive.tenant_id,
                archive.user_id,
                archive.agent_id,
                archive.session_id,
                archive.archive_id,
                wrapped,
                archive.seqs,
                overview,
                archive.message_time,
            ),
        )

    return learn


def _operation_id(route: APIRoute) -> str:
    return route.operation_id or route.name
