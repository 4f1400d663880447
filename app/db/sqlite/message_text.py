"""SQLite: FTS5 with the trigram tokenizer.

Trigrams make every substring of three or more characters searchable, in any script: Chinese
needs no segmenter (``部署失败`` finds ``昨天部署失败了``) and keyword search keeps its literal,
substring meaning. The tables are contentless (the text lives in ``messages``/``archives``) with
contentless-delete, so rows can be removed by id alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.session_sql import session_all_rows, session_rows
from app.db.shared.message_candidates import (
    CANDIDATE_SELECT,
    MessageCandidates,
    archived,
    candidate_scope,
    dated_source,
    scope_params,
)
from app.db.shared.rows import CandidateRow, TextHit, TimeRange, candidate_row
from app.db.sqlite.message_fts import (
    COUNT_FEW_MATCHES,
    FEW_MATCHES,
    MARK_QUERY,
    MESSAGE_FTS,
    fts_phrase,
    fts_query,
    indexed_form,
    matching_in_order,
)
from app.db.sqlite.short_terms import short_terms_expression

ARCHIVE_FTS = "archive_fts"
_INDEX_MESSAGE = text(f"INSERT INTO {MESSAGE_FTS}(rowid, text) VALUES (:id, :text)")


class SqliteMessageText(MessageCandidates):
    """The message text index of SQLite (``MessageTextIndex``)."""

    def index_messages(self, db: Session, rows: Iterable[tuple[int, str]]) -> None:
        params = [{"id": row_id, "text": indexed_form(body)} for row_id, body in rows if body]
        if params:  # an archive's messages at once: one statement, on the connection
            db.connection().execute(_INDEX_MESSAGE, params)

    def unindex_session(self, db: Session, session_pk: int) -> None:
        db.execute(
            text(
                f"DELETE FROM {MESSAGE_FTS} WHERE rowid IN (SELECT id FROM messages WHERE session_pk = :s)"
            ),
            {"s": session_pk},
        )
        db.execute(
            text(
                f"DELETE FROM {ARCHIVE_FTS} WHERE rowid IN (SELECT id FROM archives WHERE session_pk = :s)"
            ),
            {"s": session_pk},
        )

    def index_archive_overview(self, db: Session, archive_pk: int, text_value: str) -> None:
        db.execute(text(f"DELETE FROM {ARCHIVE_FTS} WHERE rowid = :id"), {"id": archive_pk})
        if text_value:
            db.execute(
                text(f"INSERT INTO {ARCHIVE_FTS}(rowid, text) VALUES (:id, :text)"),
                {"id": archive_pk, "text": text_value},
            )

    def match_messages(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        # The full-text lookup runs first, as a subquery: joined directly, SQLite walks the session's
        # rows and evaluates MATCH once per row.
        archive_filter = archived(archive_pk)
        params: dict[str, object] = {
            "q": fts_query(terms, any_term=ranked),
            "s": session_pk,
            "a": archive_pk,
        }
        if ranked:
            sql = (
                f"SELECT f.rowid, bm25({MESSAGE_FTS}) AS rank FROM {MESSAGE_FTS} f "
                "CROSS JOIN messages m ON m.id = f.rowid "
                f"WHERE {MESSAGE_FTS} MATCH :q AND m.session_pk = :s {archive_filter} ORDER BY rank"
            )
        else:
            counts = {"q": params["q"], "mark": MARK_QUERY}
            matches, marked = db.execute(text(COUNT_FEW_MATCHES), counts).one()
            sql = matching_in_order(
                terms,
                params,
                archive_filter,
                by_id=matches < FEW_MATCHES,
                marked_by_id=marked < FEW_MATCHES,
            )
        for row_id, raw_score, *_ in session_rows(db, sql, params):
            yield TextHit(row_id, None if raw_score is None else -float(raw_score))

    def short_term_message_ids(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None
    ) -> list[int] | None:
        expression = short_terms_expression(db, terms)
        if expression is None:
            return None
        archive_filter = archived(archive_pk)
        params: dict[str, object] = {"q": expression, "s": session_pk, "a": archive_pk}
        sql = matching_in_order(terms, params, archive_filter)
        return [int(row_id) for row_id, *_ in session_all_rows(db, sql, params)]

    def match_overviews(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        archive_filter = "AND a.id = :a" if archive_pk is not None else ""
        params = {"q": fts_query(terms, any_term=ranked), "s": session_pk, "a": archive_pk}
        sql = (
            f"SELECT f.rowid, bm25({ARCHIVE_FTS}) AS rank FROM {ARCHIVE_FTS} f "
            "CROSS JOIN archives a ON a.id = f.rowid "
            f"WHERE {ARCHIVE_FTS} MATCH :q AND a.session_pk = :s {archive_filter} ORDER BY rank"
        )
        for row_id, raw_score in session_rows(db, sql, params):
            yield TextHit(row_id, -float(raw_score) if ranked else None)

    def min_indexed_term_chars(self) -> int:
        return 3

    def scan_message_ids(
        self,
        db: Session,
        session_pk: int,
        terms: list[str],
        archive_pk: int | None,
        case_sensitive: bool,
    ) -> list[int]:
        # instr() in C over the session's rows: no Python object per row. Without case sensitivity
        # lower() folds ASCII only, so callers still verify each hit (and nothing is lost: a miss
        # here is a miss there too for ASCII; non-ASCII terms are compared as given).
        column = "m.search_text" if case_sensitive else "lower(m.search_text)"
        conditions = " AND ".join(f"instr({column}, :t{i}) > 0" for i in range(len(terms)))
        archive_filter = archived(archive_pk)
        params: dict[str, object] = {"s": session_pk, "a": archive_pk}
        for i, term in enumerate(terms):
            params[f"t{i}"] = term if case_sensitive else term.lower()
        sql = f"SELECT m.id FROM messages m WHERE m.session_pk = :s {archive_filter} AND {conditions} ORDER BY m.seq"
        return [row_id for (row_id,) in session_all_rows(db, sql, params)]

    def _candidate_sources(
        self,
        db: Session,
        session_pk: int,
        literals: list[str],
        dates: list[str],
        archive_pk: int | None,
        window: TimeRange,
    ) -> Iterator[tuple[str, dict[str, object]]]:
        """One id query per literal, in the caller's order, then one for the dates. The index answers
        literals of three characters or more, and those of two through its vocabulary (as keyword
        search does: app/db/sqlite/short_terms.py); a shorter one, or a pair with case
        outside ASCII, scans this session's rows (instr() in C). As for longer literals, the index
        holds a long message's first 32 KB (``MAX_INDEXED_CHARS``)."""
        base = scope_params(session_pk, archive_pk, window)
        joined, where = candidate_scope(archive_pk, window)
        head = f"SELECT m.id FROM messages m {joined}WHERE {where}"
        # The index read newest first, each message looked up by id, so that the taking stops
        # at the budget rather than gathering and sorting a common word's every match
        # (bench/RESULTS.md). Ordered by the index's rowid (``id``), which FTS5 returns in order.
        matching = (
            f"SELECT f.rowid AS id FROM {MESSAGE_FTS} f CROSS JOIN messages m ON m.id = f.rowid "
            f"{joined}WHERE {MESSAGE_FTS} MATCH :q AND {where}"
        )
        for literal in literals:
            if len(literal) >= self.min_indexed_term_chars():
                yield matching, {**base, "q": fts_phrase(literal)}
            elif (short := short_terms_expression(db, [literal])) is not None:
                # A Chinese character pair: the index's trigrams that start with it, not a scan
                # of the session.
                yield matching, {**base, "q": short}
            else:
                yield head + "AND instr(lower(m.search_text), :t) > 0", {**base, "t": literal}
        if dates:
            yield dated_source(head, base, dates, "instr")

    def _rows(self, db: Session, sql: str, params: dict[str, object]) -> Iterable[tuple[Any, ...]]:
        # On the driver's connection: SQLAlchemy's execution of a text() costs more than SQLite's
        # own work for these (driver_query.py).
        return session_all_rows(db, sql, params)

    def _candidate_rows(self, db: Session, ids: list[int]) -> list[CandidateRow]:
        # The ids as one JSON parameter: a ranked query's few hundred candidates bound one by one
        # cost more to bind than to read. No body: a hit's time comes from its search facts, or
        # is read for the few hits without them (parsing every candidate's body was a third of
        # the read).
        sql = CANDIDATE_SELECT + "m.id IN (SELECT value FROM json_each(?))"
        return [candidate_row(r) for r in session_all_rows(db, sql, (json.dumps(ids),))]
