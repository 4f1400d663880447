"""The write of commit_memory (recall.md, commit_memory): a duplicate is answered NONE, a second
profile is merged into the first (UPDATE), anything else is added (ADD). Runs in one write
transaction, its vectors computed before."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.db.dialects import Dialect
from app.db.models import Memory
from app.db.uow import UnitOfWork
from app.memory import repository as repo
from app.memory.experience import normalise_text
from app.memory.fields import CleanMemory, NewMemory
from app.memory.records import (
    memory_record,
    memory_uri,
    new_memory_id,
    one_line,
    owner_key,
    snapshot,
)
from app.memory.results import CommitOutcome
from app.memory.store import PreparedChunks, audit, chunk_index, chunks_for, write_chunks

DUPLICATE_DISTANCE = 0.05  # cosine similarity >= 0.95 (recall.md, commit_memory)


@dataclass(frozen=True, slots=True)
class Writer:
    """Whose memory is written, whether its reader sees masked text, and who writes it (audit)."""

    tenant_id: str
    owner: tuple[str, str]
    can_read_sensitive: bool
    actor: str


def commit_write(
    uow: UnitOfWork, writer: Writer, new: NewMemory, clean: CleanMemory, prepared: PreparedChunks
) -> tuple[CommitOutcome, str | None]:
    """The outcome, and the id of a merged profile whose new text still needs its vectors."""
    now = utcnow()
    # The row and its word index entries, before the write lock: pure work, of the same values.
    memory = _new_row(writer, new, clean, now)
    index = chunk_index(memory, prepared.texts)
    with uow.write() as db:
        siblings = repo.same_category(db, writer.tenant_id, writer.owner, new.category, now)
        duplicate = _duplicate(db, uow.dialect, writer, clean.content, prepared, siblings)
        if duplicate is not None:
            view = memory_record(duplicate, can_read_sensitive=writer.can_read_sensitive)
            return CommitOutcome("NONE", reason="duplicate", memory=view), None
        if not (new.category == "profile" and siblings):
            repo.add_memory(db, memory)
            write_chunks(db, uow.dialect, memory, prepared, index)
            audit(db, memory, "ADD", writer.actor, "commit_memory", None, now)
            view = memory_record(memory, can_read_sensitive=writer.can_read_sensitive)
            return CommitOutcome("ADD", memory=view), None
        profile = siblings[0]
        return _merge_profile(db, uow.dialect, writer, profile, clean.content, now), profile.id


def _duplicate(
    db: Session,
    dialect: Dialect,
    writer: Writer,
    content: str,
    prepared: PreparedChunks,
    siblings: list[Memory],
) -> Memory | None:
    wanted = normalise_text(content)
    for memory in siblings:
        if normalise_text(memory.content) == wanted:
            return memory
    if prepared.vectors:
        partition = owner_key(writer.tenant_id, writer.owner)
        near = dialect.nearest_memory_chunks(db, partition, prepared.vectors[0], 5)
        close = {hit.row_id for hit in near if (hit.score or 0) <= DUPLICATE_DISTANCE}
        for _chunk, memory in repo.chunks_with_memories(db, list(close), utcnow()):
            if memory in siblings:
                return memory
    return None


def _merge_profile(
    db: Session, dialect: Dialect, writer: Writer, profile: Memory, content: str, now: datetime
) -> CommitOutcome:
    before = snapshot(profile)
    profile.content = f"{profile.content.rstrip()}\n{content}"
    profile.abstract = one_line(profile.content)
    profile.version += 1
    profile.updated_at = now
    write_chunks(db, dialect, profile, PreparedChunks(chunks_for(profile.content), None, None))
    audit(db, profile, "UPDATE", writer.actor, "commit_memory merged into the profile", before, now)
    view = memory_record(profile, can_read_sensitive=writer.can_read_sensitive)
    return CommitOutcome("UPDATE", memory=view)


def _new_row(writer: Writer, new: NewMemory, clean: CleanMemory, now: datetime) -> Memory:
    memory_id = new.id or new_memory_id()
    title, content = clean.title, clean.content
    return Memory(
        id=memory_id,
        tenant_id=writer.tenant_id,
        owner_kind=writer.owner[0],
        owner_id=writer.owner[1],
        uri=memory_uri(
            new.category, writer.owner, title, memory_id, masked=new.sensitivity == "masked"
        ),
        category=new.category,
        title=title,
        abstract=one_line(content),
        content=content,
        confidence=max(0.0, min(1.0, new.confidence)),
        sensitivity=new.sensitivity,
        priority=new.priority,
        version=1,
        source_json=json.dumps(clean.source, ensure_ascii=False),
        expires_at=now + timedelta(days=new.ttl_days) if new.ttl_days else None,
        observed_at=new.observed_at,
        created_at=now,
        updated_at=now,
    )
