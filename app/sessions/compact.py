"""``POST /compact``: archive everything now, wait for the Working Memory, report honest tokens.

``firstKeptEntryId`` is a host transcript entry id (the host copies it into its own compaction
record). Compaction archives every live message, so no message is kept and the field is left out;
the archive id travels in ``details``.

When nothing is left to archive (an overflow right after another compaction), compaction waits
for the archives whose Working Memory is still being built, because they are what the next
pre-prompt assemble would return verbatim; if that shrinks nothing it says so
(``compacted: false``, reason ``nothing_to_compact``) rather than report a compaction that did not
happen.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.archives.read import store as archives_store
from app.core.clock import utcnow
from app.core.rules.bypass import is_bypassed
from app.core.threads import to_thread
from app.db.models import ArchiveStatus
from app.db.uow import UnitOfWork
from app.sessions import repository as repo
from app.sessions.commit import CommitOutcome, commit_phase1
from app.sessions.identity import SessionIdentity
from app.sessions.service import ArchiveState, wait_for_archive
from app.settings import Settings


@dataclass(frozen=True, slots=True)
class CompactInput:
    identity: SessionIdentity
    token_budget: Any = None
    current_token_count: Any = None
    custom_instructions: str | None = None
    trigger: str | None = None
    wait: bool = True
    timeout_ms: int = 120000


# The estimate of the context the next pre_prompt assemble would return for the session (the
# caller wires it: assembly sits above sessions). Called in a worker thread.
ContextEstimate = Callable[[], int]


@dataclass(frozen=True, slots=True)
class _Committed:
    tokens_before: int
    outcome: CommitOutcome
    unsummarised_pk: int | None


@dataclass(frozen=True, slots=True)
class CompactDetails:
    """``result.details`` of a compaction."""

    messages_archived: int
    archive_id: str | None = None
    # True when this compaction made the archive (its id comes first); False when it waited for
    # an archive made earlier (its id is reported after the wait).
    made_archive: bool = False
    duration_ms: int | None = None  # set when it waited
    failed: bool = False  # the archive failed or disappeared: ``error`` says why
    error: str | None = None
    memories_extracted: dict[str, int] | None = None


@dataclass(frozen=True, slots=True)
class CompactReport:
    """``result`` of a compaction: tokens before and after, the Working Memory when one was built."""

    tokens_before: int
    details: CompactDetails
    tokens_after: int | None = None
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class CompactResult:
    ok: bool
    compacted: bool
    reason: str
    result: CompactReport | None = None


async def compact_session(
    uow: UnitOfWork,
    settings: Settings,
    notify: Callable[[], None],
    req: CompactInput,
    estimate: ContextEstimate,
) -> CompactResult:
    """Commit with keep 0, then (with ``wait``) wait for the archive; every outcome of docs/api.md."""
    ident = req.identity
    if is_bypassed(settings.capture.bypass_session_patterns, ident.session_key, ident.session_id):
        return CompactResult(ok=True, compacted=False, reason="session_bypassed")
    # Before and after are measured the same way: the estimate of the assembled context.
    estimate_before = await to_thread(estimate)
    committed = await to_thread(_commit_now, uow, req, estimate_before)
    if committed is None:
        return CompactResult(ok=True, compacted=False, reason="session_not_found")
    outcome = committed.outcome
    if not outcome.archived or outcome.archive_pk is None:
        return await _compact_without_new_archive(uow, estimate, req, committed, estimate_before)
    notify()
    details = CompactDetails(
        messages_archived=outcome.messages_archived,
        archive_id=outcome.archive_id,
        made_archive=True,
    )
    if not req.wait:
        report = CompactReport(tokens_before=committed.tokens_before, details=details)
        return CompactResult(ok=True, compacted=False, reason="commit_scheduled", result=report)
    state, waited = await _wait(uow, outcome.archive_pk, req.timeout_ms)
    details = replace(details, duration_ms=waited)
    failure = _failure(state, committed.tokens_before, details)
    if failure is not None or state is None:
        return failure or CompactResult(ok=False, compacted=False, reason="commit_failed")
    tokens_after = await to_thread(estimate)
    compacted = tokens_after < committed.tokens_before
    report = CompactReport(
        tokens_before=committed.tokens_before,
        details=replace(details, memories_extracted=state.memories_extracted),
        tokens_after=tokens_after,
        summary=state.overview,
    )
    reason = "commit_completed" if compacted else "not_reduced"
    return CompactResult(ok=True, compacted=compacted, reason=reason, result=report)


async def _compact_without_new_archive(
    uow: UnitOfWork,
    estimate: ContextEstimate,
    req: CompactInput,
    committed: _Committed,
    estimate_before: int,
) -> CompactResult:
    """Nothing live to archive: finish the pending Working Memory, or say honestly that nothing shrinks."""
    tokens_before = committed.tokens_before
    details = CompactDetails(messages_archived=0)
    if committed.unsummarised_pk is not None and req.wait:
        state, waited = await _wait(uow, committed.unsummarised_pk, req.timeout_ms)
        archive_id = state.archive_id if state else None
        details = replace(details, duration_ms=waited, archive_id=archive_id)
        failure = _failure(state, tokens_before, details)
        if failure is not None:
            return failure
        tokens_after = await to_thread(estimate)
        if tokens_after < estimate_before and state is not None:
            report = CompactReport(tokens_before, details, tokens_after, state.overview)
            return CompactResult(ok=True, compacted=True, reason="commit_completed", result=report)
    reason = "no_messages" if estimate_before == 0 else "nothing_to_compact"
    report = CompactReport(tokens_before, details, tokens_after=estimate_before)
    return CompactResult(ok=True, compacted=False, reason=reason, result=report)


async def _wait(
    uow: UnitOfWork, archive_pk: int, timeout_ms: int
) -> tuple[ArchiveState | None, int]:
    loop = asyncio.get_running_loop()
    started = loop.time()
    state = await wait_for_archive(uow, archive_pk, timeout_ms / 1000)
    return state, int((loop.time() - started) * 1000)


def _failure(
    state: ArchiveState | None, tokens_before: int, details: CompactDetails
) -> CompactResult | None:
    """The answer for an archive that failed or is still running after the wait; None when completed."""
    if state is None or state.status == ArchiveStatus.FAILED:
        error = state.error if state else "archive disappeared"
        report = CompactReport(tokens_before, replace(details, failed=True, error=error))
        return CompactResult(ok=False, compacted=False, reason="commit_failed", result=report)
    if state.status != ArchiveStatus.COMPLETED:
        report = CompactReport(tokens_before, details)
        return CompactResult(ok=False, compacted=False, reason="commit_timeout", result=report)
    return None


def _commit_now(uow: UnitOfWork, req: CompactInput, estimate_before: int) -> _Committed | None:
    with uow.write() as db:
        uow.storage.locks.lock_session(db, req.identity.tenant_id, req.identity.session_id)
        session = repo.find_session(db, req.identity.tenant_id, req.identity.session_id)
        if session is None:
            return None
        given = req.current_token_count
        positive = isinstance(given, int | float) and not isinstance(given, bool) and given > 0
        outcome = commit_phase1(db, session, 0, utcnow(), req.custom_instructions)
        pending = [
            a
            for a in archives_store.archive_heads(db, session)
            if a.status in (ArchiveStatus.PENDING, ArchiveStatus.RUNNING)
        ]
        return _Committed(
            tokens_before=int(given) if positive else estimate_before,
            outcome=outcome,
            unsummarised_pk=pending[-1].id if pending else None,
        )
