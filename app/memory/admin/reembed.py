"""Re-embed memories whose vectors came from another model (docs/recall.md, Embeddings): vector spaces
are never mixed; after a model change this rebuilds every stale memory's chunks and vectors.

Each batch is embedded with one call and written in its own transaction, and a memory stops being
stale the moment its batch commits: an interrupted run loses nothing and the next run resumes.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.threads import to_thread
from app.memory.admin import repository as admin_repo
from app.memory.admin.repository import StaleMemory
from app.memory.admin.transfer import prepare_batch
from app.memory.service import MemoryService
from app.memory.store.writes import PreparedChunks, write_chunks_many

BATCH = 64

# (memories done so far, memories that were stale when the run started)
Progress = Callable[[int, int], None]


def count_stale(service: MemoryService) -> int:
    """How many memories the current embedder would re-embed (0 without an embedder)."""
    if service.embedder is None:
        return 0
    with service.uow.read() as db:
        return admin_repo.count_stale(db, service.embedder.model_id)


async def reembed_stale(
    service: MemoryService, progress: Progress | None = None, batch: int = BATCH
) -> int:
    """Rebuild the chunks and vectors of every memory not embedded by the current model."""
    if service.embedder is None:
        return 0
    model_id = service.embedder.model_id
    total = await to_thread(count_stale, service)
    done = 0
    while True:
        stale = await to_thread(_stale_page, service, model_id, batch)
        if not stale:
            return done
        prepared = await prepare_batch(service, [row.content for row in stale])
        if any(p.vectors is None for p in prepared):
            return done  # the embedder is failing: stop rather than loop
        await to_thread(_store, service, stale, prepared)
        done += len(stale)
        if progress is not None:
            progress(done, max(total, done))


def _stale_page(service: MemoryService, model_id: str, limit: int) -> list[StaleMemory]:
    with service.uow.read() as db:
        return admin_repo.stale_page(db, model_id, limit)


def _store(
    service: MemoryService, stale: list[StaleMemory], prepared: list[PreparedChunks]
) -> None:
    with service.uow.write() as db:
        current = {m.id: m for m in admin_repo.memories_with_ids(db, [row.id for row in stale])}
        items = [
            (current[row.id], chunks)
            for row, chunks in zip(stale, prepared, strict=True)
            # Unchanged since it was read (an edit meanwhile re-embedded it already).
            if row.id in current and current[row.id].content == row.content
        ]
        write_chunks_many(db, service.uow.storage, items)
