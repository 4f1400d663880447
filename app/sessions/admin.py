"""Operator use cases over sessions: search them, read a session's timeline, export a session.

``tenant_id=None`` means every tenant (the command line); the console always passes its tenant.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from app.archives import store as archives_store
from app.archives.service import archive_summary
from app.core.clock import isoformat
from app.db.models import AgentSession, Archive
from app.db.uow import UnitOfWork
from app.sessions import admin_repository as repo
from app.sessions.service import get_session_view, session_or_404

EXPORT_PAGE = 500


def list_sessions(
    uow: UnitOfWork,
    tenant_id: str | None,
    text: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Sessions whose id, key, agent or user contains ``text``, most recently updated first."""
    with uow.read() as db:
        sessions = repo.search_sessions(db, tenant_id, (text or "").strip() or None, limit, offset)
        counts = repo.archive_status_counts(db, [s.id for s in sessions])
    return [_session_row(s, counts.get(s.id, {})) for s in sessions]


def _session_row(session: AgentSession, archive_counts: dict[str, int]) -> dict[str, Any]:
    return {
        "tenantId": session.tenant_id,
        "sessionId": session.session_id,
        "sessionKey": session.session_key,
        "agentId": session.agent_id,
        "userId": session.user_id,
        "messageCount": session.live_count,
        "totalMessageCount": session.total_message_count,
        "pendingTokens": session.pending_tokens,
        "archiveCount": sum(archive_counts.values()),
        "archiveStatuses": archive_counts,
        "updatedAt": isoformat(session.updated_at),
    }


def session_timeline(
    uow: UnitOfWork, tenant_id: str, session_id: str, live_limit: int = 100
) -> dict[str, Any]:
    """The session's counters, its newest live messages and every archive with its Working Memory."""
    view = get_session_view(uow, tenant_id, session_id)
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        archives = archives_store.list_archives(db, session)
        live = repo.newest_live_messages(db, session.id, live_limit)
    return {
        **view,
        "archives": [archive_detail(a) for a in archives],
        "live": [
            {
                "seq": r.seq,
                "role": r.role,
                "message": json.loads(r.body),
                "createdAt": isoformat(r.created_at),
            }
            for r in live
        ],
    }


def archive_detail(archive: Archive) -> dict[str, Any]:
    """An archive's summary with its range, Working Memory, how it was built and what it learned."""
    memories = json.loads(archive.memories_json or "{}")
    return {
        **archive_summary(archive),
        "firstSeq": archive.first_seq,
        "lastSeq": archive.last_seq,
        "overview": archive.overview,
        "abstract": archive.abstract,
        "workingMemoryPath": archive.wm_path,
        "errorStage": archive.error_stage,
        "memoriesExtracted": memories.get("counts", {}),
        "memoryError": memories.get("error"),
    }


def export_session(uow: UnitOfWork, tenant_id: str, session_id: str) -> Iterator[dict[str, Any]]:
    """JSON Lines records of one session: the session, its archives, then every message in order.

    One read transaction for the whole export, so the records are one consistent snapshot; the
    messages are read a page at a time, so memory stays flat however long the session is.
    """
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        archives = archives_store.list_archives(db, session)
        yield {
            "type": "session",
            **_session_row(session, {}),
            "archiveCount": len(archives),
            "createdAt": isoformat(session.created_at),
        }
        for archive in archives:
            yield {"type": "archive", **archive_detail(archive)}
        ids = {a.id: a.archive_id for a in archives}
        after = 0
        while page := repo.messages_after(db, session.id, after, EXPORT_PAGE):
            for row in page:
                yield {
                    "type": "message",
                    "seq": row.seq,
                    "archiveId": ids.get(row.archive_pk),
                    "role": row.role,
                    "createdAt": isoformat(row.created_at),
                    "message": json.loads(row.body),
                }
            after = page[-1].seq
