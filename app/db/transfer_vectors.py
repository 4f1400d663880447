"""Vector rows for ``context-engine copy``: read from sqlite-vec's ``vec0`` tables or pgvector's
tables as (row id, partition, tag, float32 bytes), the same shape on both sides.

A vector is compared as its float32 little-endian bytes: sqlite-vec stores exactly that, and
pgvector's ``real[]`` cast gives the same float32 values (a vector written from those values
through the storage seams, as the copy does, round-trips bit for bit).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.sqlite.vector_cache import LOOKUPS_PER_STATEMENT
from app.db.transfer import STREAM_ROWS


@dataclass(frozen=True, slots=True)
class VectorTable:
    """A vector table: its columns (the same names on both databases) and the row it belongs to."""

    name: str
    id_column: str
    partition_column: str
    tag_column: str | None  # the message's time, a vec0 metadata column / a plain column
    parent: str


VECTOR_TABLES = (
    VectorTable("memory_vec", "chunk_id", "owner", None, "memory_chunks"),
    VectorTable("message_vec", "message_id", "session_pk", "said_at_ms", "messages"),
    # Copied with the search facts, which say how many passages a message has.
    VectorTable("message_passage_vec", "passage_id", "session_pk", "said_at_ms", "message_search"),
)


def drop_vector_indexes(db: Session) -> None:
    """Drop the target's HNSW indexes before a bulk load: keeping them up to date row by row is
    most of a copy's time, and one build over the loaded rows costs much less (bench/RESULTS.md, Measurements behind the code)."""
    for table in VECTOR_TABLES:
        db.execute(text(f"DROP INDEX IF EXISTS {_hnsw_index(table.name)}"))


def build_vector_indexes(db: Session) -> None:
    """Build the HNSW indexes a copy dropped (or an interrupted copy left out); the definition is
    the migrations' (migrations/helpers.py), which tests/db/test_postgres_copy.py checks."""
    for table in VECTOR_TABLES:
        db.execute(
            text(
                f"CREATE INDEX IF NOT EXISTS {_hnsw_index(table.name)} ON {table.name} "
                "USING hnsw (embedding vector_cosine_ops)"
            )
        )


def _hnsw_index(table: str) -> str:
    return f"ix_{table}_hnsw"


@dataclass(frozen=True, slots=True)
class VectorRow:
    row_id: int
    partition: str | int
    tag: int
    vector: bytes  # float32, little-endian

    def floats(self) -> list[float]:
        return [float(x) for x in np.frombuffer(self.vector, dtype="<f4")]


def _select(db: Session, table: VectorTable) -> str:
    tag = table.tag_column or "0"
    embedding = (
        "CAST(embedding AS real[])" if db.get_bind().dialect.name == "postgresql" else "embedding"
    )
    return (
        f"SELECT {table.id_column}, {table.partition_column}, {tag}, {embedding} FROM {table.name}"
    )


def _row(row_id: int, partition: str | int, tag: int | None, embedding: object) -> VectorRow:
    if isinstance(embedding, bytes | memoryview):
        vector = bytes(embedding)
    else:  # a real[] from PostgreSQL
        vector = np.asarray(embedding, dtype="<f4").tobytes()
    return VectorRow(int(row_id), partition, int(tag or 0), vector)


def vectors_of(db: Session, table: VectorTable, row_ids: Sequence[int]) -> list[VectorRow]:
    """The vectors of these rows (those that have one), by primary-key lookups: one ``id = :i``
    term per row in a ``UNION ALL`` (sqlite-vec answers an ``IN`` list with a scan of the table,
    which made a copy's cost grow with the square of its rows)."""
    found: list[VectorRow] = []
    for start in range(0, len(row_ids), LOOKUPS_PER_STATEMENT):
        chunk = {
            f"i{n}": row_id
            for n, row_id in enumerate(row_ids[start : start + LOOKUPS_PER_STATEMENT])
        }
        sql = " UNION ALL ".join(
            f"{_select(db, table)} WHERE {table.id_column} = :{name}" for name in chunk
        )
        found += [_row(*row) for row in db.execute(text(sql), chunk)]
    return found


def stream_vectors(db: Session, table: VectorTable) -> Iterator[VectorRow]:
    """Every vector of the table in row-id order."""
    sql = f"{_select(db, table)} ORDER BY {table.id_column}"
    options = {"stream_results": True, "max_row_buffer": STREAM_ROWS}
    for row in db.execute(text(sql), execution_options=options):
        yield _row(*row)


def count_vectors(db: Session, table: VectorTable) -> int:
    return int(db.execute(text(f"SELECT count(*) FROM {table.name}")).scalar_one())
