"""``reembed``: rebuild the vectors of memories embedded by another model, with a progress bar.

Every batch commits on its own, so an interrupted run keeps what it did and the next run goes on
with the memories that are still stale.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from app.commands.progress import ProgressBar
from app.commands.runtime import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PROBLEM,
    memory_service,
    open_database,
)
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.memory.reembed import BATCH, count_stale, reembed_stale
from app.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "reembed",
        help="re-embed memories whose vectors came from another embedding model",
        description="Run after changing CE_EMBEDDING__*: every memory not embedded by the configured model "
        "gets new chunks and vectors. Resumable: interrupt it and run it again.",
    )
    parser.add_argument(
        "--batch", type=int, default=BATCH, help=f"memories per embedding call (default {BATCH})"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    bar = ProgressBar("reembed", None)
    with open_database(settings) as uow:
        try:
            remaining = asyncio.run(_reembed(settings, uow, bar, max(1, args.batch)))
        except KeyboardInterrupt:
            bar.close("interrupted; run the same command again to resume")
            return EXIT_INTERRUPTED
    if remaining is None:
        sys.stdout.write(
            "no embedding provider is configured (CE_EMBEDDING__PROVIDER=none): nothing to do\n"
        )
        return EXIT_OK
    bar.close(
        "done"
        if not remaining
        else f"stopped: {remaining} memories still stale (the embedder failed)"
    )
    sys.stdout.write(f"re-embedded {bar.done} memories\n")
    return EXIT_PROBLEM if remaining else EXIT_OK


async def _reembed(settings: Settings, uow: UnitOfWork, bar: ProgressBar, batch: int) -> int | None:
    """Memories still stale afterwards, or None without an embedder."""
    async with memory_service(settings, uow) as service:
        if service.embedder is None:
            return None
        bar.update(0, await to_thread(count_stale, service))
        await reembed_stale(service, progress=bar.update, batch=batch)
        return await to_thread(count_stale, service)
