"""Capture (``POST /after-turn``): store each new message of a turn once, in order.

sanitize → fingerprint → occurrence-aware dedupe → append with gapless sequence numbers →
advance the pending-token window → auto-commit when the threshold is reached. Everything happens
in one write transaction; no model is called (docs/lifecycle.md, Capture).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.core.rules.bypass import is_bypassed
from app.db.models import AgentSession
from app.db.uow import UnitOfWork
from app.sessions import repository as repo
from app.sessions import turn_repository as turns
from app.sessions.capture_append import append_new_messages
from app.sessions.capture_candidates import PreparedTurn, prepare_turn
from app.sessions.commit import commit_phase1
from app.sessions.identity import SessionIdentity
from app.sessions.stored_form import stored_form
from app.settings import Settings


@dataclass(frozen=True, slots=True)
class TurnAdvancement:
    """A host turn commit: its idempotency key and the host's transcript anchors."""

    key: str
    admission_entry_id: str | None = None
    terminal_entry_id: str | None = None


@dataclass(frozen=True, slots=True)
class TurnInput:
    identity: SessionIdentity
    messages: list[Any]
    pre_prompt_message_count: int = 0
    is_heartbeat: bool = False
    token_budget: int | None = None
    # Set for /commit-turn: the turn is stored at most once per key, atomically.
    advancement: TurnAdvancement | None = None
    # When each message was made, by index (a transcript import keeps the host's times); a
    # message without one is stored at the time of the turn.
    message_times: Sequence[datetime | None] | None = None


@dataclass(frozen=True, slots=True)
class CommitReport:
    """Whether the turn triggered a commit, and why (or why not)."""

    triggered: bool
    reason: str | None
    threshold: int
    archive_id: str | None = None
    # Reported when the threshold was reached (whether or not an archive was made).
    keep_recent_count: int | None = None


# "committed", or "duplicate" when the turn's advancement key was already committed.
CaptureStatus = Literal["committed", "duplicate"]


@dataclass(frozen=True, slots=True)
class CaptureResult:
    commit: CommitReport
    ingested: int = 0
    duplicates: int = 0
    skipped: int = 0
    pending_tokens: int = 0
    compact_recommended: bool = False
    archive_scheduled: bool = False
    status: CaptureStatus = "committed"


@dataclass(frozen=True, slots=True)
class _Limits:
    threshold: int  # pending tokens that trigger a commit
    compact_at: float  # active tokens past which compaction is recommended
    keep_recent_count: int  # live messages a commit keeps


def capture_turn(uow: UnitOfWork, settings: Settings, turn: TurnInput) -> CaptureResult:
    """Store the new messages of a turn and commit when the window passes the threshold."""
    budget = turn.token_budget or settings.commit.default_token_budget
    threshold = math.floor(budget * settings.commit.token_threshold_ratio)
    start = min(max(0, turn.pre_prompt_message_count), len(turn.messages))
    ident = turn.identity
    if turn.is_heartbeat or is_bypassed(
        settings.capture.bypass_session_patterns, ident.session_key, ident.session_id
    ):
        return _skip_all(uow, ident, len(turn.messages) - start, threshold)
    prepared = prepare_turn(turn.messages, start)
    # Redaction and serialisation happen here, before the write lock is taken.
    prepared.forms = {
        i: stored_form(m, settings.capture.image_tokens, settings.redaction.stored_messages)
        for i, m in prepared.sanitized.items()
    }
    limits = _Limits(
        threshold, settings.commit.force_compact_ratio * budget, settings.commit.keep_recent_count
    )
    with uow.write() as db:
        uow.storage.locks.lock_session(db, ident.tenant_id, ident.session_id)
        key = turn.advancement.key if turn.advancement is not None else None
        session, stored = turns.find_session_and_turn(db, ident.tenant_id, ident.session_id, key)
        if session is None:
            session = repo.add_session(
                db, ident.new_session_row(settings.commit.keep_recent_count, utcnow())
            )
        elif stored:
            return _duplicate_turn(db, session, len(turn.messages), limits)
        return _store_turn(db, session, prepared, start, turn, limits)


def _store_turn(
    db: Session,
    session: AgentSession,
    prepared: PreparedTurn,
    start: int,
    turn: TurnInput,
    limits: _Limits,
) -> CaptureResult:
    """Append the new messages, record the turn, commit past the threshold (one transaction)."""
    first_seq = session.last_seq + 1
    ingested, duplicates = append_new_messages(db, session, prepared, start, turn.message_times)
    if turn.advancement is not None:
        _record_turn(db, session, turn.advancement, first_seq, ingested)
    scheduled = False
    commit = CommitReport(triggered=False, reason="below_threshold", threshold=limits.threshold)
    if session.pending_tokens >= limits.threshold and session.live_count > 0:
        outcome = commit_phase1(db, session, limits.keep_recent_count, utcnow())
        scheduled = outcome.archived
        commit = _commit_report(outcome.archive_id, outcome.reason, limits)
    return CaptureResult(
        commit=commit,
        ingested=ingested,
        duplicates=duplicates,
        skipped=prepared.skipped,
        pending_tokens=session.pending_tokens,
        compact_recommended=repo.active_tokens(db, session) > limits.compact_at,
        archive_scheduled=scheduled,
    )


def _record_turn(
    db: Session, session: AgentSession, advancement: TurnAdvancement, first_seq: int, ingested: int
) -> None:
    """The idempotency record, written in the transaction that stores the turn (atomic)."""
    stored = ingested > 0
    turns.add_turn_commit(
        db,
        turns.NewTurnCommit(
            tenant_id=session.tenant_id,
            session_pk=session.id,
            advancement_key=advancement.key,
            first_seq=first_seq if stored else None,
            last_seq=session.last_seq if stored else None,
            admission_entry_id=advancement.admission_entry_id,
            terminal_entry_id=advancement.terminal_entry_id,
            ingested=ingested,
            created_at=utcnow(),
        ),
    )


def _duplicate_turn(
    db: Session, session: AgentSession, count: int, limits: _Limits
) -> CaptureResult:
    """A retried advancement key: nothing is stored, the answer says so."""
    return CaptureResult(
        commit=CommitReport(triggered=False, reason="duplicate_turn", threshold=limits.threshold),
        duplicates=count,
        pending_tokens=session.pending_tokens,
        compact_recommended=repo.active_tokens(db, session) > limits.compact_at,
        status="duplicate",
    )


def _commit_report(archive_id: str | None, reason: str | None, limits: _Limits) -> CommitReport:
    keep = limits.keep_recent_count
    if archive_id is None:
        return CommitReport(
            triggered=False, reason=reason, threshold=limits.threshold, keep_recent_count=keep
        )
    return CommitReport(
        triggered=True,
        reason="threshold",
        threshold=limits.threshold,
        archive_id=archive_id,
        keep_recent_count=keep,
    )


def _skip_all(uow: UnitOfWork, ident: SessionIdentity, count: int, threshold: int) -> CaptureResult:
    with uow.read() as db:
        session = repo.find_session(db, ident.tenant_id, ident.session_id)
        pending = session.pending_tokens if session else 0
    return CaptureResult(
        commit=CommitReport(triggered=False, reason="below_threshold", threshold=threshold),
        skipped=max(0, count),
        pending_tokens=pending,
    )
