"""Session use cases behind /sessions and /compact: read, delete, commit, wait for an archive."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from app.archives.read import store as archives_store
from app.archives.read.views import ArchiveSummary, archive_summary
from app.core.clock import utcnow
from app.core.threads import to_thread
from app.db.models import AgentSession, Archive, ArchiveStatus
from app.db.models.archive import TERMINAL_ARCHIVE_STATUSES
from app.db.uow import UnitOfWork
from app.errors import NotFound
from app.sessions import repository as repo
from app.sessions.commit import CommitOutcome, commit_phase1
from app.sessions.hooks import HookHealth, session_hook_health

WAIT_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class ArchiveState:
    archive_pk: int
    archive_id: str
    status: str
    overview: str
    error: str | None
    error_stage: str | None
    message_count: int
    summary: ArchiveSummary
    memories_extracted: dict[str, int]


def session_or_404(db: Session, tenant_id: str, session_id: str) -> AgentSession:
    """The tenant's session, in the caller's transaction; NotFound when there is none."""
    session = repo.find_session(db, tenant_id, session_id)
    if session is None:
        raise NotFound("session", session_id)
    return session


@dataclass(frozen=True, slots=True)
class SessionView:
    """The session's identity, counters and archives."""

    session_id: str
    session_key: str | None
    agent_id: str
    user_id: str
    message_count: int
    total_message_count: int
    pending_tokens: int
    keep_recent_count: int
    commit_count: int
    last_commit_at: datetime | None
    created_at: datetime | None
    updated_at: datetime | None
    llm_prompt_tokens: int
    llm_completion_tokens: int
    archives: list[ArchiveSummary]
    hooks: HookHealth


@dataclass(frozen=True, slots=True)
class DeletedSession:
    session_id: str
    messages: int
    archives: int


def get_session_view(
    uow: UnitOfWork, tenant_id: str, session_id: str, silent_after_s: float = 0.0
) -> SessionView:
    """The session's identity, counters, archives and hook health (``silent_after_s``: see
    ``hook_flags``)."""
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        archives = archives_store.list_archives(db, session)
        hooks = session_hook_health(db, session, silent_after_s)
    return SessionView(
        session_id=session.session_id,
        session_key=session.session_key,
        agent_id=session.agent_id,
        user_id=session.user_id,
        message_count=session.live_count,
        total_message_count=session.total_message_count,
        pending_tokens=session.pending_tokens,
        keep_recent_count=session.keep_recent_count,
        commit_count=session.commit_count,
        last_commit_at=session.last_commit_at,
        created_at=session.created_at,
        updated_at=session.updated_at,
        llm_prompt_tokens=session.llm_prompt_tokens,
        llm_completion_tokens=session.llm_completion_tokens,
        archives=[archive_summary(a) for a in archives],
        hooks=hooks,
    )


def delete_session(uow: UnitOfWork, tenant_id: str, session_id: str) -> DeletedSession:
    """Remove the session, its messages, archives, jobs and their search index entries."""
    with uow.write() as db:
        uow.storage.locks.lock_session(db, tenant_id, session_id)
        session = session_or_404(db, tenant_id, session_id)
        uow.storage.unindex_session(db, session.id)
        messages, archives = repo.delete_session_rows(db, session)
    return DeletedSession(session_id, messages, archives)


def commit_session(
    uow: UnitOfWork,
    tenant_id: str,
    session_id: str,
    keep_recent_count: int,
    custom_instructions: str | None = None,
) -> CommitOutcome:
    """Phase 1 now; raises NotFound for an unknown session."""
    with uow.write() as db:
        uow.storage.locks.lock_session(db, tenant_id, session_id)
        session = repo.find_session(db, tenant_id, session_id)
        if session is None:
            raise NotFound("session", session_id)
        return commit_phase1(db, session, keep_recent_count, utcnow(), custom_instructions)


FINGERPRINT_PAGE = 2000


def stored_fingerprint_counts(
    uow: UnitOfWork, tenant_id: str, session_id: str, fingerprints: list[str]
) -> dict[str, int]:
    """How many stored messages of the session carry each fingerprint ({} for no session)."""
    counts: dict[str, int] = {}
    with uow.read() as db:
        session = repo.find_session(db, tenant_id, session_id)
        if session is None:
            return counts
        unique = sorted(set(fingerprints))
        for start in range(0, len(unique), FINGERPRINT_PAGE):
            page = unique[start : start + FINGERPRINT_PAGE]
            counts.update(repo.fingerprint_counts(db, session, page))
    return counts


def archive_state(uow: UnitOfWork, archive_pk: int) -> ArchiveState | None:
    with uow.read() as db:
        archive = archives_store.get_archive_by_pk(db, archive_pk)
        return _state(archive) if archive is not None else None


def _state(archive: Archive) -> ArchiveState:
    return ArchiveState(
        archive_pk=archive.id,
        archive_id=archive.archive_id,
        status=archive.status,
        overview=archive.overview,
        error=archive.error,
        error_stage=archive.error_stage,
        message_count=archive.message_count,
        summary=archive_summary(archive),
        memories_extracted=json.loads(archive.memories_json or "{}").get("counts", {}),
    )


async def wait_for_archive(
    uow: UnitOfWork, archive_pk: int, timeout_s: float
) -> ArchiveState | None:
    """Poll until the archive is completed or failed, or the timeout passes (then its last state)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max(0.0, timeout_s)
    while True:
        state = await to_thread(archive_state, uow, archive_pk)
        if state is None or state.status in TERMINAL_ARCHIVE_STATUSES:
            return state
        if loop.time() >= deadline:
            return state
        await asyncio.sleep(min(WAIT_POLL_S, max(0.0, deadline - loop.time())))


__all__ = [
    "ArchiveState",
    "ArchiveStatus",
    "DeletedSession",
    "SessionView",
    "commit_session",
    "delete_session",
    "get_session_view",
    "session_or_404",
    "stored_fingerprint_counts",
    "wait_for_archive",
]
