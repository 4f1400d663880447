"""SQL for sessions and their messages. Repositories never commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, NamedTuple, cast

from sqlalchemy import Table, bindparam, delete, func, select, text, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.db.driver_load import DriverLoad
from app.db.driver_query import DriverQuery
from app.db.models import AgentSession, Archive, Job, StoredMessage, TurnCommit


@dataclass(frozen=True, slots=True)
class NewMessageRow:
    seq: int
    role: str
    body: str
    redacted_body: str | None
    search_text: str
    tokens: int
    fingerprint: str


# The statements of every hook request are built once: building the expression tree and its
# cache key on each call cost more than running the statement (bench/RESULTS.md, Measurements behind the code).
# Those of a stored turn run on the driver, inside the turn's transaction (app/db/driver_query.py):
# SQLAlchemy's execution path cost more CPU a statement than SQLite's own work.
SESSION_BY_KEYS = (AgentSession.tenant_id == bindparam("tenant")) & (
    AgentSession.session_id == bindparam("sid")
)  # the session of (:tenant, :sid)
_FIND_SESSION = DriverLoad(AgentSession, SESSION_BY_KEYS)
_FINGERPRINT_COUNTS = DriverQuery(
    select(StoredMessage.fingerprint, func.count())
    .where(
        StoredMessage.tenant_id == bindparam("tenant"),
        StoredMessage.session_pk == bindparam("s"),
        StoredMessage.fingerprint.in_(bindparam("fps", expanding=True)),
    )
    .group_by(StoredMessage.fingerprint)
)
_TOKENS_BY_SEQ = DriverQuery(
    select(StoredMessage.seq, StoredMessage.tokens).where(
        StoredMessage.session_pk == bindparam("s"),
        StoredMessage.seq.in_(bindparam("seqs", expanding=True)),
    )
)
_MESSAGES = cast(Table, StoredMessage.__table__)
_INSERT_MESSAGES = DriverQuery(
    _MESSAGES.insert(),
    [f.name for f in fields(NewMessageRow)] + ["tenant_id", "session_pk", "created_at"],
)
_LIVE_BODIES = (
    # The redacted copy when there is one (see StoredMessage).
    select(
        func.coalesce(StoredMessage.redacted_body, StoredMessage.body).label("body"),
        StoredMessage.tokens,
    )
    .where(StoredMessage.session_pk == bindparam("s"), StoredMessage.archive_pk.is_(None))
    .order_by(StoredMessage.seq)
)


def find_session(db: Session, tenant_id: str, session_id: str) -> AgentSession | None:
    return _FIND_SESSION.first(db, {"tenant": tenant_id, "sid": session_id})


@dataclass(frozen=True, slots=True)
class TurnCounters:
    """The session row's counters once a turn's messages are stored."""

    last_seq: int
    live_count: int
    live_tokens: int
    total_message_count: int
    pending_tokens: int
    updated_at: datetime


_SAVE_TURN_COUNTERS = DriverQuery(
    update(AgentSession)
    .where(AgentSession.id == bindparam("session_pk"))
    .values({f.name: bindparam(f"new_{f.name}") for f in fields(TurnCounters)})
)


def save_turn_counters(db: Session, session: AgentSession, counters: TurnCounters) -> None:
    """Write a stored turn's counters (one statement) and set them on the session object as
    its saved state. Assigned as attributes instead, they were written by the ORM's flush at
    commit, for a tenth of the turn's CPU; changes made to the object later in the
    transaction (a commit) are flushed as before."""
    values = row_values(counters)
    params = {"session_pk": session.id, **{f"new_{k}": v for k, v in values.items()}}
    _SAVE_TURN_COUNTERS.in_session(db).run(params)
    for name, value in values.items():
        set_committed_value(session, name, value)


def add_session(db: Session, row: AgentSession) -> AgentSession:
    db.add(row)
    db.flush()
    return row


def fingerprint_counts(
    db: Session, session: AgentSession, fingerprints: Sequence[str]
) -> dict[str, int]:
    """How many stored messages of the session (live or archived) carry each fingerprint."""
    return fingerprint_counts_of(db, session.tenant_id, session.id, fingerprints)


def fingerprint_counts_of(
    db: Session, tenant_id: str, session_pk: int, fingerprints: Sequence[str]
) -> dict[str, int]:
    """``fingerprint_counts`` by the session's keys (no session row needed)."""
    if not fingerprints:
        return {}
    params = {"tenant": tenant_id, "s": session_pk, "fps": list(set(fingerprints))}
    rows = _FINGERPRINT_COUNTS.in_session(db).all_rows(params)
    return {fp: int(count) for fp, count in rows}


def insert_messages(
    db: Session,
    session: AgentSession,
    rows: Sequence[NewMessageRow],
    now: datetime,
    times: Sequence[datetime | None] | None = None,
) -> None:
    """Append rows, stored at ``now`` or at their own time in ``times`` (by row)."""
    values = [
        {
            "tenant_id": session.tenant_id,
            "session_pk": session.id,
            "seq": row.seq,
            "role": row.role,
            "body": row.body,
            "redacted_body": row.redacted_body,
            "search_text": row.search_text,
            "tokens": row.tokens,
            "fingerprint": row.fingerprint,
            "created_at": (times[index] if times is not None else None) or now,
        }
        for index, row in enumerate(rows)
    ]
    _INSERT_MESSAGES.in_session(db).run_many(values)


def live_tokens_by_seq(db: Session, session: AgentSession, seqs: Sequence[int]) -> dict[int, int]:
    """Tokens of live messages with the given sequence numbers."""
    if not seqs:
        return {}
    found = _TOKENS_BY_SEQ.in_session(db).all_rows({"s": session.id, "seqs": list(seqs)})
    return {int(seq): int(tokens) for seq, tokens in found}


class LiveRow(NamedTuple):
    seq: int
    role: str
    tokens: int
    body: str


# Commit Phase 1 reads every live message and moves the archived ones in the request: built once,
# run on the driver (the ORM's bulk-update path alone cost more than the rest). The rows come
# as the driver reads them: no column of theirs needs a conversion, and the two times an archive
# keeps are read apart (converting a time for every row was most of the read).
_LIVE_ROWS = DriverQuery(
    select(StoredMessage.seq, StoredMessage.role, StoredMessage.tokens, StoredMessage.body)
    .where(StoredMessage.session_pk == bindparam("s"), StoredMessage.archive_pk.is_(None))
    .order_by(StoredMessage.seq)
)
_TIMES_OF_SEQS = DriverQuery(
    select(StoredMessage.seq, StoredMessage.created_at).where(
        StoredMessage.session_pk == bindparam("s"),
        StoredMessage.seq.in_(bindparam("seqs", expanding=True)),
    ),
    convert_results=True,
)
_MOVE_TO_ARCHIVE = DriverQuery(
    update(_MESSAGES)
    .where(
        _MESSAGES.c.session_pk == bindparam("s"),
        _MESSAGES.c.archive_pk.is_(None),
        _MESSAGES.c.seq <= bindparam("last_seq"),
    )
    .values(archive_pk=bindparam("archive_pk"))
)


def live_rows(db: Session, session: AgentSession) -> list[LiveRow]:
    """Live messages (seq, role, tokens, body) in sequence order, for Phase 1."""
    rows = _LIVE_ROWS.in_session(db).all_rows({"s": session.id})
    return [LiveRow(*row) for row in rows]


def stored_times(db: Session, session: AgentSession, seqs: Sequence[int]) -> dict[int, datetime]:
    """When each of these messages of the session was stored, by seq."""
    rows = _TIMES_OF_SEQS.in_session(db).all_rows({"s": session.id, "seqs": list(set(seqs))})
    return {int(seq): stored for seq, stored in rows}


def live_bodies(db: Session, session: AgentSession) -> list[Any]:
    """(body, tokens) rows of the live messages in sequence order, bodies redacted."""
    return list(db.connection().execute(_LIVE_BODIES, {"s": session.id}).all())


def move_to_archive(db: Session, session: AgentSession, archive_pk: int, last_seq: int) -> int:
    """Move every live message up to ``last_seq`` into the archive (one statement)."""
    params = {"s": session.id, "last_seq": last_seq, "archive_pk": archive_pk}
    return _MOVE_TO_ARCHIVE.in_session(db).run(params)


def delete_session_rows(db: Session, session: AgentSession) -> tuple[int, int]:
    """Delete a session with its messages, archives and jobs; returns (messages, archives)."""
    messages = db.execute(
        select(func.count())
        .select_from(StoredMessage)
        .where(StoredMessage.session_pk == session.id)
    ).scalar_one()
    archives = db.execute(
        select(func.count()).select_from(Archive).where(Archive.session_pk == session.id)
    ).scalar_one()
    db.execute(delete(Job).where(Job.session_pk == session.id))
    db.execute(delete(TurnCommit).where(TurnCommit.session_pk == session.id))
    db.execute(delete(StoredMessage).where(StoredMessage.session_pk == session.id))
    db.execute(delete(Archive).where(Archive.session_pk == session.id))
    db.execute(delete(AgentSession).where(AgentSession.id == session.id))
    return int(messages), int(archives)


# One statement, written out: it runs inside every /after-turn, where building the equivalent
# expression tree on each call cost more than executing it. Plain SQL, the same on every dialect.
# It reads the archives only (a few rows); the live messages' part is kept on the session row.
_ARCHIVED_ACTIVE_TOKENS = DriverQuery(
    text(
        """
    SELECT
      COALESCE((SELECT overview_tokens FROM archives
                WHERE session_pk = :s AND status = 'completed'
                ORDER BY archive_index DESC LIMIT 1), 0)
    + COALESCE((SELECT SUM(message_tokens) FROM archives
                WHERE session_pk = :s AND status <> 'completed'
                  AND archive_index > COALESCE((SELECT MAX(archive_index) FROM archives
                                                WHERE session_pk = :s AND status = 'completed'), 0)), 0)
    """
    )
)


def active_tokens(db: Session, session: AgentSession) -> int:
    """The session's active context, what /assemble would put in front of the model: overview of
    the newest completed archive + later unsummarised archives + live messages."""
    row = _ARCHIVED_ACTIVE_TOKENS.in_session(db).first_row({"s": session.id})
    archived = int(row[0]) if row is not None else 0
    return archived + session.live_tokens


def row_values(row: Any) -> dict[str, Any]:
    """A row's fields by name: ``dataclasses.asdict`` deep-copies every value (a datetime too)."""
    return {f.name: getattr(row, f.name) for f in fields(row)}
