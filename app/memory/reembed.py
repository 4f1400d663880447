"""Re-embed memories whose vectors came from another model (recall.md, Embeddings): vector spaces
are never mixed; after a model change this rebuilds every stale memory's chunks and vectors."""

from __future__ import annotations

from sqlalchemy import or_, select

from app.db.models import Memory
from app.memory import repository as repo
from app.memory.service import MemoryService
from app.memory.store import write_chunks

BATCH = 64


async def reembed_stale(service: MemoryService) -> int:
    """Rebuild the chunks and vectors of every memory not embedded by the current model."""
    if service.embedder is None:
        return 0
    model_id = service.embedder.model_id
    done = 0
    while True:
        with service.uow.read() as db:
            stmt = (
                select(Memory.id, Memory.tenant_id, Memory.content)
                .where(or_(Memory.embedding_model.is_(None), Memory.embedding_model != model_id))
                .limit(BATCH)
            )
            stale = list(db.execute(stmt))
        if not stale:
            return done
        prepared = [await service.prepare(row.content) for row in stale]
        if any(p.vectors is None for p in prepared):
            return done  # the embedder is failing: stop rather than loop
        with service.uow.write() as db:
            for row, chunks in zip(stale, prepared, strict=True):
                memory = repo.get_memory(db, row.tenant_id, row.id)
                if memory is not None:
                    write_chunks(db, service.uow.dialect, memory, chunks)
        done += len(stale)
