"""Table-level reads and writes of ``context-engine copy`` (app/dbcopy): every durable table of
the ORM metadata, read and written in primary-key order, with the ids kept.

The tables are those of ``Base.metadata`` in foreign-key order, so a table added with a model (and
its migration) is copied without a change here. The derived indexes (FTS5 / trigram / tsvector
tables, vector tables, the memory word index's postings and counters) and SQLite's bookkeeping
(``vector_changes``) are not ORM tables: the target's storage seams fill the first, the second has
no PostgreSQL form.

Text keys are ordered bytewise on both sides (SQLite's BINARY collation, ``COLLATE "C"`` on
PostgreSQL), so "after key K" and "in key order" mean the same rows in the same order on both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Integer, String, Table, and_, func, or_, select, text
from sqlalchemy.orm import Session

from app.db import models  # noqa: F401  (registers every table on the metadata)
from app.db.base import Base

Key = tuple[Any, ...]
Row = dict[str, Any]
STREAM_ROWS = 1000


def durable_tables() -> list[Table]:
    """Every table of durable data, parents before children."""
    return list(Base.metadata.sorted_tables)


def key_of(table: Table, row: Row) -> Key:
    return tuple(row[c.name] for c in table.primary_key.columns)


def _ordered(db: Session, table: Table) -> list[ColumnElement[Any]]:
    columns: list[ColumnElement[Any]] = list(table.primary_key.columns)
    if db.get_bind().dialect.name == "postgresql":
        return [c.collate("C") if isinstance(c.type, String) else c for c in columns]
    return columns


def _after(db: Session, table: Table, key: Key) -> ColumnElement[bool]:
    """Rows whose key sorts after ``key`` (spelled out: a row comparison would lose the collation)."""
    columns = _ordered(db, table)
    branches = [
        and_(*(columns[j] == key[j] for j in range(i)), columns[i] > key[i])
        for i in range(len(columns))
    ]
    return or_(*branches)


def read_batch(db: Session, table: Table, after: Key | None, limit: int) -> list[Row]:
    """Up to ``limit`` rows following ``after`` (from the first when None), in key order."""
    query = select(table).order_by(*_ordered(db, table)).limit(limit)
    if after is not None:
        query = query.where(_after(db, table, after))
    return [dict(row._mapping) for row in db.execute(query)]


def last_rows(db: Session, table: Table, upto: Key, limit: int) -> list[Row]:
    """The last ``limit`` rows whose key is ``upto`` or before it, in key order."""
    order = _ordered(db, table)
    query = (
        select(table)
        .where(~_after(db, table, upto))
        .order_by(*(c.desc() for c in order))
        .limit(limit)
    )
    return [dict(row._mapping) for row in db.execute(query)][::-1]


def last_key(db: Session, table: Table) -> Key | None:
    """The largest key the table holds, or None when it is empty."""
    order = _ordered(db, table)
    query = select(*table.primary_key.columns).order_by(*(c.desc() for c in order)).limit(1)
    row = db.execute(query).first()
    return None if row is None else tuple(row)


def count_rows(db: Session, table: Table, upto: Key | None = None) -> int:
    """Rows of the table (those up to ``upto`` included, when given)."""
    query = select(func.count()).select_from(table)
    if upto is not None:
        query = query.where(~_after(db, table, upto))
    return int(db.execute(query).scalar_one())


def rows_by_key(db: Session, table: Table, keys: Sequence[Any]) -> dict[Any, Row]:
    """Rows of a single-column-key table by key."""
    column = next(iter(table.primary_key.columns))
    found: dict[Any, Row] = {}
    for start in range(0, len(keys), 500):
        query = select(table).where(column.in_(list(keys[start : start + 500])))
        found.update((row._mapping[column.name], dict(row._mapping)) for row in db.execute(query))
    return found


def insert_rows(db: Session, table: Table, rows: list[Row]) -> None:
    if rows:
        db.execute(table.insert(), rows)


def stream_rows(db: Session, table: Table) -> Iterator[Row]:
    """Every row in key order, fetched a thousand at a time (a server-side cursor on PostgreSQL)."""
    query = select(table).order_by(*_ordered(db, table))
    options = {"stream_results": True, "max_row_buffer": STREAM_ROWS}
    for row in db.execute(query, execution_options=options):
        yield dict(row._mapping)


def reset_sequences(db: Session) -> None:
    """Move each id sequence past the largest copied id (PostgreSQL), so the next insert of the
    service gets a fresh id: rows copied with their ids leave the sequences where they were."""
    for table in durable_tables():
        columns = list(table.primary_key.columns)
        if len(columns) != 1 or not isinstance(columns[0].type, Integer):
            continue
        name = columns[0].name
        sequence = db.execute(
            text("SELECT pg_get_serial_sequence(:t, :c)"), {"t": table.name, "c": name}
        ).scalar_one()
        if sequence is None:
            continue  # a key the service assigns itself
        db.execute(
            text(
                f"SELECT setval(CAST(:s AS regclass), coalesce(max({name}), 1), max({name}) IS NOT NULL) "
                f"FROM {table.name}"
            ),
            {"s": sequence},
        )


# The derived text indexes, counted by verification: their rows are rebuilt, not copied, so only
# their number is compared (one row per indexed message, archive overview or memory chunk).
TEXT_INDEXES = ("message_fts", "archive_fts", "memory_fts")


def count_index_rows(db: Session, name: str) -> int:
    return int(db.execute(text(f"SELECT count(*) FROM {name}")).scalar_one())
