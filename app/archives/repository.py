"""SQL for archives and archived messages. Repositories never commit."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.db.models import AgentSession, Archive, ArchiveStatus, MessageSearch, StoredMessage


def add_archive(db: Session, archive: Archive) -> Archive:
    db.add(archive)
    db.flush()
    return archive


def list_archives(db: Session, session: AgentSession) -> list[Archive]:
    stmt = select(Archive).where(Archive.session_pk == session.id).order_by(Archive.archive_index)
    return list(db.execute(stmt).scalars())


def get_archive(db: Session, session: AgentSession, archive_index: int) -> Archive | None:
    stmt = select(Archive).where(
        Archive.session_pk == session.id, Archive.archive_index == archive_index
    )
    return db.execute(stmt).scalar_one_or_none()


def get_archive_by_pk(db: Session, archive_pk: int) -> Archive | None:
    return db.get(Archive, archive_pk)


def latest_completed_before(db: Session, session_pk: int, archive_index: int) -> Archive | None:
    """The newest completed archive older than ``archive_index`` (lifecycle.md, Phase 2 step 1)."""
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
    stmt = (
        # The redacted copy when there is one (see StoredMessage).
        select(func.coalesce(StoredMessage.redacted_body, StoredMessage.body).label("body"), StoredMessage.tokens)
        .where(StoredMessage.archive_pk.in_(list(archive_pks)))
        .order_by(StoredMessage.seq)
    )
    return list(db.execute(stmt))


def messages_by_ids(db: Session, ids: Sequence[int]) -> dict[int, StoredMessage]:
    if not ids:
        return {}
    stmt = select(StoredMessage).where(StoredMessage.id.in_(list(ids)))
    return {row.id: row for row in db.execute(stmt).scalars()}


def iter_archived_texts(
    db: Session, session: AgentSession, archive_pk: int | None, batch: int = 2000
) -> Iterator[Any]:
    """Archived messages' search fields (plain rows, not ORM objects: scans touch every row) in
    sequence order."""
    stmt = select(
        StoredMessage.id, StoredMessage.archive_pk, StoredMessage.seq, StoredMessage.role,
        StoredMessage.search_text, StoredMessage.created_at, StoredMessage.body,
    ).where(StoredMessage.session_pk == session.id)
    if archive_pk is None:
        stmt = stmt.where(StoredMessage.archive_pk.is_not(None))
    else:
        stmt = stmt.where(StoredMessage.archive_pk == archive_pk)
    yield from db.execute(stmt.order_by(StoredMessage.seq).execution_options(yield_per=batch))


def session_text_stats(db: Session, session: AgentSession, archive_pk: int | None) -> tuple[int, float]:
    """(archived message count, average search-text length in characters) of one session."""
    stmt = select(func.count(), func.avg(func.length(StoredMessage.search_text))).where(
        StoredMessage.session_pk == session.id
    )
    stmt = stmt.where(StoredMessage.archive_pk.is_not(None) if archive_pk is None else StoredMessage.archive_pk == archive_pk)
    count, average = db.execute(stmt).one()
    return int(count or 0), float(average or 0.0)


def messages_around(db: Session, session: AgentSession, seqs: Sequence[int], before_after: int) -> dict[int, StoredMessage]:
    """Archived messages of a session within ``before_after`` positions of any given sequence number."""
    wanted = {s + d for s in seqs for d in range(-before_after, before_after + 1)}
    if not wanted:
        return {}
    stmt = select(StoredMessage).where(
        StoredMessage.session_pk == session.id, StoredMessage.archive_pk.is_not(None), StoredMessage.seq.in_(sorted(wanted))
    )
    return {row.seq: row for row in db.execute(stmt).scalars()}


def add_search_facts(db: Session, rows: Sequence[MessageSearch]) -> None:
    """Insert or replace what Phase 2 learned about archived messages (a re-run replaces)."""
    if not rows:
        return
    db.execute(delete(MessageSearch).where(MessageSearch.message_id.in_([r.message_id for r in rows])))
    db.add_all(rows)
