"""Hook calls per session: record each, and say whether the session's hooks still pair up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.db.models import AgentSession, SessionHook
from app.db.uow import UnitOfWork
from app.sessions import hooks_repository as hooks_repo
from app.sessions import repository as repo
from app.sessions.hook_health import HookRecord, hook_flags, streaks_after
from app.sessions.identity import SessionIdentity


@dataclass(frozen=True, slots=True)
class HookCall:
    """One hook as it reached the service, with the versions the plugin sent (None: not sent)."""

    identity: SessionIdentity
    hook: str
    host_version: str | None = None
    plugin_version: str | None = None


@dataclass(frozen=True, slots=True)
class HookHealth:
    """A session's hook records, newest versions, and what is wrong with them."""

    records: list[HookRecord]
    flags: list[str]

    @property
    def newest(self) -> HookRecord | None:
        return max(self.records, key=lambda r: r.last_at, default=None)


@dataclass(frozen=True, slots=True)
class RecordedCall:
    health: HookHealth
    # Flags the session did not have before this call (each is logged and counted once).
    raised: list[str]


NOT_STORED = RecordedCall(HookHealth([], []), [])


def record_hook_call(uow: UnitOfWork, call: HookCall, now: datetime | None = None) -> RecordedCall:
    """Count the call and update the streaks, in one write. A session the service does not
    hold is not recorded (hooks never create one: docs/lifecycle.md); its calls still count in
    /metrics."""
    return record_hook_calls(uow, [NotedCalls(call, 1, now or utcnow())])


@dataclass(frozen=True, slots=True)
class NotedCalls:
    """``count`` calls of one hook of one session, the last at ``at`` with ``call``'s versions."""

    call: HookCall
    count: int
    at: datetime


def record_hook_calls(uow: UnitOfWork, noted: list[NotedCalls]) -> RecordedCall:
    """Record calls of one session in the order given, in one write; what the last left. Calls
    of a hook whose streaks a repeat leaves as they are (the tool-loop assemble's) can be counted
    together."""
    if not noted:
        return NOT_STORED
    ident = noted[0].call.identity
    with uow.write() as db:
        uow.storage.locks.lock_session(db, ident.tenant_id, ident.session_id)
        session = repo.find_session(db, ident.tenant_id, ident.session_id)
        if session is None:
            return NOT_STORED
        rows = hooks_repo.hook_rows(db, session.id)
        before = hook_flags(_records(rows), noted[-1].at, 0)
        for calls in noted:
            streaks = streaks_after(calls.call.hook, {row.hook: row.streak for row in rows})
            versions = (calls.call.host_version, calls.call.plugin_version)
            hooks_repo.save_hook_call(
                db, session, rows, calls.call.hook, streaks, calls.at, versions, calls.count
            )
            db.flush()
            rows = hooks_repo.hook_rows(db, session.id)
        health = _health(db, session, noted[-1].at, 0)
    return RecordedCall(health, [flag for flag in health.flags if flag not in before])


def session_hook_health(
    db: Session, session: AgentSession, silent_after_s: float, now: datetime | None = None
) -> HookHealth:
    """The session's hook records and flags, in the caller's transaction."""
    return _health(db, session, now or utcnow(), silent_after_s)


def _health(db: Session, session: AgentSession, now: datetime, silent_after_s: float) -> HookHealth:
    records = _records(hooks_repo.hook_rows(db, session.id))
    return HookHealth(records, hook_flags(records, now, silent_after_s))


def _records(rows: list[SessionHook]) -> list[HookRecord]:
    return [
        HookRecord(
            hook=row.hook,
            calls=int(row.calls),
            streak=int(row.streak),
            first_at=row.first_at,
            last_at=row.last_at,
            host_version=row.host_version,
            plugin_version=row.plugin_version,
        )
        for row in rows
    ]
