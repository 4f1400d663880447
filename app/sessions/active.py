"""The session's active context: what /assemble would put in front of the model."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import AgentSession, Archive, ArchiveStatus
from app.sessions import repository as repo


def active_tokens(db: Session, session: AgentSession) -> int:
    """Overview of the newest completed archive + later unsummarised archives + live messages."""
    latest = db.execute(
        select(Archive.archive_index, Archive.overview_tokens)
        .where(Archive.session_pk == session.id, Archive.status == ArchiveStatus.COMPLETED)
        .order_by(Archive.archive_index.desc())
        .limit(1)
    ).first()
    latest_index, overview_tokens = (latest.archive_index, latest.overview_tokens) if latest else (0, 0)
    unsummarised = db.execute(
        select(func.coalesce(func.sum(Archive.message_tokens), 0)).where(
            Archive.session_pk == session.id,
            Archive.archive_index > latest_index,
            Archive.status != ArchiveStatus.COMPLETED,
        )
    ).scalar_one()
    return int(overview_tokens) + int(unsummarised) + repo.live_token_sum(db, session)
