"""Verification of a copy: per table, rows counted and checksummed in key order on both sides
(app/dbcopy/canonical.py), the vector tables as (id, partition, time, float32 bytes), and the
rebuilt text indexes by their number of rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Table
from sqlalchemy.orm import Session

from app.db.transfer import TEXT_INDEXES, count_index_rows, durable_tables, stream_rows
from app.db.transfer_vectors import VECTOR_TABLES, VectorTable, stream_vectors
from app.db.uow import UnitOfWork
from app.dbcopy.canonical import Checksum
from app.dbcopy.endpoints import Endpoints


@dataclass(frozen=True, slots=True)
class TableCheck:
    table: str
    source_rows: int
    target_rows: int
    source_sum: str | None  # None: compared by count only (a rebuilt index)
    target_sum: str | None

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows and self.source_sum == self.target_sum


Reader = Callable[[Session], Iterable[Iterable[Any]]]


def verify_copy(endpoints: Endpoints) -> list[TableCheck]:
    """Compare every durable table, vector table and text index of the source and the target."""
    checks = []
    for table in durable_tables():
        checks.append(_compare(endpoints, table.name, partial(_values, table=table)))
    for vectors in VECTOR_TABLES:
        checks.append(_compare(endpoints, vectors.name, partial(_vectors, table=vectors)))
    for index in TEXT_INDEXES:
        with endpoints.source.read() as source, endpoints.target.read() as target:
            mine, theirs = count_index_rows(source, index), count_index_rows(target, index)
        checks.append(TableCheck(index, mine, theirs, None, None))
    return checks


def _compare(endpoints: Endpoints, name: str, read: Reader) -> TableCheck:
    mine, theirs = _checksum(endpoints.source, read), _checksum(endpoints.target, read)
    return TableCheck(name, mine.rows, theirs.rows, mine.digest, theirs.digest)


def _checksum(uow: UnitOfWork, read: Reader) -> Checksum:
    checksum = Checksum()
    with uow.read() as db:
        for values in read(db):
            checksum.add(values)
    return checksum


def _values(db: Session, table: Table) -> Iterable[Iterable[Any]]:
    return (row.values() for row in stream_rows(db, table))


def _vectors(db: Session, table: VectorTable) -> Iterable[Iterable[Any]]:
    return ((v.row_id, v.partition, v.tag, v.vector) for v in stream_vectors(db, table))
