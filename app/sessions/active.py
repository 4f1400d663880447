"""The session's active context: what /assemble would put in front of the model."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session, aliased

from app.db.models import AgentSession, Archive, ArchiveStatus, StoredMessage


def active_tokens(db: Session, session: AgentSession) -> int:
    """Overview of the newest completed archive + later unsummarised archives + live messages,
    in one statement (it runs inside every /after-turn)."""
    latest = (
        select(Archive.archive_index, Archive.overview_tokens)
        .where(Archive.session_pk == session.id, Archive.status == ArchiveStatus.COMPLETED)
        .order_by(Archive.archive_index.desc())
        .limit(1)
        .subquery()
    )
    later = aliased(Archive)
    floor = func.coalesce(select(latest.c.archive_index).scalar_subquery(), 0)
    overview = func.coalesce(select(latest.c.overview_tokens).scalar_subquery(), 0)
    unsummarised = (
        select(func.coalesce(func.sum(later.message_tokens), 0))
        .where(later.session_pk == session.id, later.archive_index > floor, later.status != ArchiveStatus.COMPLETED)
        .scalar_subquery()
    )
    live = (
        select(func.coalesce(func.sum(StoredMessage.tokens), 0))
        .where(StoredMessage.session_pk == session.id, StoredMessage.archive_pk.is_(None))
        .scalar_subquery()
    )
    return int(db.execute(select(overview + unsummarised + live)).scalar_one())
