"""PostgreSQL: the vectors of memory chunks, a pgvector table searched per owner (app/db/postgres/knn.py)."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.knn import tune_vector_scan
from app.db.postgres.literals import vector_literal
from app.db.shared.rows import TextHit

MEMORY_VEC = "memory_vec"


class PostgresMemoryVectors:
    """The memory vector index of PostgreSQL (``MemoryVectorIndex``)."""

    def store_chunk_vectors(
        self, db: Session, rows: Iterable[tuple[int, str, list[float]]]
    ) -> None:
        params = [
            {"id": chunk_id, "owner": owner, "v": vector_literal(vector)}
            for chunk_id, owner, vector in rows
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MEMORY_VEC}(chunk_id, owner, embedding) VALUES (:id, :owner, CAST(:v AS vector)) "
                    "ON CONFLICT (chunk_id) DO UPDATE SET owner = EXCLUDED.owner, embedding = EXCLUDED.embedding"
                ),
                params,
            )

    def nearest_memory_chunks(
        self, db: Session, owner: str, vector: list[float], k: int
    ) -> list[TextHit]:
        tune_vector_scan(db, k)
        sql = (
            f"SELECT chunk_id, embedding <=> CAST(:v AS vector) AS distance FROM {MEMORY_VEC} "
            "WHERE owner = :owner ORDER BY distance LIMIT :k"
        )
        params = {"v": vector_literal(vector), "owner": owner, "k": k}
        return [TextHit(int(r), float(d)) for r, d in db.execute(text(sql), params)]

    def remove_chunk_vectors(self, db: Session, chunk_ids: list[int]) -> None:
        if chunk_ids:
            db.execute(
                text(f"DELETE FROM {MEMORY_VEC} WHERE chunk_id = ANY(:ids)"),
                {"ids": list(chunk_ids)},
            )
