"""The write of commit_memory (recall.md, commit_memory): a duplicate is answered NONE, a second
profile is merged into the first (UPDATE), anything else is added (ADD). Runs in one write
transaction, its vectors computed before."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.db.models import Memory
from app.db.seams import Storage
from app.db.uow import UnitOfWork
from app.memory.records import (
    memory_record,
    memory_uri,
    new_memory_id,
    one_line,
    owner_key,
    snapshot,
)
from app.memory.results import CommitOutcome
from app.memory.store import chunk_repository as chunk_repo
from app.memory.store import repository as repo
from app.memory.store.chunking import adds_no_words, word_set
from app.memory.store.content_key import content_key
from app.memory.store.fields import CleanMemory, NewMemory
from app.memory.store.writes import PreparedChunks, audit, chunk_index, chunks_for, write_chunks

# Cosine similarity >= 0.95 (recall.md, commit_memory), and no word the other memory lacks: with
# the local model two different facts reach 0.95 ("I ran the Taihu half marathon" / "... the
# Donghu half marathon": 0.993; / "I'm training for a half marathon": 0.964), so the vector alone
# dropped a third of the distinct turns of a long conversation (docs/recall.md, commit_memory).
DUPLICATE_DISTANCE = 0.05


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
    # The row, its content key and its word index entries, before the write lock: pure work.
    memory = _new_row(writer, new, clean, now)
    memory.content_key = key = content_key(memory.content)
    index = chunk_index(memory, prepared.texts)
    words = word_set(memory.content)
    with uow.write() as db:
        duplicate = _duplicate(db, uow.storage, writer, new.category, key, words, prepared, now)
        if duplicate is not None:
            view = memory_record(duplicate, can_read_sensitive=writer.can_read_sensitive)
            return CommitOutcome("NONE", reason="duplicate", memory=view), None
        profile = (
            repo.first_in_category(db, writer.tenant_id, writer.owner, new.category, now)
            if new.category == "profile"
            else None
        )
        if profile is None:
            repo.add_memory(db, memory)
            write_chunks(db, uow.storage, memory, prepared, index)
            audit(db, memory, "ADD", writer.actor, "commit_memory", None, now)
            view = memory_record(memory, can_read_sensitive=writer.can_read_sensitive)
            return CommitOutcome("ADD", memory=view), None
        return _merge_profile(db, uow.storage, writer, profile, clean.content, now), profile.id


def _duplicate(
    db: Session,
    storage: Storage,
    writer: Writer,
    category: str,
    key: str,
    words: frozenset[str],
    prepared: PreparedChunks,
    now: datetime,
) -> Memory | None:
    """A current memory of the owner and category with the same normalised text (an index
    lookup by content key), or whose first chunk's vector is nearly the same and which holds
    every word of the new text (``words``)."""
    for other in repo.same_content(db, writer.tenant_id, writer.owner, category, key, now):
        # A key written by an earlier release may be missing: then the texts are compared.
        if other.content_key is not None or content_key(other.content) == key:
            return other
    if prepared.vectors:
        partition = owner_key(writer.tenant_id, writer.owner)
        near = storage.memory_vectors.nearest_memory_chunks(db, partition, prepared.vectors[0], 5)
        close = {hit.row_id for hit in near if (hit.score or 0) <= DUPLICATE_DISTANCE}
        for _chunk, other in chunk_repo.chunks_with_memories(db, list(close), now):
            owner = (other.tenant_id, other.owner_kind, other.owner_id)
            same_place = other.category == category and owner == (writer.tenant_id, *writer.owner)
            if same_place and adds_no_words(words, other.content):
                return other
    return None


def _merge_profile(
    db: Session, storage: Storage, writer: Writer, profile: Memory, content: str, now: datetime
) -> CommitOutcome:
    before = snapshot(profile)
    profile.content = f"{profile.content.rstrip()}\n{content}"
    profile.abstract = one_line(profile.content)
    profile.version += 1
    profile.updated_at = now
    write_chunks(db, storage, profile, PreparedChunks(chunks_for(profile.content), None, None))
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
