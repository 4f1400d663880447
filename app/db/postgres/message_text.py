"""PostgreSQL: pg_trgm for substring search of archived messages and archive overviews.

The tables are those of migrations/helpers.py (PostgreSQL branch), with the SQLite names:

- ``message_fts`` / ``archive_fts`` hold (id, text) under a trigram GIN index, the text lowercased
  by the database: a term of three or more characters, in any script, is looked up through the
  index with ``LIKE lower('%term%')``, the same substring, case-insensitive meaning as FTS5's
  trigram tokenizer (``部署失败`` finds ``昨天部署失败了``). ILIKE would fold the case of every row
  it checks, which was most of a search's time. Ranked
  search scores the hits with BM25 over the session's indexed rows (term frequency = occurrences
  of the substring, length in bytes, Lucene's always-positive idf): the order is BM25's, the
  numbers are not FTS5's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.literals import like_pattern, without_nul
from app.db.shared.message_candidates import (
    CANDIDATE_SELECT,
    MessageCandidates,
    archived,
    candidate_scope,
    dated_source,
    scope_params,
)
from app.db.shared.rows import CandidateRow, TextHit, TimeRange, candidate_row

MESSAGE_FTS = "message_fts"
ARCHIVE_FTS = "archive_fts"


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


class PostgresMessageText(MessageCandidates):
    """The message text index of PostgreSQL (``MessageTextIndex``)."""

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
                f"AND m.session_pk = :s {archived(archive_pk)}",
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
            f"WHERE {' AND '.join(conditions)} AND m.session_pk = :s {archived(archive_pk)} "
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
            f"SELECT m.id FROM messages m WHERE m.session_pk = :s {archived(archive_pk)} "
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
        base = scope_params(session_pk, archive_pk, window)
        joined, where = candidate_scope(archive_pk, window)
        head = f"SELECT m.id FROM messages m {joined}WHERE {where}"
        for literal in literals:
            if len(literal) >= self.min_indexed_term_chars():
                indexed = f"AND m.id IN (SELECT id FROM {MESSAGE_FTS} WHERE text LIKE lower(:q))"
                yield head + indexed, {**base, "q": like_pattern(literal)}
            else:
                yield (
                    head + "AND strpos(lower(m.search_text), :t) > 0",
                    {**base, "t": without_nul(literal)},
                )
        if dates:
            yield dated_source(head, base, dates, "strpos")

    def _candidate_rows(self, db: Session, ids: list[int]) -> list[CandidateRow]:
        if not ids:
            return []
        sql = CANDIDATE_SELECT + "m.id = ANY(:ids)"
        return [candidate_row(r) for r in db.execute(text(sql), {"ids": ids})]
