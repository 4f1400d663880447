"""``POST /compact``: archive everything now, wait for the Working Memory, report honest tokens."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.assembly.service import AssembleInput, assemble_pre_prompt
from app.core.clock import utcnow
from app.db.models import ArchiveStatus
from app.db.uow import UnitOfWork
from app.sessions import repository as repo
from app.sessions.bypass import is_bypassed
from app.sessions.commit import CommitOutcome, commit_phase1
from app.sessions.identity import SessionIdentity
from app.sessions.service import wait_for_archive
from app.settings import Settings


@dataclass(frozen=True, slots=True)
class CompactInput:
    identity: SessionIdentity
    token_budget: Any = None
    current_token_count: Any = None
    custom_instructions: str | None = None
    wait: bool = True
    timeout_ms: int = 120000


async def compact_session(
    uow: UnitOfWork, settings: Settings, notify: Callable[[], None], req: CompactInput
) -> dict[str, Any]:
    """Commit with keep 0, then (with ``wait``) wait for the archive; every outcome of api.md."""
    ident = req.identity
    if is_bypassed(settings.capture.bypass_session_patterns, ident.session_key, ident.session_id):
        return {"ok": True, "compacted": False, "reason": "session_bypassed"}
    # Before and after are measured the same way: the estimate of the assembled context.
    estimate_before = await asyncio.to_thread(_assembled_tokens, uow, settings, req)
    committed = await asyncio.to_thread(_commit_now, uow, req, estimate_before)
    if committed is None:
        return {"ok": True, "compacted": False, "reason": "session_not_found"}
    tokens_before, outcome = committed
    if not outcome.archived or outcome.archive_pk is None:
        return {"ok": True, "compacted": False, "reason": "no_messages", "result": {"tokensBefore": tokens_before}}
    notify()
    details: dict[str, Any] = {"archiveId": outcome.archive_id, "messagesArchived": outcome.messages_archived}
    if not req.wait:
        return {"ok": True, "compacted": False, "reason": "commit_scheduled", "result": {"tokensBefore": tokens_before, "details": details}}
    started = asyncio.get_running_loop().time()
    state = await wait_for_archive(uow, outcome.archive_pk, req.timeout_ms / 1000)
    details["durationMs"] = int((asyncio.get_running_loop().time() - started) * 1000)
    if state is None or state.status == ArchiveStatus.FAILED:
        details["error"] = state.error if state else "archive disappeared"
        return {"ok": False, "compacted": False, "reason": "commit_failed", "result": {"tokensBefore": tokens_before, "details": details}}
    if state.status != ArchiveStatus.COMPLETED:
        return {"ok": False, "compacted": False, "reason": "commit_timeout", "result": {"tokensBefore": tokens_before, "details": details}}
    tokens_after = await asyncio.to_thread(_assembled_tokens, uow, settings, req)
    details["memoriesExtracted"] = state.memories_extracted
    compacted = tokens_after < tokens_before
    return {
        "ok": True,
        "compacted": compacted,
        "reason": "commit_completed" if compacted else "not_reduced",
        "result": {
            "summary": state.overview,
            "firstKeptEntryId": state.archive_id,
            "tokensBefore": tokens_before,
            "tokensAfter": tokens_after,
            "details": details,
        },
    }


def _commit_now(uow: UnitOfWork, req: CompactInput, estimate_before: int) -> tuple[int, CommitOutcome] | None:
    with uow.write() as db:
        session = repo.find_session(db, req.identity.tenant_id, req.identity.session_id)
        if session is None:
            return None
        given = req.current_token_count
        positive = isinstance(given, int | float) and not isinstance(given, bool) and given > 0
        tokens_before = int(given) if positive else estimate_before
        return tokens_before, commit_phase1(db, session, 0, utcnow(), req.custom_instructions)


def _assembled_tokens(uow: UnitOfWork, settings: Settings, req: CompactInput) -> int:
    view = assemble_pre_prompt(
        uow, settings, AssembleInput(identity=req.identity, messages=[], phase="pre_prompt", token_budget=req.token_budget), 0.0
    )
    return int(view["estimatedTokens"])
