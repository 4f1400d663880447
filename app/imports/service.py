"""Storing transcript sessions as the hooks would have stored them (docs/api.md, Import).

Each batch of a session (whole turns, a few hundred messages) goes through capture, the code of
``/commit-turn``: the same sanitation, redaction and fingerprints, one write transaction each, the
commit threshold checked after each batch as after each turn. Capture stores only the messages
whose fingerprint the session does not hold yet (counting repeats), so importing again stores
nothing, and an import killed half-way goes on where it stopped when run again. Then everything
older than the live window is archived, and Phase 2 builds the Working Memory and the search facts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from app.core.rules.bypass import is_bypassed, resolve_agent_id
from app.db.uow import UnitOfWork
from app.errors import NotFound
from app.imports.plan import batches, fingerprints, plan, without_heartbeats
from app.imports.records import Problem, ReadResult, TranscriptSession
from app.sessions.capture import TurnInput, capture_turn
from app.sessions.identity import SessionIdentity
from app.sessions.service import commit_session, stored_fingerprint_counts
from app.settings import Settings

DEFAULT_BATCH = 256
REORDERING = "session already holds later messages (captured live): importing would reorder it"

Progress = Callable[[int], None]


@dataclass
class ImportSummary:
    sessions: int = 0  # sessions that hold messages of the import
    messages: int = 0  # messages stored now
    duplicates: int = 0  # messages that were stored already
    archives: int = 0  # archives made (Phase 2 builds their Working Memory)
    skipped: dict[str, int] = field(default_factory=dict)  # lines not stored, by reason
    problems: list[Problem] = field(default_factory=list)  # unreadable lines, by file and line
    refused: dict[str, str] = field(default_factory=dict)  # session id -> why it was not imported

    def skip(self, reason: str, count: int) -> None:
        if count > 0:
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    def as_json(self) -> dict[str, object]:
        """The summary as the command prints it and the HTTP import answers it."""
        return {
            "sessions": self.sessions,
            "messages": self.messages,
            "duplicates": self.duplicates,
            "archives": self.archives,
            "skipped": self.skipped,
            "problems": [asdict(p) for p in self.problems],
            "refused": self.refused,
        }


@dataclass(frozen=True, slots=True)
class ImportOptions:
    tenant_id: str
    batch: int = DEFAULT_BATCH
    user_id: str = "default"


def total_messages(read: ReadResult) -> int:
    return sum(len(s.messages) for s in read.sessions)


def import_sessions(
    uow: UnitOfWork,
    settings: Settings,
    read: ReadResult,
    options: ImportOptions,
    progress: Progress | None = None,
) -> ImportSummary:
    """Store every session of ``read``; the counts of what happened."""
    summary = ImportSummary(problems=list(read.problems))
    for session in read.sessions:
        summary.problems.extend(session.problems)
        for reason, count in session.skipped.items():
            summary.skip(reason, count)
        _import_session(uow, settings, session, options, summary, progress or _ignore)
    return summary


def _import_session(
    uow: UnitOfWork,
    settings: Settings,
    session: TranscriptSession,
    options: ImportOptions,
    summary: ImportSummary,
    progress: Progress,
) -> None:
    identity = SessionIdentity(
        tenant_id=options.tenant_id,
        session_id=session.session_id,
        session_key=session.session_key,
        agent_id=resolve_agent_id(session.agent_id, session.session_key, None),
        user_id=options.user_id,
    )
    count = len(session.messages)
    if is_bypassed(
        settings.capture.bypass_session_patterns, session.session_key, session.session_id
    ):
        summary.skip("session bypassed by CE_CAPTURE__BYPASS_SESSION_PATTERNS", count)
        progress(count)
        return
    messages, heartbeats = without_heartbeats(session.messages)
    summary.skip("heartbeat turn", heartbeats)
    fps = fingerprints(messages)
    summary.skip("nothing left after sanitation", sum(1 for fp in fps if fp is None))
    stored = stored_fingerprint_counts(
        uow, identity.tenant_id, identity.session_id, [fp for fp in fps if fp is not None]
    )
    found = plan(fps, stored)
    if found.reordering:
        summary.refused[session.session_id] = REORDERING
        progress(count)
        return
    summary.duplicates += sum(1 for fp in fps if fp is not None) - found.new
    progress(heartbeats)
    times = [m.at for m in messages]
    bodies = [m.message for m in messages]
    for start, end in batches(messages, max(1, options.batch)):
        if found.first_new is not None and end > found.first_new:
            turn = TurnInput(identity, bodies[:end], start, message_times=times[:end])
            result = capture_turn(uow, settings, turn)
            summary.messages += result.ingested
            summary.archives += int(result.archive_scheduled)
        progress(end - start)
    if stored or found.new:
        summary.sessions += 1
        summary.archives += _archive_older(uow, settings, identity)


def _archive_older(uow: UnitOfWork, settings: Settings, identity: SessionIdentity) -> int:
    """Archive what is older than the live window; 1 when an archive was made."""
    try:
        outcome = commit_session(
            uow, identity.tenant_id, identity.session_id, settings.commit.keep_recent_count
        )
    except NotFound:
        return 0
    return int(outcome.archived)


def _ignore(_count: int) -> None:
    return None
