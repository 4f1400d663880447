"""What the store holds of a session's history, for assembly: the stored context to rebuild the
prompt from, and which of the host's messages are stored already."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.archives.read import store as archives_store
from app.archives.read.store import ArchiveHead
from app.db.models import AgentSession, ArchiveStatus
from app.db.uow import UnitOfWork
from app.sessions import repository as repo


@dataclass(frozen=True, slots=True)
class SessionKeys:
    session_pk: int
    tenant_id: str


@dataclass(frozen=True, slots=True)
class StoredContext:
    """The session's archives (oldest first, their place and state only), the newest completed
    one and its overview, and the (body, tokens) rows of the messages after it: unsummarised
    archives' then live ones, bodies redacted.

    ``version`` changes whenever any of that can: a message stored, a commit, an archive's
    status or completion (its overview is written with it), the session deleted and made again.
    Stored messages are never rewritten. ``rows`` is None when the reader said it holds them
    for this version."""

    archives: list[ArchiveHead]
    latest_completed: ArchiveHead | None
    rows: list[Any] | None
    overview: str = ""
    version: Hashable = ()


# Asked with a context's version before its texts are read: True when the caller holds them.
HeldVersion = Callable[[Hashable], bool]


def fingerprint_counts(
    uow: UnitOfWork, keys: SessionKeys, fingerprints: Sequence[str]
) -> dict[str, int]:
    """How many stored messages of the session (live or archived) carry each fingerprint."""
    with uow.read() as db:
        return repo.fingerprint_counts_of(db, keys.tenant_id, keys.session_pk, fingerprints)


@dataclass(frozen=True, slots=True)
class HistorySnapshot:
    """What one read transaction saw: the session's keys, how many stored messages carry each
    fingerprint asked about, and the stored context."""

    keys: SessionKeys
    counts: dict[str, int]
    context: StoredContext


def history_snapshot(
    uow: UnitOfWork,
    tenant_id: str,
    session_id: str,
    fingerprints: Sequence[str],
    held: HeldVersion | None = None,
) -> HistorySnapshot | None:
    """The fingerprint counts and the stored context in one read transaction (a pre-prompt
    assemble whose host is in step with the store needs nothing else); None when the session is
    unknown."""
    with uow.read() as db:
        session = repo.find_session(db, tenant_id, session_id)
        if session is None:
            return None
        counts = repo.fingerprint_counts_of(db, session.tenant_id, session.id, fingerprints)
        context = _stored_context_of(db, session, held)
        return HistorySnapshot(SessionKeys(session.id, session.tenant_id), counts, context)


def stored_context(
    uow: UnitOfWork, tenant_id: str, session_id: str, held: HeldVersion | None = None
) -> StoredContext | None:
    """Overview archive + later unsummarised archives + live messages, in one read transaction;
    None when the session is unknown."""
    with uow.read() as db:
        session = repo.find_session(db, tenant_id, session_id)
        if session is None:
            return None
        return _stored_context_of(db, session, held)


def _stored_context_of(
    db: Session, session: AgentSession, held: HeldVersion | None
) -> StoredContext:
    # Only the newest overview is shown: the others (a Working Memory each) are not read.
    archives = archives_store.archive_heads(db, session)
    completed = [a for a in archives if a.status == ArchiveStatus.COMPLETED]
    latest = completed[-1] if completed else None
    # Read every time (one short row): an overview rewritten in place shows at once.
    overview = archives_store.overview_of(db, latest.id) if latest is not None else ""
    version = _version(session, archives)
    if held is not None and held(version):
        return StoredContext(archives, latest, None, overview, version)
    floor = latest.archive_index if latest else 0
    unsummarised = [
        a.id for a in archives if a.archive_index > floor and a.status != ArchiveStatus.COMPLETED
    ]
    rows = archives_store.bodies_of_archives(db, unsummarised) + repo.live_bodies(db, session)
    return StoredContext(archives, latest, rows, overview, version)


def _version(session: AgentSession, archives: list[ArchiveHead]) -> Hashable:
    """What the stored context depends on: the session row (its id and birth, its last message
    and live window) and each archive's status and completion time."""
    return (
        session.id,
        session.created_at,
        session.last_seq,
        session.live_count,
        tuple((a.id, a.status, a.completed_at) for a in archives),
    )
