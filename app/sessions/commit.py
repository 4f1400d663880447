"""Commit Phase 1: move older live messages into a new archive and enqueue Phase 2.

Runs inside the caller's write transaction, with no model call (docs/lifecycle.md, Phase 1). The
archive row, the moved messages, the session counters and the Phase 2 job are written atomically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.archives.read import store as archives
from app.core.rules.messages import TOOL_CALL_BLOCK_TYPES
from app.core.rules.redaction import redact_text
from app.db.models import AgentSession, Archive, ArchiveStatus
from app.db.models.archive import format_archive_id
from app.jobs.service import enqueue_phase2
from app.sessions import repository as sessions_repo
from app.sessions.split import safe_split_index
from app.sessions.window import pending_tokens_closed_form

MAX_KEEP_RECENT_COUNT = 10000


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    archived: bool
    reason: str | None = None
    archive_id: str | None = None
    archive_pk: int | None = None
    messages_archived: int = 0


def commit_phase1(
    db: Session,
    session: AgentSession,
    keep_recent_count: int,
    now: datetime,
    custom_instructions: str | None = None,
) -> CommitOutcome:
    """Archive ``live[:split]`` of the session; returns what happened."""
    keep = max(0, int(keep_recent_count))  # docs/lifecycle.md, Phase 1 step 1
    live = sessions_repo.live_rows(db, session)
    if not live:
        _reset_window(session, keep, 0)
        return CommitOutcome(archived=False, reason="no_messages")
    split = len(live) - keep
    if split > 0:
        split = safe_split_index([_tool_view(row.role, row.body) for row in live], split)
    if split <= 0:
        remaining = [row.tokens for row in live]
        _reset_window(session, keep, pending_tokens_closed_form(remaining, keep))
        return CommitOutcome(archived=False, reason="all_within_keep_window")
    archived_rows, kept_rows = live[:split], live[split:]
    archive = _create_archive(db, session, archived_rows, keep, custom_instructions, now)
    sessions_repo.move_to_archive(db, session, archive.id, archived_rows[-1].seq)
    enqueue_phase2(db, archive, now)
    session.live_count = len(kept_rows)
    session.live_tokens = sum(r.tokens for r in kept_rows)
    _reset_window(session, keep, pending_tokens_closed_form([r.tokens for r in kept_rows], keep))
    session.commit_count += 1
    session.last_commit_at = now
    session.updated_at = now
    return CommitOutcome(
        archived=True,
        archive_id=archive.archive_id,
        archive_pk=archive.id,
        messages_archived=len(archived_rows),
    )


def _reset_window(session: AgentSession, keep: int, pending: int) -> None:
    session.keep_recent_count = keep
    session.pending_tokens = pending


def _tool_view(role: str, body: str) -> dict[str, object]:
    """Only tool calls and tool results matter to the split; skip parsing everything else."""
    if role == "toolResult" or (role == "assistant" and _may_call_tools(body)):
        parsed = json.loads(body)
        if isinstance(parsed, dict):
            return parsed
    return {"role": role}


def _may_call_tools(body: str) -> bool:
    return any(f'"{kind}"' in body for kind in TOOL_CALL_BLOCK_TYPES)


def _create_archive(
    db: Session,
    session: AgentSession,
    rows: list[Any],
    keep: int,
    custom_instructions: str | None,
    now: datetime,
) -> Archive:
    times = sessions_repo.stored_times(db, session, [rows[0].seq, rows[-1].seq])
    session.archive_count += 1
    archive = Archive(
        tenant_id=session.tenant_id,
        session_pk=session.id,
        archive_index=session.archive_count,
        status=ArchiveStatus.PENDING,
        overview="",
        abstract="",
        overview_tokens=0,
        message_count=len(rows),
        message_tokens=sum(r.tokens for r in rows),
        first_seq=rows[0].seq,
        last_seq=rows[-1].seq,
        keep_recent_count=keep,
        # At most 20,000 characters (the API's limit): cheap to redact here (bench/RESULTS.md, Measurements behind the code).
        custom_instructions=redact_text(custom_instructions) if custom_instructions else None,
        started_at=times[rows[0].seq],
        ended_at=times[rows[-1].seq],
        created_at=now,
    )
    return archives.add_archive(db, archive)


__all__ = ["MAX_KEEP_RECENT_COUNT", "CommitOutcome", "commit_phase1", "format_archive_id"]
