"""PostgreSQL: the memory side of the dialect (the word index over memory chunks as a tsvector
with FTS5's bm25() computed over it, pgvector KNN per owner, and the tool-use lookups of tool
memories)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.dialects.base import TextHit, owner_condition
from app.db.dialects.postgres_text import (
    Phrase,
    fts5_bm25,
    fts5_idf,
    parse_expression,
    tsquery_literal,
    tsvector_literal,
    vector_literal,
    without_nul,
    words,
)

MEMORY_FTS = "memory_fts"
MEMORY_VEC = "memory_vec"
# HNSW candidate list: wide enough that the k nearest of a partition are found.
EF_SEARCH = 200


class PostgresMemoryIndex:
    """The memory methods of the PostgreSQL dialect."""

    def index_memory_chunks(self, db: Session, rows: Iterable[tuple[int, str]]) -> None:
        params = []
        for chunk_id, body in rows:
            tokens = words(body) if body else []
            if tokens:
                params.append({"id": chunk_id, "tokens": tokens, "v": tsvector_literal(tokens)})
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MEMORY_FTS}(id, tokens, words) VALUES (:id, :tokens, CAST(:v AS tsvector)) "
                    "ON CONFLICT (id) DO UPDATE SET tokens = EXCLUDED.tokens, words = EXCLUDED.words"
                ),
                params,
            )

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
            db.execute(text(f"DELETE FROM {MEMORY_FTS} WHERE id = ANY(:ids)"), params)
            db.execute(text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = ANY(:ids)"), params)

    def match_memory_chunks(
        self,
        db: Session,
        tenant_id: str,
        owners: list[tuple[str, str]],
        expression: str,
        limit: int,
    ) -> list[TextHit]:
        phrases = parse_expression(expression)
        if not owners or not phrases:
            return []
        params: dict[str, object] = {"q": tsquery_literal(phrases), "t": tenant_id}
        owner_sql = owner_condition(owners, params)
        sql = (
            f"SELECT f.id, f.tokens FROM {MEMORY_FTS} f JOIN memory_chunks c ON c.id = f.id "
            "JOIN memories m ON m.id = c.memory_id "
            f"WHERE f.words @@ CAST(:q AS tsquery) AND m.tenant_id = :t AND ({owner_sql}) "
            "AND m.superseded_by IS NULL"
        )
        hits = db.execute(text(sql), params).all()
        if not hits:
            return []
        # FTS5's statistics are the whole index's: its row count, average length, and each
        # phrase's row count.
        documents, average = db.execute(
            text(f"SELECT count(*), coalesce(avg(cardinality(tokens)), 0) FROM {MEMORY_FTS}")
        ).one()
        idfs = [
            fts5_idf(int(documents), self._rows_matching(db, tsquery_literal([p]))) for p in phrases
        ]
        scored = [
            TextHit(int(row_id), fts5_bm25(list(tokens), phrases, idfs, float(average)))
            for row_id, tokens in hits
        ]
        scored = [h for h in scored if h.score is not None and h.score < 0]
        scored.sort(key=lambda h: (h.score, h.row_id))
        return scored[:limit]

    def _rows_matching(self, db: Session, query: str) -> int:
        return int(
            db.execute(
                text(f"SELECT count(*) FROM {MEMORY_FTS} WHERE words @@ CAST(:q AS tsquery)"),
                {"q": query},
            ).scalar_one()
        )

    def memory_term_documents(
        self, db: Session, tokens: list[str], prefixes: list[str]
    ) -> tuple[int, dict[str, int]]:
        # A token is looked up as given, as in FTS5's vocabulary table; a prefix counts the rows
        # holding any of its words (exact, where FTS5's sum of per-word counts may overestimate).
        documents = int(db.execute(text("SELECT count(*) FROM memory_chunks")).scalar_one())
        quote = tsquery_literal
        found: dict[str, int] = {}
        for token in dict.fromkeys(tokens):
            found[token] = self._rows_matching(db, quote([_single(token, prefix=False)]))
        for prefix in dict.fromkeys(prefixes):
            count = self._rows_matching(db, quote([_single(prefix, prefix=True)]))
            found[prefix + "*"] = min(count, documents)
        return documents, found

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


def _single(token: str, *, prefix: bool) -> Phrase:
    return Phrase((token,), prefix)


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
