"""The two sides of a memory search (``app.memory.search.hybrid``), each read in a transaction of its own:
the word index's ranks with the rank of an ideal chunk, and the nearest chunks' similarities with
their best passage's; each with its chunks' rows."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.core.vector_matrix import best_cosines
from app.db.models import Memory
from app.db.seams import Storage
from app.memory.records import owner_key
from app.memory.service import MemoryService
from app.memory.store import chunk_repository as chunk_repo
from app.memory.store import passage_repository as passage_repo
from app.search.fusion import phrase_idf, with_best_passage
from app.search.phrases import Phrase
from app.search.text.date_terms import mentioned_dates

ChunkRow = tuple[int, Memory]  # a chunk's id and its memory


def mentions_any_day(memory: Memory, days: set[str]) -> bool:
    """Whether a memory mentions one of ``days``, relative dates resolved against when it was
    observed (as its word index has them)."""
    moment = memory.observed_at or memory.created_at
    said_on = moment.date() if moment else None
    return not days.isdisjoint(mentioned_dates(f"{memory.title}\n{memory.content}", said_on))


def word_side(
    service: MemoryService,
    tenant_id: str,
    owners: list[tuple[str, str]],
    phrases: list[Phrase],
    pool: int,
) -> tuple[dict[int, float], float, list[ChunkRow]]:
    """The word index's rank of each matching chunk, the rank of an ideal chunk, and the matching
    chunks' rows, in one read transaction."""
    with service.uow.read() as db:
        ranks, ideal = _word_ranks(db, service.uow.storage, tenant_id, owners, phrases, pool)
        return ranks, ideal, chunk_repo.chunks_with_memories(db, list(ranks), utcnow())


def vector_side(
    service: MemoryService,
    tenant_id: str,
    owners: list[tuple[str, str]],
    vector: list[float],
    pool: int,
) -> tuple[dict[int, float], list[ChunkRow]]:
    """The nearest chunks' similarity to the query: their whole vector's, blended with their best
    passage's (``app.search.fusion.with_best_passage``). Passages are not searched on their own: those of
    the nearest chunks are read by chunk and scored here (a few hundred vectors)."""
    whole: dict[int, float] = {}
    with service.uow.read() as db:
        for owner in owners:
            for hit in service.uow.storage.memory_vectors.nearest_memory_chunks(
                db, owner_key(tenant_id, owner), vector, pool
            ):
                whole[hit.row_id] = 1.0 - float(hit.score or 0.0)
        passages = passage_repo.passage_vectors_of(db, list(whole))
        rows = chunk_repo.chunks_with_memories(db, list(whole), utcnow())
    return with_best_passage(whole, best_cosines(passages, vector)), rows


def _word_ranks(
    db: Session,
    storage: Storage,
    tenant_id: str,
    owners: list[tuple[str, str]],
    phrases: list[Phrase],
    pool: int,
) -> tuple[dict[int, float], float]:
    """The word index's rank of each matching chunk, and the rank of an ideal chunk."""
    ranks = {
        h.row_id: float(h.score or 0.0)
        for h in storage.memory_words.match_memory_chunks(db, tenant_id, owners, phrases, pool)
    }
    partitions = [owner_key(tenant_id, owner) for owner in owners]
    return ranks, _ideal_rank(db, storage, partitions, phrases) if ranks else 0.0


def _ideal_rank(
    db: Session, storage: Storage, partitions: list[str], phrases: list[Phrase]
) -> float:
    """The word index's BM25 of a chunk holding every phrase once: the sum of the phrases' idfs,
    with a phrase as frequent as its rarest token (an upper bound)."""
    tokens = [t for p in phrases for t in (p.tokens[:-1] if p.prefix else p.tokens)]
    documents, counts = storage.memory_words.memory_term_documents(
        db, partitions, tokens, [p.tokens[-1] for p in phrases if p.prefix]
    )
    total = 0.0
    for phrase in phrases:
        keys = (
            [*phrase.tokens[:-1], phrase.tokens[-1] + "*"] if phrase.prefix else list(phrase.tokens)
        )
        total += phrase_idf(documents, min(counts.get(k, 0) for k in keys))
    return total
