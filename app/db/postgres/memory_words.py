"""PostgreSQL: the word index over memory chunks.

``memory_fts`` holds each chunk's words (FTS5 unicode61's split, app/search/text/words.py) and
their tsvector under a GIN index; candidates come from impact-ordered postings, as on SQLite
(app/search/plan.py), and are ranked with FTS5's own bm25() formula over the searched partitions,
so app/memory reads the same numbers as on SQLite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.literals import tsvector_literal
from app.db.postgres.memory_candidates import candidate_words
from app.db.postgres.memory_counts import query_counts
from app.db.postgres.memory_postings import post_chunks, read_statistics, unpost_chunks
from app.db.shared.memory_partitions import ChunkWords
from app.db.shared.memory_word_search import MemoryWordSearch
from app.db.shared.rows import TextHit
from app.search.phrases import Phrase
from app.search.plan import Counts, Statistics
from app.search.postings import TermCounts

MEMORY_FTS = "memory_fts"


class PostgresMemoryWords(MemoryWordSearch):
    """The memory word index of PostgreSQL (``MemoryWordIndex``)."""

    def index_memory_chunks(
        self,
        db: Session,
        chunks: Sequence[ChunkWords],
        counts_of: Mapping[str, TermCounts] | None = None,
    ) -> None:
        counts = counts_of or {}
        params = [
            {"id": chunk_id, "p": partition, "tokens": tokens, "v": tsvector_literal(tokens)}
            for chunk_id, partition, _, tokens in chunks
        ]
        posted = [
            (chunk_id, partition, tokens, counts.get(body))
            for chunk_id, partition, body, tokens in chunks
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MEMORY_FTS}(id, partition, tokens, words) "
                    "VALUES (:id, :p, :tokens, CAST(:v AS tsvector)) ON CONFLICT (id) DO UPDATE "
                    "SET partition = EXCLUDED.partition, tokens = EXCLUDED.tokens, words = EXCLUDED.words"
                ),
                params,
            )
            post_chunks(db, posted)

    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        if chunk_ids:
            unpost_chunks(db, chunk_ids)
            db.execute(
                text(f"DELETE FROM {MEMORY_FTS} WHERE id = ANY(:ids)"), {"ids": list(chunk_ids)}
            )

    def _word_statistics(
        self, db: Session, partitions: list[str], phrases: list[Phrase]
    ) -> Statistics:
        return read_statistics(db, partitions, phrases)

    def _word_candidates(
        self, db: Session, tenant_id: str, partitions: list[str], stats: Statistics, per_term: int
    ) -> list[tuple[int, list[str]]]:
        return candidate_words(db, tenant_id, partitions, stats, per_term)

    def _current_hits(
        self,
        db: Session,  # noqa: ARG002 (the hook's signature)
        tenant_id: str,  # noqa: ARG002
        ranked: list[tuple[float, int]],
        limit: int,
    ) -> list[TextHit]:
        # The candidates' statement reads current chunks only: nothing left to read here.
        return [TextHit(chunk_id, score) for score, chunk_id in ranked[:limit]]

    def _word_counts(
        self, db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
    ) -> Counts:
        return query_counts(db, partitions, terms, prefixes)
