"""SQLite: the vectors of memory chunks, in a sqlite-vec ``vec0`` table partitioned by owner and
searched through the in-process matrices of app/db/sqlite/vector_cache.py."""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_vec
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.shared.rows import TextHit
from app.db.sqlite.vector_cache import VectorCache, VectorSpace, log_changes

MEMORY_VEC = "memory_vec"
MEMORY_SPACE = VectorSpace("memory", MEMORY_VEC, "chunk_id", "owner", None)


class SqliteMemoryVectors:
    """The memory vector index of SQLite (``MemoryVectorIndex``)."""

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache

    def store_chunk_vectors(
        self, db: Session, rows: Iterable[tuple[int, str, list[float]]]
    ) -> None:
        params = [
            {"id": chunk_id, "owner": owner, "v": sqlite_vec.serialize_float32(vector)}
            for chunk_id, owner, vector in rows
        ]
        if params:
            db.execute(
                text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = :id"),
                [{"id": p["id"]} for p in params],
            )
            db.execute(
                text(
                    f"INSERT INTO {MEMORY_VEC}(chunk_id, owner, embedding) VALUES (:id, :owner, :v)"
                ),
                params,
            )
            log_changes(db, MEMORY_SPACE, [(str(p["owner"]), int(p["id"])) for p in params])

    def nearest_memory_chunks(
        self, db: Session, owner: str, vector: list[float], k: int
    ) -> list[TextHit]:
        found = self.cache.nearest(db, MEMORY_SPACE, owner, vector, k)
        if found is not None:
            return [TextHit(n.row_id, n.distance) for n in found]
        sql = (
            f"SELECT chunk_id, distance FROM {MEMORY_VEC} "
            "WHERE embedding MATCH :v AND k = :k AND owner = :owner ORDER BY distance"
        )
        params = {"v": sqlite_vec.serialize_float32(vector), "k": k, "owner": owner}
        return [TextHit(int(r), float(d)) for r, d in db.execute(text(sql), params)]

    def remove_chunk_vectors(self, db: Session, chunk_ids: list[int]) -> None:
        if not chunk_ids:
            return
        params = [{"id": chunk_id} for chunk_id in chunk_ids]
        # By primary key, one statement a chunk: vec0 answers an IN list with a scan.
        owners = [
            (str(owner), int(chunk_id))
            for p in params
            for chunk_id, owner in db.execute(
                text(f"SELECT chunk_id, owner FROM {MEMORY_VEC} WHERE chunk_id = :id"), p
            )
        ]
        log_changes(db, MEMORY_SPACE, owners)
        db.execute(text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = :id"), params)
