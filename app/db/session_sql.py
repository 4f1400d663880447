"""SQL text of a storage seam run on the connection of a session's transaction, for statements whose
text changes with the query (a full-text lookup, a list of ids as one JSON parameter): building
a SQLAlchemy ``text()`` and running it through Core cost more than SQLite's own work for them.
Driver errors come out as SQLAlchemy raises them (``driver_query.raised_as_sqlalchemy``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy.orm import Session

from app.db.driver_query import raised_as_sqlalchemy, session_connection


def session_rows(
    db: Session, sql: str, params: Mapping[str, Any] | Sequence[Any]
) -> Iterator[tuple[Any, ...]]:
    """Rows of SQL written for the driver of ``db`` (in its own parameter style) on the
    connection of the session's transaction, read as they are consumed. The cursor closes with
    the iterator."""
    with _session_cursor(db, sql, params) as cursor:
        yield from cast(Iterator[tuple[Any, ...]], cursor)


def session_all_rows(
    db: Session, sql: str, params: Mapping[str, Any] | Sequence[Any]
) -> list[tuple[Any, ...]]:
    """Every row of such a statement at once, for a caller that reads them all: a step of the
    iterator per row is a visible cost over a ranked search's candidate rows."""
    with _session_cursor(db, sql, params) as cursor:
        return cast(list[tuple[Any, ...]], cursor.fetchall())


@contextmanager
def _session_cursor(
    db: Session, sql: str, params: Mapping[str, Any] | Sequence[Any]
) -> Iterator[Any]:
    connection = session_connection(db)
    cursor = connection.connection.cursor()
    try:
        with raised_as_sqlalchemy(connection.dialect.loaded_dbapi.Error, sql, params):
            cursor.execute(sql, params)
            yield cursor
    finally:
        cursor.close()
