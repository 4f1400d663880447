"""``context-engine copy``: every durable table of a SQLite database into PostgreSQL, resumable.

Tables go in foreign-key order, each in batches by primary key with the ids kept, every batch one
committed transaction on the target together with its derived indexes (app/dbcopy/indexes.py).
The source is read in one snapshot, so the copy is consistent even while the service runs (but
writes made after it began are not copied: stop the service for a copy that verifies).

Resuming: a table continues after the largest key the target holds. Before that, the target's
rows up to that key must be the source's: as many, and the last batch of them equal row for row;
anything else means the target holds other data, and the copy stops rather than merge it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Table
from sqlalchemy.orm import Session

from app.db.transfer import (
    Key,
    count_rows,
    durable_tables,
    insert_rows,
    key_of,
    last_key,
    last_rows,
    read_batch,
    reset_sequences,
)
from app.db.transfer_vectors import build_vector_indexes, drop_vector_indexes
from app.db.uow import UnitOfWork
from app.dbcopy.canonical import row_line
from app.dbcopy.endpoints import CopyError, Endpoints
from app.dbcopy.indexes import fill_indexes

DEFAULT_BATCH = 1000


class Progress(Protocol):
    def advance(self, count: int) -> None: ...

    def close(self, note: str = "") -> None: ...


# (table name, rows in the source) -> that table's progress display
ProgressFactory = Callable[[str, int], Progress]
# Called after each committed batch with the table's name (tests interrupt the copy here).
BatchHook = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class TableCopy:
    table: str
    rows: int  # in the source
    already: int  # found on the target when the copy began (a resumed copy)
    copied: int  # by this run


def copy_database(
    endpoints: Endpoints,
    progress: ProgressFactory,
    batch: int = DEFAULT_BATCH,
    on_batch: BatchHook | None = None,
) -> list[TableCopy]:
    """Copy what the target lacks, table by table, then move the target's id sequences on."""
    results: list[TableCopy] = []
    with endpoints.target.write() as db:
        drop_vector_indexes(db)
    try:
        with endpoints.source.read() as source:  # one snapshot: references hold across tables
            for table in durable_tables():
                results.append(
                    _copy_table(source, endpoints.target, table, progress, batch, on_batch)
                )
    finally:  # an interrupted copy leaves a complete schema too
        with endpoints.target.write() as db:
            build_vector_indexes(db)
    with endpoints.target.write() as db:
        reset_sequences(db)
    return results


def _copy_table(
    source: Session,
    target: UnitOfWork,
    table: Table,
    progress: ProgressFactory,
    batch: int,
    on_batch: BatchHook | None,
) -> TableCopy:
    total = count_rows(source, table)
    with target.read() as db:
        start, already = last_key(db, table), count_rows(db, table)
    if start is not None:
        _check_resumable(source, target, table, start, already, batch)
    bar = progress(table.name, total)
    bar.advance(already)
    after, copied = start, 0
    while rows := read_batch(source, table, after, batch):
        with target.write() as db:
            insert_rows(db, table, rows)
            fill_indexes(table.name, source, db, target.storage, rows)
        after, copied = key_of(table, rows[-1]), copied + len(rows)
        bar.advance(len(rows))
        if on_batch is not None:
            on_batch(table.name)
    bar.close("resumed" if already else "")
    return TableCopy(table.name, total, already, copied)


def _check_resumable(
    source: Session, target: UnitOfWork, table: Table, start: Key, already: int, batch: int
) -> None:
    """Refuse a target whose rows up to ``start`` are not the source's."""
    held = count_rows(source, table, upto=start)
    ours = [row_line(r.values()) for r in last_rows(source, table, start, batch)]
    with target.read() as db:
        theirs = [row_line(r.values()) for r in last_rows(db, table, start, batch)]
    if held != already or ours != theirs:
        key = start[0] if len(start) == 1 else start
        raise CopyError(
            f"the target's table {table.name} holds rows (keys up to {key}) that differ from the "
            f"source's ({already} there, {held} here): copy into an empty database, or drop it"
        )
