"""SQLite: the vectors of archived messages and of their passages (app/search/text/passages.py):
``vec0`` tables partitioned by session, with the message's time as a metadata column, searched
through the in-process matrices of app/db/sqlite/vector_cache.py.

A session holds several times as many passages as messages. When its passages do not fit the
matrices' budget, they are not searched through ``vec0`` (a scan of every passage of the
session): the search rescores the passages of its nearest messages instead
(``passage_similarities``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sqlite_vec
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.core.vector_matrix import best_cosines
from app.db.shared.passage_ids import best_passages, passage_id, passage_message
from app.db.shared.rows import TextHit, TimeRange
from app.db.sqlite.vector_cache import (
    VectorCache,
    VectorSpace,
    log_changes,
    log_reset,
    rows_by_id,
)

MESSAGE_VEC = "message_vec"
MESSAGE_SPACE = VectorSpace(
    "message", MESSAGE_VEC, "message_id", "session_pk", "said_at_ms", integer_partitions=True
)
PASSAGE_VEC = "message_passage_vec"
# A session's passages take at most half the matrices' budget, so that its message matrix and
# others fit beside them.
PASSAGE_SPACE = VectorSpace(
    "passage",
    PASSAGE_VEC,
    "passage_id",
    "session_pk",
    "said_at_ms",
    integer_partitions=True,
    budget_share=0.5,
)


class SqliteMessageVectors:
    """The message vector index of SQLite (``MessageVectorIndex``)."""

    def __init__(self, cache: VectorCache) -> None:
        self.cache = cache

    def store_message_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, list[float]]]
    ) -> None:
        params = [
            {
                "id": message_id,
                "s": session_pk,
                "t": said_at_ms,
                "v": sqlite_vec.serialize_float32(vector),
            }
            for message_id, session_pk, said_at_ms, vector in rows
        ]
        if params:
            db.execute(
                text(f"DELETE FROM {MESSAGE_VEC} WHERE message_id = :id"),
                [{"id": p["id"]} for p in params],
            )
            db.execute(
                text(
                    f"INSERT INTO {MESSAGE_VEC}(message_id, session_pk, said_at_ms, embedding) VALUES (:id, :s, :t, :v)"
                ),
                params,
            )
            log_changes(db, MESSAGE_SPACE, [(str(p["s"]), int(p["id"])) for p in params])

    def nearest_messages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit]:
        # The time filter is part of the KNN (a vec0 metadata column, a tag of the matrix): a
        # narrow window still gets its k nearest, not the few of the session's k nearest inside it.
        found = self.cache.nearest(db, MESSAGE_SPACE, str(session_pk), vector, k, window)
        if found is not None:
            return [TextHit(n.row_id, n.distance) for n in found]
        since = " AND said_at_ms >= :since" if window[0] is not None else ""
        until = " AND said_at_ms <= :until" if window[1] is not None else ""
        sql = (
            f"SELECT message_id, distance FROM {MESSAGE_VEC} "
            f"WHERE embedding MATCH :v AND k = :k AND session_pk = :s{since}{until} ORDER BY distance"
        )
        params = {
            "v": sqlite_vec.serialize_float32(vector),
            "k": k,
            "s": session_pk,
            "since": window[0],
            "until": window[1],
        }
        return [TextHit(int(r), float(d)) for r, d in db.execute(text(sql), params)]

    def store_passage_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, int, list[float]]]
    ) -> None:
        params = [
            {
                "id": passage_id(message_id, index),
                "s": session_pk,
                "t": said_at_ms,
                "v": sqlite_vec.serialize_float32(vector),
            }
            for message_id, index, session_pk, said_at_ms, vector in rows
        ]
        if params:
            db.execute(
                text(
                    f"INSERT INTO {PASSAGE_VEC}(passage_id, session_pk, said_at_ms, embedding) "
                    "VALUES (:id, :s, :t, :v)"
                ),
                params,
            )
            log_changes(db, PASSAGE_SPACE, [(str(p["s"]), int(p["id"])) for p in params])

    def remove_passage_vectors(self, db: Session, rows: Iterable[tuple[int, int, int]]) -> None:
        # By primary key, one statement per passage: vec0 answers a range of ids with a scan.
        removed = [
            (str(session_pk), passage_id(message_id, index))
            for message_id, session_pk, count in rows
            for index in range(count)
        ]
        if removed:
            db.execute(
                text(f"DELETE FROM {PASSAGE_VEC} WHERE passage_id = :id"),
                [{"id": row_id} for _, row_id in removed],
            )
            log_changes(db, PASSAGE_SPACE, removed)

    def nearest_passages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit] | None:
        found = self.cache.nearest(db, PASSAGE_SPACE, str(session_pk), vector, k, window)
        return None if found is None else best_passages((n.row_id, n.distance) for n in found)

    def passage_similarities(
        self, db: Session, counts: Mapping[int, int], vector: list[float]
    ) -> dict[int, float]:
        ids = [passage_id(m, i) for m, count in counts.items() for i in range(count)]
        found = rows_by_id(db, PASSAGE_SPACE, ids)
        if not found:
            return {}
        return best_cosines([(passage_message(i), blob) for i, (blob, _) in found.items()], vector)

    def remove_session_vectors(self, db: Session, session_pk: int) -> None:
        db.execute(
            text(
                f"DELETE FROM {MESSAGE_VEC} WHERE message_id IN (SELECT id FROM messages WHERE session_pk = :s)"
            ),
            {"s": session_pk},
        )
        log_reset(db, MESSAGE_SPACE, str(session_pk))
        db.execute(text(f"DELETE FROM {PASSAGE_VEC} WHERE session_pk = :s"), {"s": session_pk})
        log_reset(db, PASSAGE_SPACE, str(session_pk))
