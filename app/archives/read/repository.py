"""SQL for archives and archived messages. Repositories never commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from app.db.driver_load import DriverLoad
from app.db.driver_query import DriverQuery
from app.db.models import (
    AgentSession,
    Archive,
    ArchiveStatus,
    StoredMessage,
)
from app.db.models.archive import format_archive_id


def add_archive(db: Session, archive: Archive) -> Archive:
    db.add(archive)
    db.flush()
    return archive


# Read by the archive listings: built once (building a statement costs more than running it), run on
# the driver inside the caller's transaction (app/db/driver_query.py: SQLAlchemy's execution path
# and the ORM's load cost more than SQLite's own work).
_LIST_ARCHIVES = DriverLoad(
    Archive, Archive.session_pk == bindparam("s"), order_by=[Archive.archive_index]
)
_OVERVIEW = select(Archive.overview).where(Archive.id == bindparam("id"))
_BODIES_OF_ARCHIVES = (
    # The redacted copy when there is one (see StoredMessage).
    select(
        func.coalesce(StoredMessage.redacted_body, StoredMessage.body).label("body"),
        StoredMessage.tokens,
    )
    .where(StoredMessage.archive_pk.in_(bindparam("ids", expanding=True)))
    .order_by(StoredMessage.seq)
)
_SESSION_OVERVIEWS = select(Archive.id, Archive.overview).where(
    Archive.session_pk == bindparam("s"), Archive.overview != ""
)
_OVERVIEWS_OF_SESSION = DriverQuery(_SESSION_OVERVIEWS.order_by(Archive.archive_index))
_OVERVIEWS_AMONG = DriverQuery(
    _SESSION_OVERVIEWS.where(Archive.id.in_(bindparam("ids", expanding=True))).order_by(
        Archive.archive_index
    )
)


@dataclass(frozen=True, slots=True)
class ArchiveHead:
    """An archive's place and state: what a pre-prompt assemble and archive search read of every
    archive of the session (an overview hit is dated by ``completed_at``)."""

    id: int
    archive_index: int
    status: str
    message_count: int
    completed_at: datetime | None

    @property
    def archive_id(self) -> str:
        return format_archive_id(self.archive_index)


# Answered from ``ix_archives_session_heads`` alone (migration 0018: these columns follow the
# overview in the row, a Working Memory of up to ~50 KB that SQLite reads past to reach them), as
# plain rows: no mapped object is built for a session's hundred archives.
_ARCHIVE_HEADS = DriverQuery(
    select(
        Archive.id,
        Archive.archive_index,
        Archive.status,
        Archive.message_count,
        Archive.completed_at,
    )
    .where(Archive.session_pk == bindparam("s"))
    .order_by(Archive.archive_index),
    convert_results=True,
)


def archive_heads(db: Session, session_pk: int) -> list[ArchiveHead]:
    """The place and state of each of the session's archives, oldest first."""
    return [ArchiveHead(*row) for row in _ARCHIVE_HEADS.in_session(db).all_rows({"s": session_pk})]


def list_archives(db: Session, session: AgentSession) -> list[Archive]:
    """The session's archives in order."""
    return _LIST_ARCHIVES.all(db, {"s": session.id})


def overview_of(db: Session, archive_pk: int) -> str:
    return db.connection().execute(_OVERVIEW, {"id": archive_pk}).scalar_one()


def overview_texts(
    db: Session, session: AgentSession, archive_pks: Sequence[int] | None, only: int | None
) -> dict[int, str]:
    """The non-empty overviews of the session's archives (of ``archive_pks`` when given, of
    ``only`` when given), by id."""
    ids = archive_pks
    if only is not None:
        ids = [only] if ids is None else [pk for pk in ids if pk == only]
    if ids is None:
        rows = _OVERVIEWS_OF_SESSION.in_session(db).all_rows({"s": session.id})
    elif ids:
        rows = _OVERVIEWS_AMONG.in_session(db).all_rows({"s": session.id, "ids": list(ids)})
    else:
        return {}
    return {int(pk): text for pk, text in rows}


def get_archive(db: Session, session: AgentSession, archive_index: int) -> Archive | None:
    stmt = select(Archive).where(
        Archive.session_pk == session.id, Archive.archive_index == archive_index
    )
    return db.execute(stmt).scalar_one_or_none()


def get_archive_by_pk(db: Session, archive_pk: int) -> Archive | None:
    return db.get(Archive, archive_pk)


def latest_completed_before(db: Session, session_pk: int, archive_index: int) -> Archive | None:
    """The newest completed archive older than ``archive_index`` (docs/lifecycle.md, Phase 2 step 1)."""
    stmt = (
        select(Archive)
        .where(
            Archive.session_pk == session_pk,
            Archive.archive_index < archive_index,
            Archive.status == ArchiveStatus.COMPLETED,
        )
        .order_by(Archive.archive_index.desc())
        .limit(1)
    )
    return db.execute(stmt).scalar_one_or_none()


def archive_messages(
    db: Session, archive: Archive, offset: int = 0, limit: int | None = None
) -> list[StoredMessage]:
    stmt = (
        select(StoredMessage)
        .where(StoredMessage.archive_pk == archive.id)
        .order_by(StoredMessage.seq)
        .offset(offset)
        .limit(limit)
    )
    return list(db.execute(stmt).scalars())


def bodies_of_archives(db: Session, archive_pks: Sequence[int]) -> list[Any]:
    """(body, tokens) rows of the archives' messages in sequence order, bodies redacted: plain rows,
    no ORM objects."""
    if not archive_pks:
        return []
    return list(db.connection().execute(_BODIES_OF_ARCHIVES, {"ids": list(archive_pks)}).all())
