"""SQLite: the memory side of the dialect (the word index over memory chunks, their vectors,
and the tool-use lookups of tool memories).

The word index scores FTS5's bm25() over the searched partitions' own statistics, read through
impact-ordered postings and kept counters (``sqlite_memory_postings``): a bounded number of rows
whatever the partition holds, and a partition's ranking that other partitions and tenants cannot
move. The contentless unicode61 FTS5 table over character-spaced chunk text finds the rows of
phrases too common for their words' postings. Vectors live in a sqlite-vec ``vec0`` table
partitioned by owner and are searched through the in-process matrices of ``sqlite_vectors``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import sqlite_vec
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.dialects.base import TextHit
from app.db.dialects.memory_partitions import ChunkWords
from app.db.dialects.memory_word_search import MemoryWordSearch
from app.db.dialects.sqlite_memory_candidates import candidate_words, current_chunks
from app.db.dialects.sqlite_memory_postings import (
    post_chunks,
    query_counts,
    read_statistics,
    unpost_chunks,
)
from app.db.dialects.sqlite_vectors import VectorCache, VectorSpace, log_changes
from app.search.phrases import Phrase
from app.search.plan import Counts, Statistics
from app.search.postings import TermCounts

MEMORY_FTS = "memory_fts"
MEMORY_VEC = "memory_vec"
MEMORY_SPACE = VectorSpace("memory", MEMORY_VEC, "chunk_id", "owner", None)


class SqliteMemoryIndex(MemoryWordSearch):
    """The memory methods of the SQLite dialect."""

    vectors: VectorCache

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

    def store_chunk_vectors(
        self, db: Session, rows: Iterable[tuple[int, str, list[float]]]
    ) -> None:
        params = [
            {"id": chunk_id, "owner": owner, "v": sqlite_vec.serialize_float32(vector)}
            for chunk_id, owner, vector in rows
        ]
        if params:
            db.execute(
                text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = :id"),
                [{"id": p["id"]} for p in params],
            )
            db.execute(
                text(
                    f"INSERT INTO {MEMORY_VEC}(chunk_id, owner, embedding) VALUES (:id, :owner, :v)"
                ),
                params,
            )
            log_changes(db, MEMORY_SPACE, [(str(p["owner"]), int(p["id"])) for p in params])

    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        if not chunk_ids:
            return
        params = [{"id": chunk_id} for chunk_id in chunk_ids]
        owners = [
            (str(owner), int(chunk_id))
            for p in params
            for chunk_id, owner in db.execute(
                text(f"SELECT chunk_id, owner FROM {MEMORY_VEC} WHERE chunk_id = :id"), p
            )
        ]
        log_changes(db, MEMORY_SPACE, owners)
        unpost_chunks(db, chunk_ids)
        db.execute(text(f"DELETE FROM {MEMORY_FTS} WHERE rowid = :id"), params)
        db.execute(text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = :id"), params)

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

    def nearest_memory_chunks(
        self, db: Session, owner: str, vector: list[float], k: int
    ) -> list[TextHit]:
        found = self.vectors.nearest(db, MEMORY_SPACE, owner, vector, k)
        if found is not None:
            return [TextHit(n.row_id, n.distance) for n in found]
        sql = (
            f"SELECT chunk_id, distance FROM {MEMORY_VEC} "
            "WHERE embedding MATCH :v AND k = :k AND owner = :owner ORDER BY distance"
        )
        params = {"v": sqlite_vec.serialize_float32(vector), "k": k, "owner": owner}
        return [TextHit(int(r), float(d)) for r, d in db.execute(text(sql), params)]

    def tool_results(
        self, db: Session, tenant_id: str, agent_id: str, tool_names: list[str], limit: int
    ) -> list[tuple[str, bool, str]]:
        if not tool_names:
            return []
        names = {f"n{i}": name for i, name in enumerate(tool_names)}
        sql = (
            "SELECT json_extract(m.body, '$.toolName'), json_extract(m.body, '$.isError'), m.search_text "
            "FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'toolResult' "
            f"AND json_extract(m.body, '$.toolName') IN ({', '.join(':' + k for k in names)}) "
            "ORDER BY m.id DESC LIMIT :limit"
        )
        rows = db.execute(text(sql), {"t": tenant_id, "a": agent_id, "limit": limit, **names})
        return [(str(name), bool(error), body or "") for name, error, body in rows]

    def tool_calls_mentioning(
        self, db: Session, tenant_id: str, agent_id: str, needle: str, limit: int
    ) -> list[tuple[int, int, str]]:
        sql = (
            "SELECT m.session_pk, m.seq, m.body FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'assistant' AND instr(m.search_text, :n) > 0 "
            "ORDER BY m.id DESC LIMIT :limit"
        )
        rows = db.execute(text(sql), {"t": tenant_id, "a": agent_id, "n": needle, "limit": limit})
        return [(int(pk), int(seq), body) for pk, seq, body in rows]
