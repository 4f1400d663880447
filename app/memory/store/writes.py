"""Writes of memories with their chunks, word index, vectors (passages' too) and audit rows, in
the caller's transaction; the vectors are computed before the transaction opens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from app.core.rules.redaction import redact_text
from app.core.vector_matrix import float32_bytes
from app.db.models import Memory, MemoryAudit
from app.db.seams import Storage
from app.memory.records import owner_key, snapshot
from app.memory.store import chunk_repository as chunk_repo
from app.memory.store import passage_repository as passage_repo
from app.memory.store import repository as repo
from app.memory.store.chunking import chunk_text
from app.search.postings import TermCounts, term_counts
from app.search.text.date_terms import mentioned_dates
from app.search.text.memory_phrases import cjk_spaced
from app.search.text.words import chunks_with_words, words


@dataclass(frozen=True, slots=True)
class PreparedChunks:
    """A memory's chunk texts and the vectors of its first chunks (None: keyword search only),
    with the vectors of each of those chunks' passages (app/search/text/passages.py; none for a chunk of
    one passage)."""

    texts: list[str]
    vectors: list[list[float]] | None
    model_id: str | None
    passages: tuple[tuple[list[float], ...], ...] = ()

    def passage_rows(
        self, tenant_id: str, chunk_ids: list[int]
    ) -> list[tuple[str, int, int, bytes]]:
        """(tenant id, chunk id, passage index, float32 bytes) of the passages, for chunks stored
        as these ids (in the order of ``texts``)."""
        return [
            (tenant_id, chunk_id, index, float32_bytes(vector))
            for chunk_id, vectors in zip(chunk_ids, self.passages, strict=False)
            for index, vector in enumerate(vectors)
        ]


def chunks_for(memory_text: str) -> list[str]:
    return chunk_text(memory_text) or [memory_text]


def index_text(memory: Memory, chunk: str) -> str:
    """What the word index sees: title and chunk, CJK characters spaced for the tokenizer, and the
    ISO days the chunk mentions with relative ones resolved against when the memory was observed
    ("yesterday" in a memory of 8 May 2023 is found by a question about 2023-05-07)."""
    moment = memory.observed_at or memory.created_at
    days = mentioned_dates(chunk, moment.date() if moment else None)
    return cjk_spaced("\n".join([memory.title, chunk, *([" ".join(days)] if days else [])]))


@dataclass(frozen=True, slots=True)
class ChunkIndex:
    """The word index's text of each chunk of a memory, the words of those texts and their term
    counts: pure work that a caller does before the write lock when it knows the memory's title
    and time (for a memory of 100 KB it was most of the write transaction)."""

    texts: list[str]
    words: dict[str, list[str]]
    counts: dict[str, TermCounts]


def chunk_index(memory: Memory, chunks: list[str]) -> ChunkIndex:
    texts = [index_text(memory, chunk) for chunk in chunks]
    split = {text: words(text) for text in texts}
    return ChunkIndex(texts, split, {text: term_counts(tokens) for text, tokens in split.items()})


def write_chunks(
    db: Session,
    storage: Storage,
    memory: Memory,
    prepared: PreparedChunks,
    index: ChunkIndex | None = None,
) -> None:
    """(Re)build the chunks of a memory and their index entries (``index``: of ``prepared``'s
    texts, computed before the transaction; else here)."""
    index = index or chunk_index(memory, prepared.texts)
    storage.unindex_memory_chunks(db, chunk_repo.chunk_ids_of(db, [memory.id]))
    chunk_repo.delete_chunks(db, [memory.id])
    chunk_ids = chunk_repo.add_chunks(db, memory, prepared.texts, prepared.model_id)
    partition = owner_key(memory.tenant_id, (memory.owner_kind, memory.owner_id))
    storage.memory_words.index_memory_chunks(
        db,
        chunks_with_words(
            [(i, partition, text) for i, text in zip(chunk_ids, index.texts, strict=True)],
            index.words,
        ),
        index.counts,
    )
    if prepared.vectors is not None:
        # Only the first chunks of a long memory have vectors (app/memory/store/preparing.py).
        storage.memory_vectors.store_chunk_vectors(
            db, [(i, partition, v) for i, v in zip(chunk_ids, prepared.vectors, strict=False)]
        )
        passage_repo.add_passage_vectors(db, prepared.passage_rows(memory.tenant_id, chunk_ids))
    memory.embedding_model = prepared.model_id


def write_chunks_many(
    db: Session, storage: Storage, items: list[tuple[Memory, PreparedChunks]]
) -> None:
    """``write_chunks`` for many memories at once: a few statements for the whole batch."""
    if not items:
        return
    memory_ids = [memory.id for memory, _ in items]
    storage.unindex_memory_chunks(db, chunk_repo.chunk_ids_of(db, memory_ids))
    chunk_repo.delete_chunks(db, memory_ids)
    groups = chunk_repo.add_chunks_many(
        db, [(memory, prepared.texts, prepared.model_id) for memory, prepared in items]
    )
    storage.memory_words.index_memory_chunks(
        db,
        chunks_with_words(
            [
                (
                    chunk.id,
                    owner_key(memory.tenant_id, (memory.owner_kind, memory.owner_id)),
                    index_text(memory, chunk.text),
                )
                for (memory, _), chunks in zip(items, groups, strict=True)
                for chunk in chunks
            ]
        ),
    )
    vectors, passages = [], []
    for (memory, prepared), chunks in zip(items, groups, strict=True):
        if prepared.vectors is not None:
            partition = owner_key(memory.tenant_id, (memory.owner_kind, memory.owner_id))
            # Only the first chunks have vectors (app/memory/store/preparing.py).
            vectors += [
                (chunk.id, partition, vector)
                for chunk, vector in zip(chunks, prepared.vectors, strict=False)
            ]
            passages += prepared.passage_rows(memory.tenant_id, [chunk.id for chunk in chunks])
        memory.embedding_model = prepared.model_id
    storage.memory_vectors.store_chunk_vectors(db, vectors)
    passage_repo.add_passage_vectors(db, passages)


def remove_memories(db: Session, storage: Storage, memory_ids: list[str]) -> None:
    """Delete memories with their chunks, word index rows and vectors."""
    storage.unindex_memory_chunks(db, chunk_repo.chunk_ids_of(db, memory_ids))
    chunk_repo.delete_chunks(db, memory_ids)
    repo.delete_memories(db, memory_ids)


def audit(
    db: Session,
    memory: Memory,
    action: str,
    actor: str,
    reason: str,
    before: str | None,
    now: datetime,
    *,
    deleted: bool = False,
) -> None:
    """One audit row per change: who, what, before and after (docs/recall.md, Memory records)."""
    repo.add_audit(
        db,
        MemoryAudit(
            tenant_id=memory.tenant_id,
            memory_id=memory.id,
            action=action,
            actor=actor,
            reason=redact_text(reason),  # a forget subject or a model's reason may quote a secret
            before_json=before,
            after_json=None if deleted else snapshot(memory),
            created_at=now,
        ),
    )
