"""``reembed``: rebuild the vectors of memories and archived messages embedded by another model
(archived messages never embedded get theirs too), with a progress bar for each.

Every batch commits on its own, so an interrupted run keeps what it did and the next run goes on
with what is still stale.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass

from app.archives.index.reembed import reembed_stale_messages
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
from app.memory.admin.reembed import BATCH, count_stale, reembed_stale
from app.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "reembed",
        help="re-embed memories and archived messages whose vectors came from another model",
        description="Run after changing CE_EMBEDDING__*: every memory not embedded by the configured model "
        "gets new chunks and vectors, and every archived message new vectors for ranked search. "
        "Resumable: interrupt it and run it again.",
    )
    parser.add_argument(
        "--batch",
        type=int,
        default=BATCH,
        help=f"memories or messages per embedding call (default {BATCH})",
    )
    parser.set_defaults(run=run)


@dataclass
class _Report:
    memories_left: int = 0
    memories_done: int = 0
    messages_done: int = 0
    messages_failed: bool = False


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    bars = (ProgressBar("reembed memories", None), ProgressBar("reembed archived messages", None))
    with open_database(settings) as uow:
        try:
            report = asyncio.run(_reembed(settings, uow, bars, max(1, args.batch)))
        except KeyboardInterrupt:
            sys.stderr.write("interrupted; run the same command again to resume\n")
            return EXIT_INTERRUPTED
    if report is None:
        sys.stdout.write(
            "no embedding provider is configured (CE_EMBEDDING__PROVIDER=none): nothing to do\n"
        )
        return EXIT_OK
    sys.stdout.write(
        f"re-embedded {report.memories_done} memories and {report.messages_done} archived messages\n"
    )
    if report.memories_left or report.messages_failed:
        sys.stdout.write("stopped: the embedder failed; run the same command again to resume\n")
        return EXIT_PROBLEM
    return EXIT_OK


async def _reembed(
    settings: Settings, uow: UnitOfWork, bars: tuple[ProgressBar, ProgressBar], batch: int
) -> _Report | None:
    """What was done, or None without an embedder."""
    async with memory_service(settings, uow) as service:
        embedder = service.embedder
        if embedder is None:
            return None
        report = _Report()
        memories, messages = bars
        memories.update(0, await to_thread(count_stale, service))
        report.memories_done = await reembed_stale(service, progress=memories.update, batch=batch)
        report.memories_left = await to_thread(count_stale, service)
        memories.close("done" if not report.memories_left else "stopped (the embedder failed)")
        if report.memories_left:
            return report
        outcome = await reembed_stale_messages(
            uow, embedder.embed_passages, embedder.model_id, messages.update, batch
        )
        report.messages_done, report.messages_failed = outcome.done, outcome.failed
        messages.close("stopped (the embedder failed)" if outcome.failed else "done")
        return report
