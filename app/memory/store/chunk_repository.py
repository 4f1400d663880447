"""SQL for memory chunks: adding and removing a memory's chunks, and loading the current memories
of chunks a search found. Never commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import and_, bindparam, delete, insert, select
from sqlalchemy.orm import Session

from app.db.driver_load import DriverLoad
from app.db.models import Memory, MemoryChunk
from app.memory.store.repository import visible


def chunk_ids_of(db: Session, memory_ids: Sequence[str]) -> list[int]:
    if not memory_ids:
        return []
    stmt = select(MemoryChunk.id).where(MemoryChunk.memory_id.in_(list(memory_ids)))
    return list(db.execute(stmt).scalars())


_INSERT_CHUNKS = insert(MemoryChunk).returning(MemoryChunk.id, sort_by_parameter_order=True)


def add_chunks(
    db: Session, memory: Memory, texts: Sequence[str], model_id: str | None
) -> list[int]:
    """The ids of the memory's new chunks, in order: one insert, without an ORM object per chunk
    (a 100 KB memory has hundreds, written while the write lock is held)."""
    if not texts:
        return []
    params = [
        {
            "tenant_id": memory.tenant_id,
            "memory_id": memory.id,
            "chunk_index": i,
            "text": t,
            "embedding_model": model_id,
        }
        for i, t in enumerate(texts)
    ]
    return list(db.scalars(_INSERT_CHUNKS, params))


def add_chunks_many(
    db: Session, items: Sequence[tuple[Memory, Sequence[str], str | None]]
) -> list[list[MemoryChunk]]:
    """``add_chunks`` for many memories with one flush; the chunks of each, in order."""
    chunks = [
        [
            MemoryChunk(
                tenant_id=m.tenant_id,
                memory_id=m.id,
                chunk_index=i,
                text=t,
                embedding_model=model_id,
            )
            for i, t in enumerate(texts)
        ]
        for m, texts, model_id in items
    ]
    db.add_all([chunk for group in chunks for chunk in group])
    db.flush()
    return chunks


def delete_chunks(db: Session, memory_ids: Sequence[str]) -> None:
    if memory_ids:
        db.execute(delete(MemoryChunk).where(MemoryChunk.memory_id.in_(list(memory_ids))))


# Every search loads its candidates' memories (up to 80 rows): on the driver, with no chunk objects.
_CURRENT_MEMORIES_OF_CHUNKS = DriverLoad(
    Memory,
    and_(
        MemoryChunk.memory_id == Memory.id,
        MemoryChunk.id.in_(bindparam("chunk_ids", expanding=True)),
        *visible(bindparam("now", type_=Memory.expires_at.type)),
    ),
    leading=(MemoryChunk.id,),
    attach=False,  # read, never changed: a search's read transaction, a duplicate's check
)


def chunks_with_memories(
    db: Session, chunk_ids: Sequence[int], now: datetime
) -> list[tuple[int, Memory]]:
    """The chunks whose memories are current, by id, each with its memory."""
    if not chunk_ids:
        return []
    params = {"chunk_ids": list(chunk_ids), "now": now}
    return [(lead[0], m) for lead, m in _CURRENT_MEMORIES_OF_CHUNKS.all_led(db, params)]
