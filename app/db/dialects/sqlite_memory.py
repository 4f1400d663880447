"""SQLite: the memory side of the dialect (the word index over memory chunks, their vectors,
and the tool-use lookups of tool memories).

The word index is a contentless unicode61 FTS5 table over character-spaced chunk text (BM25 that
matches Chinese words of any length); its ``fts5vocab`` table gives the per-token document counts
BM25 uses. Vectors live in a sqlite-vec ``vec0`` table partitioned by owner and are searched through
the in-process matrices of ``sqlite_vectors``.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_vec
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.dialects.base import TextHit, owner_condition
from app.db.dialects.sqlite_vectors import VectorCache, VectorSpace, log_changes

MEMORY_FTS = "memory_fts"
MEMORY_VEC = "memory_vec"
MEMORY_VOCAB = "memory_fts_vocab"
MEMORY_SPACE = VectorSpace("memory", MEMORY_VEC, "chunk_id", "owner", None)


class SqliteMemoryIndex:
    """The memory methods of the SQLite dialect."""

    vectors: VectorCache

    def index_memory_chunks(self, db: Session, rows: Iterable[tuple[int, str, str]]) -> None:
        # FTS5 keeps whole-index statistics: the partition is not needed here.
        params = [{"id": chunk_id, "text": body} for chunk_id, _, body in rows if body]
        if params:
            db.execute(text(f"INSERT INTO {MEMORY_FTS}(rowid, text) VALUES (:id, :text)"), params)

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
        db.execute(text(f"DELETE FROM {MEMORY_FTS} WHERE rowid = :id"), params)
        db.execute(text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = :id"), params)

    def match_memory_chunks(
        self,
        db: Session,
        tenant_id: str,
        owners: list[tuple[str, str]],
        expression: str,
        limit: int,
    ) -> list[TextHit]:
        if not owners:
            return []
        params: dict[str, object] = {"q": expression, "limit": limit, "t": tenant_id}
        owner_sql = owner_condition(owners, params)
        # CROSS JOIN keeps the full-text lookup as the outer loop (SQLite never reorders it): one
        # MATCH, then a primary-key probe per hit. Written as an IN (...) filter, the planner pushes
        # the owner's ids into the FTS table and runs the MATCH once per chunk.
        sql = (
            f"SELECT f.rowid, bm25({MEMORY_FTS}) AS rank FROM {MEMORY_FTS} f "
            "CROSS JOIN memory_chunks c ON c.id = f.rowid CROSS JOIN memories m ON m.id = c.memory_id "
            f"WHERE {MEMORY_FTS} MATCH :q AND m.tenant_id = :t AND ({owner_sql}) "
            "AND m.superseded_by IS NULL ORDER BY rank LIMIT :limit"
        )
        return [TextHit(int(r), float(rank)) for r, rank in db.execute(text(sql), params)]

    def memory_term_documents(
        self,
        db: Session,
        partitions: list[str],  # noqa: ARG002 - FTS5 keeps whole-index statistics
        tokens: list[str],
        prefixes: list[str],
    ) -> tuple[int, dict[str, int]]:
        # fts5vocab reads the index's own per-token counts (the numbers FTS5's bm25() uses): a
        # lookup per token, no matter how many chunks hold it.
        documents = int(db.execute(text("SELECT count(*) FROM memory_chunks")).scalar_one())
        found: dict[str, int] = {}
        for token in dict.fromkeys(tokens):
            row = db.execute(
                text(f"SELECT doc FROM {MEMORY_VOCAB} WHERE term = :t"), {"t": token}
            ).first()
            found[token] = int(row[0]) if row else 0
        for prefix in dict.fromkeys(prefixes):
            upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            total = db.execute(
                text(f"SELECT sum(doc) FROM {MEMORY_VOCAB} WHERE term >= :p AND term < :u"),
                {"p": prefix, "u": upper},
            ).scalar_one()
            found[prefix + "*"] = min(int(total or 0), documents)
        return documents, found

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
