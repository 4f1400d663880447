"""Capture's write: append the messages of a turn not stored yet, with gapless sequence numbers,
and advance the pending-token window (docs/lifecycle.md, Capture steps 3 and 4)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.core.rules.fingerprint import new_message_indexes
from app.core.rules.messages import role_of
from app.db.models import AgentSession
from app.sessions import repository as repo
from app.sessions.capture_candidates import PreparedTurn
from app.sessions.window import advance_pending_tokens, pushed_out_positions


def append_new_messages(
    db: Session,
    session: AgentSession,
    prepared: PreparedTurn,
    start: int,
    times: Sequence[datetime | None] | None = None,
) -> tuple[int, int]:
    """Store the messages not stored yet; returns (ingested, duplicates)."""
    candidate_fps = [
        fp for i, fp in enumerate(prepared.fingerprints) if i >= start and fp is not None
    ]
    stored = repo.fingerprint_counts(db, session, candidate_fps)
    new_indexes = new_message_indexes(prepared.fingerprints, start, stored)
    rows: list[repo.NewMessageRow] = []
    for offset, index in enumerate(new_indexes):
        form = prepared.forms[index]
        rows.append(
            repo.NewMessageRow(
                seq=session.last_seq + offset + 1,
                role=role_of(prepared.sanitized[index]),
                body=form.body,
                redacted_body=form.redacted_body,
                search_text=form.search_text,
                tokens=form.tokens,
                fingerprint=prepared.fingerprints[index] or "",
            )
        )
    if rows:
        pending = _advanced_window(db, session, [r.tokens for r in rows])
        # Not text-indexed here: archived messages are, after the turn (app.archives.index.text_index).
        stored_at = [times[i] for i in new_indexes] if times is not None else None
        repo.insert_messages(db, session, rows, utcnow(), stored_at)
        repo.save_turn_counters(
            db,
            session,
            repo.TurnCounters(
                last_seq=session.last_seq + len(rows),
                live_count=session.live_count + len(rows),
                live_tokens=session.live_tokens + sum(r.tokens for r in rows),
                total_message_count=session.total_message_count + len(rows),
                pending_tokens=pending,
                updated_at=utcnow(),
            ),
        )
    return len(rows), len(candidate_fps) - len(rows)


def _advanced_window(db: Session, session: AgentSession, appended: list[int]) -> int:
    """The pending tokens once ``appended`` are stored (docs/lifecycle.md, Capture step 4): O(1)
    per message, reading only the messages pushed out."""
    before = session.live_count
    positions = [
        p
        for p in pushed_out_positions(before, session.keep_recent_count, len(appended))
        if p < before
    ]
    # Live messages are a contiguous run of sequence numbers ending at last_seq.
    first_live_seq = session.last_seq - before + 1
    by_seq = repo.live_tokens_by_seq(db, session, [first_live_seq + p for p in positions])
    stored = {p: by_seq.get(first_live_seq + p, 0) for p in positions}
    return advance_pending_tokens(
        session.pending_tokens, session.keep_recent_count, before, appended, stored
    )
