"""SQL for memories, their generations, the audit trail and the embedding cache (their chunks:
``chunk_repository``). Never commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    bindparam,
    delete,
    event,
    inspect,
    or_,
    select,
    text,
)
from sqlalchemy.orm import Mapper, Session

from app.db.driver_query import DriverQuery, RowsReader
from app.db.models import EmbeddingCacheEntry, Memory, MemoryAudit
from app.memory.store.content_key import content_key


# Every memory row carries the key of its content, whichever path writes it: computed when it is
# inserted without one, and again whenever its content changes.
@event.listens_for(Memory, "before_insert")
def _key_new_content(_mapper: Mapper[Any], _connection: Any, memory: Memory) -> None:
    if memory.content_key is None:
        memory.content_key = content_key(memory.content)


@event.listens_for(Memory, "before_update")
def _key_changed_content(_mapper: Mapper[Any], _connection: Any, memory: Memory) -> None:
    if inspect(memory).attrs.content.history.has_changes():
        memory.content_key = content_key(memory.content)


def add_memory(db: Session, memory: Memory) -> Memory:
    db.add(memory)
    db.flush()
    return memory


def get_memory(db: Session, tenant_id: str, memory_id: str) -> Memory | None:
    memory = db.get(Memory, memory_id)
    return memory if memory is not None and memory.tenant_id == tenant_id else None


def visible(
    now: datetime | BindParameter[datetime],
) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    """Conditions for a memory that is current: not superseded, not expired (at ``now``, a time
    or the parameter of a statement built once)."""
    return (
        Memory.superseded_by.is_(None),
        or_(Memory.expires_at.is_(None), Memory.expires_at > now),
    )


def list_memories(
    db: Session,
    tenant_id: str,
    owners: Sequence[tuple[str, str]],
    now: datetime,
    *,
    category: str | None = None,
    text: str | None = None,
    after: tuple[datetime, str] | None = None,
    limit: int = 50,
) -> list[Memory]:
    """Current memories of the owners, newest first, keyset-paginated by (created_at, id)."""
    if not owners:
        return []
    stmt = select(Memory).where(Memory.tenant_id == tenant_id, *visible(now), _owner_filter(owners))
    if category:
        stmt = stmt.where(Memory.category == category)
    if text:
        like = f"%{text}%"
        stmt = stmt.where(
            or_(Memory.content.ilike(like), Memory.title.ilike(like), Memory.abstract.ilike(like))
        )
    if after is not None:
        # Keyset position (created_at, id): still valid when the memory it names was deleted.
        created, memory_id = after
        stmt = stmt.where(
            or_(
                Memory.created_at < created,
                (Memory.created_at == created) & (Memory.id < memory_id),
            )
        )
    stmt = stmt.order_by(Memory.created_at.desc(), Memory.id.desc()).limit(limit)
    return list(db.execute(stmt).scalars())


def all_memories(db: Session, tenant_id: str, owners: Sequence[tuple[str, str]]) -> list[Memory]:
    """Every memory of the owners, superseded and expired ones included (export)."""
    if not owners:
        return []
    stmt = (
        select(Memory)
        .where(Memory.tenant_id == tenant_id, _owner_filter(owners))
        .order_by(Memory.created_at, Memory.id)
    )
    return list(db.execute(stmt).scalars())


def same_content(
    db: Session, tenant_id: str, owner: tuple[str, str], category: str, key: str, now: datetime
) -> list[Memory]:
    """The owner's current memories of the category whose content has this key (and any written
    without a key, which the caller compares by text)."""
    stmt = select(Memory).where(
        *_in_category(tenant_id, owner, category, now),
        or_(Memory.content_key == key, Memory.content_key.is_(None)),
    )
    return list(db.execute(stmt).scalars())


def first_in_category(
    db: Session, tenant_id: str, owner: tuple[str, str], category: str, now: datetime
) -> Memory | None:
    """The owner's oldest current memory of the category."""
    stmt = (
        select(Memory)
        .where(*_in_category(tenant_id, owner, category, now))
        .order_by(Memory.created_at, Memory.id)
        .limit(1)
    )
    return db.execute(stmt).scalars().first()


def _in_category(
    tenant_id: str, owner: tuple[str, str], category: str, now: datetime
) -> tuple[ColumnElement[bool], ...]:
    """The owner's current memories of one category (the leading columns of its indexes)."""
    return (
        Memory.tenant_id == tenant_id,
        Memory.owner_kind == owner[0],
        Memory.owner_id == owner[1],
        Memory.category == category,
        *visible(now),
    )


def _owner_filter(owners: Sequence[tuple[str, str]]) -> ColumnElement[bool]:
    return or_(
        *((Memory.owner_kind == kind) & (Memory.owner_id == owner_id) for kind, owner_id in owners)
    )


# Kept by triggers on memories and memory_chunks (migration 0012): an owner's number moves on in
# the transaction of any change to its memories; an owner with no row is at 0. Read before every
# recall, so on the driver's connection (app/db/driver_query.py): through a session it cost the
# event loop more per assemble (bench/RESULTS.md, Measurements behind the code).
_GENERATIONS = DriverQuery(
    text(
        "SELECT owner_kind, owner_id, generation FROM memory_generations "
        "WHERE tenant_id = :tenant AND owner_id IN :ids"
    ).bindparams(bindparam("ids", expanding=True))
)


def generations_of(
    read: RowsReader, tenant_id: str, owners: Sequence[tuple[str, str]]
) -> tuple[int, ...]:
    """Each owner's memory generation, in the order given."""
    if not owners:
        return ()
    rows = read(_GENERATIONS, {"tenant": tenant_id, "ids": sorted({o for _, o in owners})})
    found = {(kind, owner): int(number) for kind, owner, number in rows}
    return tuple(found.get(owner, 0) for owner in owners)


def delete_memories(db: Session, memory_ids: Sequence[str]) -> None:
    if memory_ids:
        db.execute(delete(Memory).where(Memory.id.in_(list(memory_ids))))


def add_audit(db: Session, entry: MemoryAudit) -> None:
    db.add(entry)


def audit_of(db: Session, tenant_id: str, memory_id: str) -> list[MemoryAudit]:
    stmt = (
        select(MemoryAudit)
        .where(MemoryAudit.tenant_id == tenant_id, MemoryAudit.memory_id == memory_id)
        .order_by(MemoryAudit.id)
    )
    return list(db.execute(stmt).scalars())


def cached_vectors(db: Session, keys: Sequence[str]) -> dict[str, bytes]:
    if not keys:
        return {}
    stmt = select(EmbeddingCacheEntry.key, EmbeddingCacheEntry.vector).where(
        EmbeddingCacheEntry.key.in_(list(keys))
    )
    return {key: vector for key, vector in db.execute(stmt)}  # noqa: C416 (a Result has keys(): dict() would misread it)


def store_cached_vectors(db: Session, entries: Sequence[EmbeddingCacheEntry]) -> None:
    """Add the entries not cached yet (a key names its vector, so a present one is the same)."""
    keys = [entry.key for entry in entries]
    present = (
        set(
            db.execute(
                select(EmbeddingCacheEntry.key).where(EmbeddingCacheEntry.key.in_(keys))
            ).scalars()
        )
        if keys
        else set()
    )
    db.add_all(
        [entry for entry in {e.key: e for e in entries}.values() if entry.key not in present]
    )
