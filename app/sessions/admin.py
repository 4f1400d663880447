"""Operator use cases over sessions: search them, read a session's timeline, export a session.

``tenant_id=None`` means every tenant (the command line); the console always passes its tenant.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.archives.read import store as archives_store
from app.archives.read.views import ArchiveSummary, archive_summary
from app.db.models import AgentSession, Archive
from app.db.uow import UnitOfWork
from app.sessions import admin_repository as repo
from app.sessions.service import SessionView, get_session_view, session_or_404

EXPORT_PAGE = 500


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session in the operator's list (or the first record of an export)."""

    tenant_id: str
    session_id: str
    session_key: str | None
    agent_id: str
    user_id: str
    message_count: int
    total_message_count: int
    pending_tokens: int
    archive_count: int
    archive_statuses: dict[str, int]
    updated_at: datetime | None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ArchiveDetail:
    """An archive's summary with its range, Working Memory, how it was built and what it learned."""

    summary: ArchiveSummary
    first_seq: int
    last_seq: int
    overview: str
    abstract: str
    working_memory_path: str | None
    error_stage: str | None
    memories_extracted: dict[str, int]
    memory_error: str | None


@dataclass(frozen=True, slots=True)
class LiveMessage:
    seq: int
    role: str
    message: Any
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class SessionTimeline:
    """The session's counters, its archives with their Working Memory, its newest live messages."""

    view: SessionView
    archives: list[ArchiveDetail]
    live: list[LiveMessage]


@dataclass(frozen=True, slots=True)
class ExportedMessage:
    seq: int
    archive_id: str | None
    role: str
    created_at: datetime | None
    message: Any


# One JSON Lines record of an export: the session, one of its archives, or one message.
ExportRecord = SessionRow | ArchiveDetail | ExportedMessage


def list_sessions(
    uow: UnitOfWork,
    tenant_id: str | None,
    text: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[SessionRow]:
    """Sessions whose id, key, agent or user contains ``text``, most recently updated first."""
    with uow.read() as db:
        sessions = repo.search_sessions(db, tenant_id, (text or "").strip() or None, limit, offset)
        counts = repo.archive_status_counts(db, [s.id for s in sessions])
    return [_session_row(s, counts.get(s.id, {})) for s in sessions]


def _session_row(
    session: AgentSession, archive_counts: dict[str, int], archive_count: int | None = None
) -> SessionRow:
    return SessionRow(
        tenant_id=session.tenant_id,
        session_id=session.session_id,
        session_key=session.session_key,
        agent_id=session.agent_id,
        user_id=session.user_id,
        message_count=session.live_count,
        total_message_count=session.total_message_count,
        pending_tokens=session.pending_tokens,
        archive_count=sum(archive_counts.values()) if archive_count is None else archive_count,
        archive_statuses=archive_counts,
        updated_at=session.updated_at,
        created_at=session.created_at,
    )


def session_timeline(
    uow: UnitOfWork,
    tenant_id: str,
    session_id: str,
    live_limit: int = 100,
    silent_after_s: float = 0.0,
) -> SessionTimeline:
    """The session's counters, hook health, its newest live messages and every archive with its
    Working Memory."""
    view = get_session_view(uow, tenant_id, session_id, silent_after_s)
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        archives = archives_store.list_archives(db, session)
        live = repo.newest_live_messages(db, session.id, live_limit)
    return SessionTimeline(
        view=view,
        archives=[archive_detail(a) for a in archives],
        live=[LiveMessage(r.seq, r.role, json.loads(r.body), r.created_at) for r in live],
    )


def archive_detail(archive: Archive) -> ArchiveDetail:
    """An archive's summary with its range, Working Memory, how it was built and what it learned."""
    memories = json.loads(archive.memories_json or "{}")
    return ArchiveDetail(
        summary=archive_summary(archive),
        first_seq=archive.first_seq,
        last_seq=archive.last_seq,
        overview=archive.overview,
        abstract=archive.abstract,
        working_memory_path=archive.wm_path,
        error_stage=archive.error_stage,
        memories_extracted=memories.get("counts", {}),
        memory_error=memories.get("error"),
    )


def export_session(uow: UnitOfWork, tenant_id: str, session_id: str) -> Iterator[ExportRecord]:
    """Records of one session: the session, its archives, then every message in order.

    One read transaction for the whole export, so the records are one consistent snapshot; the
    messages are read a page at a time, so memory stays flat however long the session is.
    """
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        archives = archives_store.list_archives(db, session)
        yield _session_row(session, {}, len(archives))
        for archive in archives:
            yield archive_detail(archive)
        ids = {a.id: a.archive_id for a in archives}
        after = 0
        while page := repo.messages_after(db, session.id, after, EXPORT_PAGE):
            for row in page:
                yield ExportedMessage(
                    seq=row.seq,
                    archive_id=ids.get(row.archive_pk),
                    role=row.role,
                    created_at=row.created_at,
                    message=json.loads(row.body),
                )
            after = page[-1].seq
