"""PostgreSQL: the vectors of archived messages and of their passages (app/search/text/passages.py):
pgvector tables searched per session (app/db/postgres/knn.py); a passage's row holds its message's
id (deleted with it), its session and time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.knn import session_knn
from app.db.postgres.literals import vector_literal
from app.db.shared.passage_ids import best_passages, passage_id
from app.db.shared.rows import TextHit, TimeRange

MESSAGE_VEC = "message_vec"
PASSAGE_VEC = "message_passage_vec"


class PostgresMessageVectors:
    """The message vector index of PostgreSQL (``MessageVectorIndex``)."""

    def store_message_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, list[float]]]
    ) -> None:
        params = [
            {"id": message_id, "s": session_pk, "t": said_at_ms, "v": vector_literal(vector)}
            for message_id, session_pk, said_at_ms, vector in rows
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {MESSAGE_VEC}(message_id, session_pk, said_at_ms, embedding) "
                    "VALUES (:id, :s, :t, CAST(:v AS vector)) ON CONFLICT (message_id) DO UPDATE SET "
                    "session_pk = EXCLUDED.session_pk, said_at_ms = EXCLUDED.said_at_ms, embedding = EXCLUDED.embedding"
                ),
                params,
            )

    def nearest_messages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit]:
        hits = session_knn(db, MESSAGE_VEC, "message_id", session_pk, vector, k, window)
        return [TextHit(row_id, distance) for row_id, distance in hits]

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

    def remove_session_vectors(self, db: Session, session_pk: int) -> None:
        params = {"s": session_pk}
        db.execute(text(f"DELETE FROM {MESSAGE_VEC} WHERE session_pk = :s"), params)
        db.execute(text(f"DELETE FROM {PASSAGE_VEC} WHERE session_pk = :s"), params)
