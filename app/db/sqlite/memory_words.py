"""SQLite: the word index over memory chunks.

The word index scores FTS5's bm25() over the searched partitions' own statistics, read through
impact-ordered postings and kept counters (``memory_postings``): a bounded number of rows
whatever the partition holds, and a partition's ranking that other partitions and tenants cannot
move. The contentless unicode61 FTS5 table over character-spaced chunk text finds the rows of
phrases too common for their words' postings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.shared.memory_partitions import ChunkWords
from app.db.shared.memory_word_search import MemoryWordSearch
from app.db.shared.rows import TextHit
from app.db.sqlite.memory_candidates import candidate_words, current_chunks
from app.db.sqlite.memory_postings import (
    post_chunks,
    query_counts,
    read_statistics,
    unpost_chunks,
)
from app.search.phrases import Phrase
from app.search.plan import Counts, Statistics
from app.search.postings import TermCounts

MEMORY_FTS = "memory_fts"


class SqliteMemoryWords(MemoryWordSearch):
    """The memory word index of SQLite (``MemoryWordIndex``)."""

    def index_memory_chunks(
        self,
        db: Session,
        chunks: Sequence[ChunkWords],
        counts_of: Mapping[str, TermCounts] | None = None,
    ) -> None:
        counts = counts_of or {}
        params = [{"id": chunk_id, "text": body} for chunk_id, _, body, _ in chunks]
        posted = [
            (chunk_id, partition, tokens, counts.get(body))
            for chunk_id, partition, body, tokens in chunks
        ]
        if params:
            db.execute(text(f"INSERT INTO {MEMORY_FTS}(rowid, text) VALUES (:id, :text)"), params)
            post_chunks(db, posted)

    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        if not chunk_ids:
            return
        unpost_chunks(db, chunk_ids)
        db.execute(
            text(f"DELETE FROM {MEMORY_FTS} WHERE rowid = :id"), [{"id": i} for i in chunk_ids]
        )

    def _word_statistics(
        self, db: Session, partitions: list[str], phrases: list[Phrase]
    ) -> Statistics:
        return read_statistics(db, partitions, phrases)

    def _word_candidates(
        self,
        db: Session,
        tenant_id: str,  # noqa: ARG002 (the hook's signature: the word index has no tenant)
        partitions: list[str],
        stats: Statistics,
        per_term: int,
    ) -> list[tuple[int, list[str]]]:
        return candidate_words(db, partitions, stats, per_term)

    def _current_hits(
        self, db: Session, tenant_id: str, ranked: list[tuple[float, int]], limit: int
    ) -> list[TextHit]:
        # The candidates are read from the index alone: those of chunks since replaced are left
        # out here, a batch of the ranking at a time.
        hits: list[TextHit] = []
        for start in range(0, len(ranked), limit):
            batch = ranked[start : start + limit]
            current = current_chunks(db, tenant_id, [i for _, i in batch])
            hits += [TextHit(i, s) for s, i in batch if i in current]
            if len(hits) >= limit:
                break
        return hits[:limit]

    def _word_counts(
        self, db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
    ) -> Counts:
        return query_counts(db, partitions, terms, prefixes)
