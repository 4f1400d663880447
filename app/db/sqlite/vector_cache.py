"""Nearest-vector search over one partition from an in-process matrix kept in step with SQLite.

sqlite-vec's ``vec0`` KNN reads every vector of the partition through the virtual-table interface.
The same exact search as one BLAS matrix-vector product over a float32 matrix held in memory is
much cheaper (bench/RESULTS.md, "Measurements behind the code"). The
database stays the source of truth: every vector write appends (space, partition, row id) to the
``vector_changes`` log in the same transaction, and each search first applies the log entries
after the last change its matrix has seen, inside the caller's read snapshot. Writes made by any
process are therefore seen by the next search of every process, and a search never returns a row
its snapshot does not hold.

Matrices are evicted least recently used beyond a byte budget; a partition larger than the
whole budget is searched with ``vec0`` itself (the result is the same, only slower).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.core.vector_matrix import Neighbour, VectorMatrix

CHANGE_LOG = "vector_changes"
# Below SQLite's limit of 500 terms in a compound SELECT.
LOOKUPS_PER_STATEMENT = 250
DEFAULT_BUDGET_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class VectorSpace:
    """A vec0 table searched by partition: its name in the change log and its columns."""

    name: str
    table: str
    id_column: str
    partition_column: str
    tag_column: str | None  # an integer metadata column to filter on (a message's time)
    integer_partitions: bool = False  # the partition key is an integer column (a session's key)
    dimensions: int = 384
    # The share of the budget one partition of this space may take (a larger one is not held).
    budget_share: float = 1.0

    def select_rows(self, where: str) -> str:
        tag = self.tag_column or "0"
        return f"SELECT {self.id_column}, embedding, {tag} FROM {self.table} WHERE {where}"


def log_changes(db: Session, space: VectorSpace, rows: list[tuple[str, int]]) -> None:
    """Record that these (partition, row id) vectors were written or removed."""
    if rows:
        db.execute(
            text(f"INSERT INTO {CHANGE_LOG}(space, part, row_id) VALUES (:s, :p, :r)"),
            [{"s": space.name, "p": part, "r": row_id} for part, row_id in rows],
        )


def log_reset(db: Session, space: VectorSpace, partition: str) -> None:
    """Record that a whole partition was dropped (a matrix of it reloads from scratch)."""
    db.execute(
        text(f"INSERT INTO {CHANGE_LOG}(space, part, row_id) VALUES (:s, :p, NULL)"),
        {"s": space.name, "p": partition},
    )


class _Entry:
    def __init__(self, dimensions: int) -> None:
        self.matrix = VectorMatrix(dimensions)
        self.lock = threading.Lock()
        self.loaded = False
        self.too_large = False  # over the whole budget: searched with vec0 until a reset


class VectorCache:
    """The matrices of the partitions searched lately, within a byte budget."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def nearest(
        self,
        db: Session,
        space: VectorSpace,
        partition: str,
        query: list[float],
        k: int,
        tag_range: tuple[int | None, int | None] = (None, None),
    ) -> list[Neighbour] | None:
        """The k nearest rows of the partition, or None when it is too large to hold."""
        entry = self._entry(space, partition)
        with entry.lock:
            if not _refresh(db, space, partition, entry, self.budget_bytes):
                return None
            found = entry.matrix.nearest(query, k, tag_range)
        self._evict_beyond_budget(keep=partition)
        return found

    def _entry(self, space: VectorSpace, partition: str) -> _Entry:
        key = (space.name, partition)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry(space.dimensions)
            self._entries.move_to_end(key)
            return entry

    def _evict_beyond_budget(self, keep: str) -> None:
        """Drop the least recently searched matrices beyond the budget, never one of the partition
        just searched: a session's message and passage matrices are searched together, and each
        evicting the other would reload both on every search."""
        with self._lock:
            total = sum(e.matrix.nbytes for e in self._entries.values())
            for key in list(self._entries):
                if total <= self.budget_bytes:
                    break
                if key[1] != keep:
                    total -= self._entries.pop(key).matrix.nbytes


def _refresh(
    db: Session, space: VectorSpace, partition: str, entry: _Entry, budget_bytes: int
) -> bool:
    """Bring the matrix up to the caller's snapshot; False when the partition is over budget."""
    if not entry.loaded and not entry.too_large:
        # Loaded whole from the snapshot: the partition's change log (a row per vector written)
        # says nothing a load does not, and reading it all was half of a first search's time.
        return _load(db, space, partition, entry, budget_bytes)
    params = {"s": space.name, "p": partition, "after": entry.matrix.last_change}
    changed = db.execute(
        text(
            f"SELECT change, row_id FROM {CHANGE_LOG} "
            "WHERE space = :s AND part = :p AND change > :after ORDER BY change"
        ),
        params,
    ).all()
    reset = any(row_id is None for _, row_id in changed)
    if entry.too_large and not reset:
        if changed:
            entry.matrix.last_change = int(changed[-1][0])
        return False
    if not entry.loaded or reset:
        return _load(db, space, partition, entry, budget_bytes)
    if changed:
        latest: dict[int, int] = {int(row_id): int(change) for change, row_id in changed}
        vectors = rows_by_id(db, space, list(latest))
        entry.matrix.apply(
            (row_id, *vectors.get(row_id, (None, 0)), change) for row_id, change in latest.items()
        )
    return True


def _load(
    db: Session, space: VectorSpace, partition: str, entry: _Entry, budget_bytes: int
) -> bool:
    last = db.execute(
        text(f"SELECT max(change) FROM {CHANGE_LOG} WHERE space = :s AND part = :p"),
        {"s": space.name, "p": partition},
    ).scalar_one()
    key = int(partition) if space.integer_partitions else partition
    chunks = db.execute(
        text(
            f"SELECT chunk_id, size, validity, rowids FROM {space.table}_chunks "
            "WHERE partition00 = :p ORDER BY chunk_id"
        ),
        {"p": key},
    ).all()
    stored = sum(int(np.unpackbits(np.frombuffer(c[2], np.uint8)).sum()) for c in chunks)
    entry.too_large = stored * (space.dimensions * 4 + 16) > budget_bytes * space.budget_share
    entry.matrix = VectorMatrix(space.dimensions)
    entry.matrix.last_change = int(last or 0)
    if entry.too_large:
        return False
    entry.matrix.reserve(stored)
    for chunk_id, size, validity, rowids in chunks:
        entry.matrix.extend(*_chunk_rows(db, space, int(chunk_id), int(size), validity, rowids))
    entry.loaded = True
    return True


def _chunk_rows(
    db: Session, space: VectorSpace, chunk_id: int, size: int, validity: bytes, rowids: bytes
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The live rows of one vec0 chunk (ids, vectors, tags), read from its storage tables in a few large blobs.

    Reading them through the virtual table costs a call per row; the chunk
    layout (a validity bitmap, an int64 id array, a float32 vector array and an int64 array per
    integer metadata column, ``size`` slots each) is sqlite-vec's storage format for 0.1.x.
    """
    live = np.flatnonzero(np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little"))
    ids = np.frombuffer(rowids, np.int64)
    blob = db.execute(
        text(f"SELECT vectors FROM {space.table}_vector_chunks00 WHERE rowid = :c"), {"c": chunk_id}
    ).scalar_one()
    vectors = np.frombuffer(blob, np.float32).reshape(size, space.dimensions)
    tags = np.zeros(size, np.int64)
    if space.tag_column is not None:
        data = db.execute(
            text(f"SELECT data FROM {space.table}_metadatachunks00 WHERE rowid = :c"),
            {"c": chunk_id},
        ).scalar_one()
        tags = np.frombuffer(data, np.int64)
    return ids[live], vectors[live], tags[live]


def rows_by_id(db: Session, space: VectorSpace, row_ids: list[int]) -> dict[int, tuple[bytes, int]]:
    """(float32 vector bytes, tag) of these rows that exist, by id. One ``id = :i`` term per row
    in a ``UNION ALL``: vec0 answers a primary key by lookup, an ``IN`` list with a scan of the
    whole table (which grows with every vector the table holds)."""
    found: dict[int, tuple[bytes, int]] = {}
    for start in range(0, len(row_ids), LOOKUPS_PER_STATEMENT):
        chunk = row_ids[start : start + LOOKUPS_PER_STATEMENT]
        params = {f"i{i}": row_id for i, row_id in enumerate(chunk)}
        sql = " UNION ALL ".join(
            space.select_rows(f"{space.id_column} = :{name}") for name in params
        )
        for row_id, blob, tag in db.execute(text(sql), params):
            found[int(row_id)] = (bytes(blob), int(tag or 0))
    return found
