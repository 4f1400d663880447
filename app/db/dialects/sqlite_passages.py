"""The passage vectors of archived messages on SQLite (app/search/text/passages.py): a ``vec0`` table
partitioned by session, with the message's time as a metadata column, searched through the same
in-process matrices as the messages' own vectors (app/db/dialects/sqlite_vectors.py).

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
from app.db.dialects.base import TextHit, TimeRange
from app.db.dialects.passage_ids import best_passages, passage_id, passage_message
from app.db.dialects.sqlite_vectors import (
    VectorCache,
    VectorSpace,
    log_changes,
    log_reset,
    rows_by_id,
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


class SqlitePassageIndex:
    """The passage methods of the SQLite dialect."""

    vectors: VectorCache

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
        found = self.vectors.nearest(db, PASSAGE_SPACE, str(session_pk), vector, k, window)
        return None if found is None else best_passages((n.row_id, n.distance) for n in found)

    def passage_similarities(
        self, db: Session, counts: Mapping[int, int], vector: list[float]
    ) -> dict[int, float]:
        ids = [passage_id(m, i) for m, count in counts.items() for i in range(count)]
        found = rows_by_id(db, PASSAGE_SPACE, ids)
        if not found:
            return {}
        return best_cosines([(passage_message(i), blob) for i, (blob, _) in found.items()], vector)

    def unindex_session_passages(self, db: Session, session_pk: int) -> None:
        db.execute(text(f"DELETE FROM {PASSAGE_VEC} WHERE session_pk = :s"), {"s": session_pk})
        log_reset(db, PASSAGE_SPACE, str(session_pk))
