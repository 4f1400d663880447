"""The passage vectors of archived messages on PostgreSQL (app/search/text/passages.py): a pgvector
table beside ``message_vec``, with the message's id (deleted with it), its session and time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.dialects.base import TextHit, TimeRange
from app.db.dialects.passage_ids import best_passages, passage_id
from app.db.dialects.postgres_memory import tune_vector_scan
from app.db.dialects.postgres_text import vector_literal

PASSAGE_VEC = "message_passage_vec"


class PostgresPassageIndex:
    """The passage methods of the PostgreSQL dialect."""

    def store_passage_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, int, list[float]]]
    ) -> None:
        params = [
            {
                "id": passage_id(message_id, index),
                "m": message_id,
                "s": session_pk,
                "t": said_at_ms,
                "v": vector_literal(vector),
            }
            for message_id, index, session_pk, said_at_ms, vector in rows
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {PASSAGE_VEC}(passage_id, message_id, session_pk, said_at_ms, "
                    "embedding) VALUES (:id, :m, :s, :t, CAST(:v AS vector)) "
                    "ON CONFLICT (passage_id) DO UPDATE SET embedding = EXCLUDED.embedding, "
                    "session_pk = EXCLUDED.session_pk, said_at_ms = EXCLUDED.said_at_ms"
                ),
                params,
            )

    def remove_passage_vectors(self, db: Session, rows: Iterable[tuple[int, int, int]]) -> None:
        ids = [message_id for message_id, _, count in rows if count]
        if ids:
            db.execute(
                text(f"DELETE FROM {PASSAGE_VEC} WHERE message_id = ANY(:ids)"), {"ids": ids}
            )

    def nearest_passages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit]:
        return best_passages(
            session_knn(db, PASSAGE_VEC, "passage_id", session_pk, vector, k, window)
        )

    def passage_similarities(
        self, db: Session, counts: Mapping[int, int], vector: list[float]
    ) -> dict[int, float]:
        ids = [message_id for message_id, count in counts.items() if count]
        if not ids:
            return {}
        sql = (
            f"SELECT message_id, 1 - min(embedding <=> CAST(:v AS vector)) FROM {PASSAGE_VEC} "
            "WHERE message_id = ANY(:ids) GROUP BY message_id"
        )
        rows = db.execute(text(sql), {"v": vector_literal(vector), "ids": ids})
        return {int(m): float(similarity) for m, similarity in rows}

    def unindex_session_passages(self, db: Session, session_pk: int) -> None:
        db.execute(text(f"DELETE FROM {PASSAGE_VEC} WHERE session_pk = :s"), {"s": session_pk})


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
