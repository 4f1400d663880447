"""SQLite: FTS5 with the trigram tokenizer.

Trigrams make every substring of three or more characters searchable, in any script: Chinese
needs no segmenter (``部署失败`` finds ``昨天部署失败了``) and keyword search keeps its literal,
substring meaning. The tables are contentless (the text lives in ``messages``/``archives``) with
contentless-delete, so rows can be removed by id alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.dialects.base import Dialect, TextHit

MESSAGE_FTS = "message_fts"
ARCHIVE_FTS = "archive_fts"


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: the term, literally (quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


def fts_query(terms: list[str], *, any_term: bool) -> str:
    return (" OR " if any_term else " AND ").join(fts_phrase(t) for t in terms)


class SqliteDialect(Dialect):
    name = "sqlite"

    def index_messages(self, db: Session, rows: Iterable[tuple[int, str]]) -> None:
        params = [{"id": row_id, "text": body} for row_id, body in rows if body]
        if params:
            db.execute(text(f"INSERT INTO {MESSAGE_FTS}(rowid, text) VALUES (:id, :text)"), params)

    def unindex_session(self, db: Session, session_pk: int) -> None:
        db.execute(
            text(f"DELETE FROM {MESSAGE_FTS} WHERE rowid IN (SELECT id FROM messages WHERE session_pk = :s)"),
            {"s": session_pk},
        )
        db.execute(
            text(f"DELETE FROM {ARCHIVE_FTS} WHERE rowid IN (SELECT id FROM archives WHERE session_pk = :s)"),
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
        order = f"bm25({MESSAGE_FTS})" if ranked else "m.seq"
        score = f"bm25({MESSAGE_FTS})" if ranked else "NULL"
        archive_filter = "AND m.archive_pk = :a" if archive_pk is not None else "AND m.archive_pk IS NOT NULL"
        sql = (
            f"SELECT m.id, {score} FROM {MESSAGE_FTS} JOIN messages m ON m.id = {MESSAGE_FTS}.rowid "
            f"WHERE {MESSAGE_FTS} MATCH :q AND m.session_pk = :s {archive_filter} ORDER BY {order}"
        )
        params = {"q": fts_query(terms, any_term=ranked), "s": session_pk, "a": archive_pk}
        for row_id, raw_score in db.execute(text(sql), params):
            yield TextHit(row_id, None if raw_score is None else -float(raw_score))

    def match_overviews(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        order = f"bm25({ARCHIVE_FTS})" if ranked else "a.archive_index"
        score = f"bm25({ARCHIVE_FTS})" if ranked else "NULL"
        archive_filter = "AND a.id = :a" if archive_pk is not None else ""
        sql = (
            f"SELECT a.id, {score} FROM {ARCHIVE_FTS} JOIN archives a ON a.id = {ARCHIVE_FTS}.rowid "
            f"WHERE {ARCHIVE_FTS} MATCH :q AND a.session_pk = :s {archive_filter} ORDER BY {order}"
        )
        params = {"q": fts_query(terms, any_term=ranked), "s": session_pk, "a": archive_pk}
        for row_id, raw_score in db.execute(text(sql), params):
            yield TextHit(row_id, None if raw_score is None else -float(raw_score))

    def min_indexed_term_chars(self) -> int:
        return 3
