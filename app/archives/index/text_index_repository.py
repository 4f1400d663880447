"""SQL for the message text index's bookkeeping: which archives have their messages indexed.
Repositories never commit."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session

from app.db.driver_query import DriverQuery
from app.db.models import Archive, StoredMessage

# Run before every archive search: built once, on the driver in the caller's transaction
# (app/db/driver_query.py).
_UNINDEXED_OF_SESSION = DriverQuery(
    select(Archive.id)
    .where(Archive.session_pk == bindparam("s"), Archive.messages_indexed.is_(False))
    .order_by(Archive.id)
)


def unindexed_archives_of_session(db: Session, session_pk: int) -> list[int]:
    return [int(pk) for (pk,) in _UNINDEXED_OF_SESSION.in_session(db).all_rows({"s": session_pk})]


def unindexed_among(db: Session, archive_pks: Sequence[int]) -> list[int]:
    """Those of the archives that exist and are not indexed yet, in id order."""
    stmt = (
        select(Archive.id)
        .where(Archive.id.in_(list(archive_pks)), Archive.messages_indexed.is_(False))
        .order_by(Archive.id)
    )
    return list(db.execute(stmt).scalars())


def search_texts(db: Session, archive_pks: Sequence[int]) -> list[tuple[int, str]]:
    """(id, search text) of the archives' messages."""
    stmt = (
        select(StoredMessage.id, StoredMessage.search_text)
        .where(StoredMessage.archive_pk.in_(list(archive_pks)))
        .order_by(StoredMessage.id)
    )
    return [(int(row_id), text or "") for row_id, text in db.execute(stmt)]


def mark_indexed(db: Session, archive_pks: Sequence[int]) -> None:
    db.execute(
        update(Archive).where(Archive.id.in_(list(archive_pks))).values(messages_indexed=True)
    )
