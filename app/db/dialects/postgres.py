"""PostgreSQL: pg_trgm for substring search, a tsvector word index, pgvector for nearest vectors.

The tables are those of migrations/helpers.py (PostgreSQL branch), with the SQLite names:

- ``message_fts`` / ``archive_fts`` hold (id, text) under a trigram GIN index, the text lowercased
  by the database: a term of three or more characters, in any script, is looked up through the
  index with ``LIKE lower('%term%')``, the same substring, case-insensitive meaning as FTS5's
  trigram tokenizer (``部署失败`` finds ``昨天部署失败了``). ILIKE would fold the case of every row
  it checks, which was most of a search's time. Ranked
  search scores the hits with BM25 over the session's indexed rows (term frequency = occurrences
  of the substring, length in bytes, Lucene's always-positive idf): the order is BM25's, the
  numbers are not FTS5's.
- ``memory_fts`` holds each chunk's words (FTS5 unicode61's split, app/search/text/words.py)
  and their tsvector under a GIN index; candidates come from impact-ordered postings, as on SQLite
  (app/search/plan.py), and are ranked with FTS5's own bm25() formula over the
  searched partitions, so app/memory reads the same numbers as on SQLite.
- ``memory_vec`` / ``message_vec`` hold pgvector ``vector(384)`` rows; a KNN is ``ORDER BY
  embedding <=> query`` (cosine distance, as sqlite-vec's) inside one owner or session. The
  planner takes the partition's b-tree and an exact sort when the partition is small against the
  table, or the HNSW index with iterative scans (pgvector 0.8) when it is large. Measured against
  exact search (tests/db/test_postgres_dialect.py: 2,000 random unit 384-d vectors, 1,500 of them
  in the searched owner, 20 queries, k = 10, the HNSW path forced): recall@10 0.995 with
  ``hnsw.ef_search`` = 200, 0.96 with 100 (the planner's own choice on that table: exact, 1.0).

Writers run concurrently (``single_writer = False``): row locks, not a database lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from app.db.dialects.base import CandidateRow, Dialect, TextHit, TimeRange, candidate_row
from app.db.dialects.postgres_memory import PostgresMemoryIndex
from app.db.dialects.postgres_passages import PostgresPassageIndex, session_knn
from app.db.dialects.postgres_text import (
    like_pattern,
    vector_literal,
    without_nul,
)

MESSAGE_FTS = "message_fts"
ARCHIVE_FTS = "archive_fts"
MESSAGE_VEC = "message_vec"


def _archived(archive_pk: int | None, alias: str = "m") -> str:
    return (
        f"AND {alias}.archive_pk = :a"
        if archive_pk is not None
        else f"AND {alias}.archive_pk IS NOT NULL"
    )


def _ranked_trigram_sql(
    index: str, scope_join: str, scope: str, terms: list[str], params: dict[str, object]
) -> str:
    """SQL of (id, BM25 score) for rows of ``index`` within ``scope`` holding any term, best first."""
    matches, frequencies, documents, scores = [], [], [], []
    for i, term in enumerate(terms):
        params[f"p{i}"], params[f"t{i}"] = like_pattern(term), term.lower()
        matches.append(f"f.text LIKE lower(:p{i})")
        frequencies.append(
            f"(length(h.body) - length(replace(h.body, :t{i}, ''))) / greatest(length(CAST(:t{i} AS text)), 1) AS tf{i}"
        )
        documents.append(f"count(*) FILTER (WHERE tf{i} > 0) AS df{i}")
        scores.append(
            f"ln(1 + (st.n - d.df{i} + 0.5) / (d.df{i} + 0.5)) * tf{i} * 2.2 / "
            f"(tf{i} + 1.2 * (0.25 + 0.75 * c.dl / st.avgdl))"
        )
    return (
        f"WITH h AS (SELECT f.id, f.text AS body, octet_length(f.text) AS dl FROM {index} f "
        f"{scope_join} WHERE ({' OR '.join(matches)}) {scope}), "
        f"c AS (SELECT h.id, h.dl, {', '.join(frequencies)} FROM h), "
        f"d AS (SELECT {', '.join(documents)} FROM c), "
        f"st AS (SELECT count(*) AS n, greatest(coalesce(avg(octet_length(f.text)), 1), 1) AS avgdl "
        f"FROM {index} f {scope_join} WHERE true {scope}) "
        f"SELECT c.id, ({' + '.join(scores)}) AS score FROM c, d, st ORDER BY score DESC, c.id"
    )


class PostgresDialect(PostgresMemoryIndex, PostgresPassageIndex, Dialect):
    name = "postgresql"
    single_writer = False

    def index_messages(self, db: Session, rows: Iterable[tuple[int, str]]) -> None:
        params = [{"id": row_id, "text": without_nul(body)} for row_id, body in rows if body]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MESSAGE_FTS}(id, text) VALUES (:id, lower(:text)) "
                    "ON CONFLICT (id) DO UPDATE SET text = EXCLUDED.text"
                ),
                params,
            )

    def unindex_session(self, db: Session, session_pk: int) -> None:
        params = {"s": session_pk}
        db.execute(
            text(
                f"DELETE FROM {MESSAGE_FTS} WHERE id IN (SELECT id FROM messages WHERE session_pk = :s)"
            ),
            params,
        )
        db.execute(text(f"DELETE FROM {MESSAGE_VEC} WHERE session_pk = :s"), params)
        self.unindex_session_passages(db, session_pk)
        db.execute(
            text(
                f"DELETE FROM {ARCHIVE_FTS} WHERE id IN (SELECT id FROM archives WHERE session_pk = :s)"
            ),
            params,
        )

    def index_archive_overview(self, db: Session, archive_pk: int, text_value: str) -> None:
        db.execute(text(f"DELETE FROM {ARCHIVE_FTS} WHERE id = :id"), {"id": archive_pk})
        if text_value:
            db.execute(
                text(f"INSERT INTO {ARCHIVE_FTS}(id, text) VALUES (:id, lower(:text))"),
                {"id": archive_pk, "text": without_nul(text_value)},
            )

    def match_messages(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        params: dict[str, object] = {"s": session_pk, "a": archive_pk}
        if ranked:
            sql = _ranked_trigram_sql(
                MESSAGE_FTS,
                "JOIN messages m ON m.id = f.id",
                f"AND m.session_pk = :s {_archived(archive_pk)}",
                terms,
                params,
            )
            for row_id, score in db.execute(text(sql), params):
                yield TextHit(int(row_id), float(score))
            return
        conditions = []
        for i, term in enumerate(terms):
            params[f"p{i}"] = like_pattern(term)
            conditions.append(f"f.text LIKE lower(:p{i})")
        sql = (
            f"SELECT m.id FROM messages m JOIN {MESSAGE_FTS} f ON f.id = m.id "
            f"WHERE {' AND '.join(conditions)} AND m.session_pk = :s {_archived(archive_pk)} "
            "ORDER BY m.seq"
        )
        for (row_id,) in db.execute(text(sql), params):
            yield TextHit(int(row_id), None)

    def match_overviews(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        params: dict[str, object] = {"s": session_pk, "a": archive_pk}
        scope = "AND a.session_pk = :s" + (" AND a.id = :a" if archive_pk is not None else "")
        sql = _ranked_trigram_sql(
            ARCHIVE_FTS, "JOIN archives a ON a.id = f.id", scope, terms, params
        )
        if not ranked:  # every term, still in rank order (as FTS5's ORDER BY rank)
            held = " AND ".join(f"c.tf{i} > 0" for i in range(len(terms)))
            sql = sql.replace(" FROM c, d, st ", f" FROM c, d, st WHERE {held} ")
        for row_id, score in db.execute(text(sql), params):
            yield TextHit(int(row_id), float(score) if ranked else None)

    def min_indexed_term_chars(self) -> int:
        return 3  # a trigram index cannot look up a shorter term

    def short_term_message_ids(
        self,
        db: Session,  # noqa: ARG002 - the trigram index cannot answer: see below
        session_pk: int,  # noqa: ARG002
        terms: list[str],  # noqa: ARG002
        archive_pk: int | None,  # noqa: ARG002
    ) -> list[int] | None:
        # pg_trgm pads words with blanks, but a pattern of two characters still gives it no
        # trigram to look up: the caller scans the session.
        return None

    def scan_message_ids(
        self,
        db: Session,
        session_pk: int,
        terms: list[str],
        archive_pk: int | None,
        case_sensitive: bool,
    ) -> list[int]:
        # lower() folds every script here (SQLite's folds ASCII only): callers verify each hit.
        column = "m.search_text" if case_sensitive else "lower(m.search_text)"
        params: dict[str, object] = {"s": session_pk, "a": archive_pk}
        for i, term in enumerate(terms):
            params[f"t{i}"] = without_nul(term if case_sensitive else term.lower())
        conditions = " AND ".join(f"strpos({column}, :t{i}) > 0" for i in range(len(terms)))
        sql = (
            f"SELECT m.id FROM messages m WHERE m.session_pk = :s {_archived(archive_pk)} "
            f"AND {conditions} ORDER BY m.seq"
        )
        return [int(row_id) for (row_id,) in db.execute(text(sql), params)]

    def _candidate_sources(
        self,
        db: Session,  # noqa: ARG002 - no vocabulary read: a short literal scans the session
        session_pk: int,
        literals: list[str],
        dates: list[str],
        archive_pk: int | None,
        window: TimeRange,
    ) -> Iterator[tuple[str, dict[str, object]]]:
        """One id query per literal, in the caller's order, then one for the dates (as SQLite's)."""
        base: dict[str, object] = {
            "s": session_pk,
            "a": archive_pk,
            "since": window[0],
            "until": window[1],
        }
        joined = (
            "LEFT JOIN message_search x ON x.message_id = m.id " if window != (None, None) else ""
        )
        head = (
            f"SELECT m.id FROM messages m {joined}WHERE m.session_pk = :s {_archived(archive_pk)} "
        )
        if window[0] is not None:
            head += "AND (x.said_at_ms IS NULL OR x.said_at_ms >= :since) "
        if window[1] is not None:
            head += "AND (x.said_at_ms IS NULL OR x.said_at_ms <= :until) "
        for literal in literals:
            if len(literal) >= self.min_indexed_term_chars():
                where = f"AND m.id IN (SELECT id FROM {MESSAGE_FTS} WHERE text LIKE lower(:q))"
                yield head + where, {**base, "q": like_pattern(literal)}
            else:
                yield (
                    head + "AND strpos(lower(m.search_text), :t) > 0",
                    {**base, "t": without_nul(literal)},
                )
        if dates:
            found = " OR ".join(f"strpos(d.dates, :d{i}) > 0" for i in range(len(dates)))
            where = f"AND m.id IN (SELECT d.message_id FROM message_search d WHERE d.session_pk = :s AND ({found}))"
            yield head + where, {**base, **{f"d{i}": day for i, day in enumerate(dates)}}

    def _candidate_rows(self, db: Session, ids: list[int]) -> list[CandidateRow]:
        if not ids:
            return []
        sql = (
            "SELECT m.id, m.archive_pk, m.seq, m.role, m.search_text, "
            "coalesce(x.dates, ''), x.said_at_ms FROM messages m "
            "LEFT JOIN message_search x ON x.message_id = m.id WHERE m.id = ANY(:ids)"
        )
        return [candidate_row(r) for r in db.execute(text(sql), {"ids": ids})]

    def store_message_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, list[float]]]
    ) -> None:
        params = [
            {"id": message_id, "s": session_pk, "t": said_at_ms, "v": vector_literal(vector)}
            for message_id, session_pk, said_at_ms, vector in rows
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MESSAGE_VEC}(message_id, session_pk, said_at_ms, embedding) "
                    "VALUES (:id, :s, :t, CAST(:v AS vector)) ON CONFLICT (message_id) DO UPDATE SET "
                    "session_pk = EXCLUDED.session_pk, said_at_ms = EXCLUDED.said_at_ms, embedding = EXCLUDED.embedding"
                ),
                params,
            )

    def nearest_messages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit]:
        hits = session_knn(db, MESSAGE_VEC, "message_id", session_pk, vector, k, window)
        return [TextHit(row_id, distance) for row_id, distance in hits]

    def lock_session(self, db: Session, tenant_id: str, session_id: str) -> None:
        """A transaction-scoped advisory lock on the session's key: what SQLite's single writer
        gives every write unit of work."""
        db.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
            {"k": f"session\x1f{tenant_id}\x1f{session_id}"},
        )

    def probe_write(self, conn: Connection) -> None:
        conn.execute(text("CREATE TABLE ce_write_probe (id INTEGER)"))
