"""SQL of the operator's view of sessions: search, live messages, export pages. Never commits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from app.db.models import AgentSession, Archive, StoredMessage


def search_sessions(
    db: Session, tenant_id: str | None, text: str | None, limit: int, offset: int
) -> list[AgentSession]:
    """Sessions whose id, key, agent or user contains ``text``, most recently updated first."""
    stmt = select(AgentSession)
    if tenant_id is not None:
        stmt = stmt.where(AgentSession.tenant_id == tenant_id)
    if text:
        stmt = stmt.where(
            or_(
                *(
                    column.icontains(text, autoescape=True)
                    for column in (
                        AgentSession.session_id,
                        AgentSession.session_key,
                        AgentSession.agent_id,
                        AgentSession.user_id,
                    )
                )
            )
        )
    stmt = (
        stmt.order_by(AgentSession.updated_at.desc(), AgentSession.id.desc())
        .offset(offset)
        .limit(limit)
    )
    return list(db.execute(stmt).scalars())


def archive_status_counts(db: Session, session_pks: Sequence[int]) -> dict[int, dict[str, int]]:
    """For each session, how many of its archives are in each status."""
    if not session_pks:
        return {}
    stmt = (
        select(Archive.session_pk, Archive.status, func.count())
        .where(Archive.session_pk.in_(list(session_pks)))
        .group_by(Archive.session_pk, Archive.status)
    )
    counts: dict[int, dict[str, int]] = {}
    for session_pk, status, count in db.execute(stmt):
        counts.setdefault(session_pk, {})[status] = int(count)
    return counts


def newest_live_messages(db: Session, session_pk: int, limit: int) -> list[Any]:
    """The newest ``limit`` live messages (seq, role, body, created_at), oldest of them first."""
    stmt = (
        select(StoredMessage.seq, StoredMessage.role, StoredMessage.body, StoredMessage.created_at)
        .where(StoredMessage.session_pk == session_pk, StoredMessage.archive_pk.is_(None))
        .order_by(StoredMessage.seq.desc())
        .limit(limit)
    )
    return list(reversed(db.execute(stmt).all()))


def messages_after(db: Session, session_pk: int, after_seq: int, limit: int) -> list[Any]:
    """Every message (live or archived) after ``after_seq``, in order: one page of an export."""
    stmt = (
        select(
            StoredMessage.seq,
            StoredMessage.archive_pk,
            StoredMessage.role,
            StoredMessage.body,
            StoredMessage.created_at,
        )
        .where(StoredMessage.session_pk == session_pk, StoredMessage.seq > after_seq)
        .order_by(StoredMessage.seq)
        .limit(limit)
    )
    return list(db.execute(stmt))
