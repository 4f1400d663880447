"""PostgreSQL: nearest-vector search with pgvector.

``memory_vec`` / ``message_vec`` / ``message_passage_vec`` hold pgvector ``vector(384)`` rows; a
KNN is ``ORDER BY embedding <=> query`` (cosine distance, as sqlite-vec's) inside one owner or
session. The planner takes the partition's b-tree and an exact sort when the partition is small
against the table, or the HNSW index with iterative scans (pgvector 0.8) when it is large.
Measured against exact search (tests/db/test_postgres_seams.py: 2,000 random unit 384-d vectors,
1,500 of them in the searched owner, 20 queries, k = 10, the HNSW path forced): recall@10 0.995
with ``hnsw.ef_search`` = 200, 0.96 with 100 (the planner's own choice on that table: exact, 1.0).
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.literals import vector_literal
from app.db.shared.rows import TimeRange

# HNSW candidate list: wide enough that the k nearest of a partition are found.
EF_SEARCH = 200


def tune_vector_scan(db: Session, k: int) -> None:
    """For this transaction: an HNSW scan keeps going until k rows pass the partition filter, in
    exact distance order, with a candidate list of at least ``EF_SEARCH``."""
    db.execute(
        text(
            "SELECT set_config('hnsw.iterative_scan', 'strict_order', true), "
            "set_config('hnsw.ef_search', :ef, true)"
        ),
        {"ef": str(min(1000, max(EF_SEARCH, k)))},
    )


def session_knn(
    db: Session,
    table: str,
    id_column: str,
    session_pk: int,
    vector: list[float],
    k: int,
    window: TimeRange,
) -> list[tuple[int, float]]:
    """(id, cosine distance) of the k rows of one session's vector table nearest to the vector,
    nearest first. The time filter is part of the KNN (iterative index scans keep going until k
    rows pass it), so a narrow window still gets its k nearest."""
    tune_vector_scan(db, k)
    since = " AND said_at_ms >= :since" if window[0] is not None else ""
    until = " AND said_at_ms <= :until" if window[1] is not None else ""
    sql = (
        f"SELECT {id_column}, embedding <=> CAST(:v AS vector) AS distance FROM {table} "
        f"WHERE session_pk = :s{since}{until} ORDER BY distance LIMIT :k"
    )
    params = {
        "v": vector_literal(vector),
        "k": k,
        "s": session_pk,
        "since": window[0],
        "until": window[1],
    }
    return [(int(r), float(d)) for r, d in db.execute(text(sql), params)]
