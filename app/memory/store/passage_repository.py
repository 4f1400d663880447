"""SQL for the passage vectors of memory chunks (``MemoryPassageVector``). Never commits.

A chunk's passage rows go with it: the foreign key cascades when its chunk is deleted, which every
rewrite of a memory's chunks and every removal of a memory does."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.db.models import MemoryPassageVector

# Bound parameters per lookup statement (SQLite allows 32,766; a search reads well under this).
_IDS_PER_STATEMENT = 900


def add_passage_vectors(db: Session, rows: Iterable[tuple[str, int, int, bytes]]) -> None:
    """Store (tenant id, chunk id, passage index, float32 bytes) rows."""
    params = [
        {"tenant_id": tenant_id, "chunk_id": chunk_id, "passage_index": index, "embedding": vector}
        for tenant_id, chunk_id, index, vector in rows
    ]
    if params:
        db.execute(insert(MemoryPassageVector), params)


def passage_vectors_of(db: Session, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]:
    """(chunk id, float32 bytes) of every passage of these chunks (none for one-passage chunks)."""
    found: list[tuple[int, bytes]] = []
    ids = list(dict.fromkeys(chunk_ids))
    for start in range(0, len(ids), _IDS_PER_STATEMENT):
        stmt = select(MemoryPassageVector.chunk_id, MemoryPassageVector.embedding).where(
            MemoryPassageVector.chunk_id.in_(ids[start : start + _IDS_PER_STATEMENT])
        )
        found += [(int(chunk_id), bytes(vector)) for chunk_id, vector in db.execute(stmt)]
    return found
