"""PostgreSQL: the memory side of the dialect (the word index over memory chunks, searched through
impact-ordered postings and scored with FTS5's bm25() over the searched partitions' statistics,
pgvector KNN per owner, and the tool-use lookups of tool memories)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.dialects.base import TextHit
from app.db.dialects.memory_partitions import ChunkWords
from app.db.dialects.memory_word_search import MemoryWordSearch
from app.db.dialects.postgres_memory_candidates import candidate_words
from app.db.dialects.postgres_memory_counts import query_counts
from app.db.dialects.postgres_memory_postings import post_chunks, read_statistics, unpost_chunks
from app.db.dialects.postgres_text import tsvector_literal, vector_literal, without_nul
from app.search.phrases import Phrase
from app.search.plan import Counts, Statistics
from app.search.postings import TermCounts

MEMORY_FTS = "memory_fts"
MEMORY_VEC = "memory_vec"
# HNSW candidate list: wide enough that the k nearest of a partition are found.
EF_SEARCH = 200


class PostgresMemoryIndex(MemoryWordSearch):
    """The memory methods of the PostgreSQL dialect."""

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

    def store_chunk_vectors(
        self, db: Session, rows: Iterable[tuple[int, str, list[float]]]
    ) -> None:
        params = [
            {"id": chunk_id, "owner": owner, "v": vector_literal(vector)}
            for chunk_id, owner, vector in rows
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MEMORY_VEC}(chunk_id, owner, embedding) VALUES (:id, :owner, CAST(:v AS vector)) "
                    "ON CONFLICT (chunk_id) DO UPDATE SET owner = EXCLUDED.owner, embedding = EXCLUDED.embedding"
                ),
                params,
            )

    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        if chunk_ids:
            params = {"ids": list(chunk_ids)}
            unpost_chunks(db, chunk_ids)
            db.execute(text(f"DELETE FROM {MEMORY_FTS} WHERE id = ANY(:ids)"), params)
            db.execute(text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = ANY(:ids)"), params)

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

    def nearest_memory_chunks(
        self, db: Session, owner: str, vector: list[float], k: int
    ) -> list[TextHit]:
        tune_vector_scan(db, k)
        sql = (
            f"SELECT chunk_id, embedding <=> CAST(:v AS vector) AS distance FROM {MEMORY_VEC} "
            "WHERE owner = :owner ORDER BY distance LIMIT :k"
        )
        params = {"v": vector_literal(vector), "owner": owner, "k": k}
        return [TextHit(int(r), float(d)) for r, d in db.execute(text(sql), params)]

    def tool_results(
        self, db: Session, tenant_id: str, agent_id: str, tool_names: list[str], limit: int
    ) -> list[tuple[str, bool, str]]:
        if not tool_names:
            return []
        # json, not jsonb: a body may hold \u0000, which jsonb refuses.
        sql = (
            "SELECT m.body::json ->> 'toolName', m.body::json -> 'isError', m.search_text "
            "FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'toolResult' "
            "AND m.body::json ->> 'toolName' = ANY(:names) ORDER BY m.id DESC LIMIT :limit"
        )
        params = {"t": tenant_id, "a": agent_id, "names": list(tool_names), "limit": limit}
        return [
            (str(name), bool(error), body or "")
            for name, error, body in db.execute(text(sql), params)
        ]

    def tool_calls_mentioning(
        self, db: Session, tenant_id: str, agent_id: str, needle: str, limit: int
    ) -> list[tuple[int, int, str]]:
        sql = (
            "SELECT m.session_pk, m.seq, m.body FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'assistant' "
            "AND strpos(m.search_text, :n) > 0 ORDER BY m.id DESC LIMIT :limit"
        )
        params = {"t": tenant_id, "a": agent_id, "n": without_nul(needle), "limit": limit}
        return [(int(pk), int(seq), body) for pk, seq, body in db.execute(text(sql), params)]


def tune_vector_scan(db: Session, k: int) -> None:
    """For this transaction: an HNSW scan keeps going until k rows pass the partition filter, in
    exact distance order, with a candidate list of at least ``EF_SEARCH``."""
    db.execute(
        text(
            "SELECT set_config('hnsw.iterative_scan', 'strict_order', true), "
            "set_config('hnsw.ef_search', :ef, true)"
        ),
        {"ef": str(min(1000, max(EF_SEARCH, k)))},
    )
