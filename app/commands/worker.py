"""``worker``: a Phase 2 worker process beside (or instead of) the one inside the service."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import httpx

from app.commands.runtime import EXIT_OK, open_database
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.jobs.worker import Phase2Worker
from app.main import build_embedder, chat_model, make_learner
from app.memory.service import MemoryService
from app.memory.store.embedding_cache import CachedEmbedder
from app.memory.store.preparing import EmbeddingLimits
from app.metrics import Metrics
from app.ops import queue_depth
from app.settings import Settings
from app.working_memory.llm_builder import LlmWorkingMemoryBuilder
from app.working_memory.service import ExtractiveBuilder

IDLE_CHECK_S = 0.5


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "worker",
        help="run a Phase 2 worker (Working Memories, memory learning) until stopped",
        description="Claim Phase 2 jobs from the database with a lease and run them, like the worker inside "
        "the service (set CE_WORKER__ENABLED=false there to leave the work to these processes). "
        "Stops on Ctrl-C or SIGTERM: running jobs get CE_WORKER__DRAIN_S to finish, the rest go back to the "
        "queue at once; after SIGKILL, another worker claims them when their leases expire.",
    )
    parser.add_argument(
        "--until-idle",
        action="store_true",
        help="exit once no job is queued or running (for a one-off catch-up)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    with open_database(settings) as uow:
        asyncio.run(_work(settings, uow, args.until_idle))
    return EXIT_OK


async def _work(settings: Settings, uow: UnitOfWork, until_idle: bool) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    async with httpx.AsyncClient(timeout=settings.llm.timeout_s) as http:
        worker = _build_worker(settings, uow, http)
        await worker.start(reclaim_own=False)
        sys.stderr.write(
            f"worker {worker.worker_id} started ({'LLM' if settings.uses_llm else 'extractive'} "
            "Working Memory)\n"
        )
        try:
            if until_idle:
                while not stop.is_set() and await to_thread(queue_depth, uow) > 0:  # noqa: ASYNC110 (polls the database)
                    await asyncio.sleep(IDLE_CHECK_S)
            else:
                await stop.wait()
        finally:
            await worker.stop(settings.worker.drain_s)
    sys.stderr.write("worker stopped\n")


def _build_worker(settings: Settings, uow: UnitOfWork, http: httpx.AsyncClient) -> Phase2Worker:
    """The same pipeline as the service's own worker: builder, optional learning, metrics hooks."""
    metrics = Metrics()
    model = chat_model(settings, http, metrics)
    builder = LlmWorkingMemoryBuilder(model) if model is not None else ExtractiveBuilder()
    learner = None
    if model is not None and settings.memory.extraction:
        embedder = build_embedder(settings, http)
        memory = MemoryService(
            uow,
            CachedEmbedder(uow, embedder) if embedder is not None else None,
            EmbeddingLimits.of(settings.embedding),
        )
        learner = make_learner(memory, model)
    return Phase2Worker(uow, builder, settings.worker, observe=metrics.observe_job, learn=learner)
