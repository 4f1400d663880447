"""``POST /assemble``: rebuild the history (pre_prompt) or inject recall (tool_loop).

docs/lifecycle.md, Assemble. A passthrough returns the host's messages unchanged, as a new list.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass, field, replace
from typing import Any

from app.assembly.budget import message_budget, reserved_tokens, resolve_budget
from app.assembly.guide import SESSION_CONTEXT_GUIDE, archive_index_line
from app.assembly.injection import recall_query
from app.assembly.provider_validity import make_provider_valid
from app.assembly.reconcile import HostHistoryNeeded, reconcile_and_read
from app.assembly.result import (
    AssembleInput,
    AssembleResult,
    elapsed_ms,
    estimate,
    passthrough,
)
from app.assembly.steps import fit_steps_to_budget
from app.assembly.timestamps import summary_timestamp, with_timestamps
from app.assembly.tool_loop import MIN_QUERY_CHARS, assemble_tool_loop, recall_request
from app.core.bypass import is_bypassed
from app.core.canonical_json import decode_many
from app.core.messages import Message, message_tokens
from app.core.recall import RecallBlock, RecallSource
from app.core.redaction import redact_text
from app.core.sanitize import contains_injected_context, is_conversation_message
from app.core.tokens import estimate_text_tokens
from app.db.models import ArchiveStatus
from app.db.uow import UnitOfWork
from app.sessions.history import StoredContext
from app.sessions.identity import SessionIdentity
from app.settings import Settings

SUMMARY_PREFIX = "[Session History Summary]\n"


@dataclass(slots=True)
class _Stored:
    overview: str = ""
    messages: list[Message] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    archives: dict[str, Any] = field(default_factory=dict)
    known: bool = False
    # (archive id, message count) of the archives the summary stands for, oldest first.
    summarised: list[tuple[str, int]] = field(default_factory=list)


async def assemble(
    uow: UnitOfWork, settings: Settings, recall: RecallSource, req: AssembleInput
) -> AssembleResult:
    """Dispatch on the phase; never raises for recall problems."""
    started = time.perf_counter()
    ident = req.identity
    if is_bypassed(settings.capture.bypass_session_patterns, ident.session_key, ident.session_id):
        return passthrough(req, "session_bypassed", started)
    if req.phase == "pre_prompt":
        result = await asyncio.to_thread(assemble_pre_prompt, uow, settings, req, started)
        return await _with_memories(settings, recall, req, result)
    return await assemble_tool_loop(settings, recall, req, started)


async def _with_memories(
    settings: Settings, recall: RecallSource, req: AssembleInput, result: AssembleResult
) -> AssembleResult:
    """pre_prompt extras: tool usage memories in the system prompt, recall for the prompt as
    ``prependContext`` (docs/lifecycle.md, pre_prompt step 7)."""
    timeout_s = settings.assemble.recall_timeout_ms / 1000
    if req.available_tools:
        result = await _with_tool_memories(recall, req, result, timeout_s)
    query = await asyncio.to_thread(recall_query, req.prompt or "")
    if (
        len(query) >= MIN_QUERY_CHARS
        and not contains_injected_context(req.prompt or "")
        and req.options.get("autoRecall", settings.assemble.auto_recall)
    ):
        request = recall_request(req, query)
        recalled: RecallBlock | None
        try:
            recalled = await asyncio.wait_for(recall.recall(request), timeout=timeout_s)
        except Exception:  # noqa: BLE001 - recall never fails the hook (docs/quality.md, Degradation)
            recalled = None
        if recalled is not None and recalled.text:
            found = {"query": query, **recalled.diagnostics, "injectedChars": len(recalled.text)}
            diagnostics = {**result.diagnostics, "recall": found}
            result = replace(result, prepend_context=recalled.text, diagnostics=diagnostics)
    return result


async def _with_tool_memories(
    recall: RecallSource, req: AssembleInput, result: AssembleResult, timeout_s: float
) -> AssembleResult:
    """The available tools' usage memories, added to the system prompt."""
    ident = req.identity
    try:
        block = await asyncio.wait_for(
            recall.tool_memory(ident.tenant_id, ident.agent_id, req.available_tools), timeout_s
        )
    except Exception:  # noqa: BLE001 - a memory lookup never fails the hook
        block = ""
    if not block:
        return result
    existing = result.system_prompt_addition
    return replace(
        result,
        system_prompt_addition=f"{existing}\n\n{block}" if existing else block,
        estimated_tokens=result.estimated_tokens + estimate_text_tokens(block),
    )


def assemble_pre_prompt(
    uow: UnitOfWork, settings: Settings, req: AssembleInput, started: float
) -> AssembleResult:
    """History rebuild: summary first, then unsummarised and live messages, within the budget."""
    try:
        reconciled, context = reconcile_and_read(
            uow, settings, req.identity, req.messages, req.omitted_messages
        )
    except HostHistoryNeeded:
        return passthrough(req, "host_history_needed", started)
    stored = _stored_from(context)
    if not stored.known or (not stored.overview and not stored.messages):
        return passthrough(req, "no_stored_context", started)
    # Stored bodies are read in their redacted form (docs/quality.md, Security).
    candidates = stored.messages
    budget = resolve_budget(req.token_budget)
    overview, guide = stored.overview, SESSION_CONTEXT_GUIDE if stored.overview else ""
    summary, overview_tokens = _summary_message(overview, candidates, stored.summarised)
    guide_tokens = estimate_text_tokens(guide)
    overview_dropped = bool(summary) and overview_tokens + guide_tokens > budget - reserved_tokens(
        budget
    )
    if overview_dropped:
        summary, guide, overview_tokens, guide_tokens = None, "", 0, 0
    costs = stored.tokens
    kept, dropped = fit_steps_to_budget(
        candidates, costs, message_budget(budget, guide_tokens, overview_tokens)
    )
    assembled = ([summary] if summary else []) + [candidates[i] for i in kept]
    output = with_timestamps(make_provider_valid(assembled))
    diagnostics: dict[str, Any] = {
        "phase": "pre_prompt",
        "mode": "assembled",
        "reason": "overview_exceeds_budget" if overview_dropped else "ok",
        "archives": {**stored.archives, "overviewIncluded": summary is not None},
        "messages": {
            "input": len(req.messages),
            "omitted": req.omitted_messages,
            "stored": len(stored.messages),
            "reconciled": reconciled,
            "returned": len(output),
            "dropped": dropped,
        },
        "budget": {"total": budget, "reserved": int(reserved_tokens(budget))},
    }
    known = dict(zip(map(id, candidates), costs, strict=True))
    if summary:
        known[id(summary)] = overview_tokens
    tokens = estimate(output, known) + guide_tokens
    diagnostics["durationMs"] = elapsed_ms(started)
    return AssembleResult(output, tokens, diagnostics, system_prompt_addition=guide or None)


def _stored_from(context: StoredContext | None) -> _Stored:
    """Overview of the newest completed archive + later unsummarised archives + live messages."""
    if context is None:
        return _Stored()
    archives, latest, rows = context.archives, context.latest_completed, context.rows
    floor = latest.archive_index if latest else 0
    statuses = [a.status for a in archives]
    # Host bookkeeping stored by earlier releases is never shown to the model.
    bodies = decode_many([row.body for row in rows])
    loaded = [
        (message, row.tokens)
        for message, row in zip(bodies, rows, strict=True)
        if is_conversation_message(message)
    ]
    return _Stored(
        overview=context.overview,  # redacted with the summary text (_summary_content)
        messages=[message for message, _ in loaded],  # redacted bodies (see StoredMessage)
        tokens=[tokens for _, tokens in loaded],
        archives={
            "total": len(archives),
            "completed": statuses.count(ArchiveStatus.COMPLETED),
            "pending": statuses.count(ArchiveStatus.PENDING)
            + statuses.count(ArchiveStatus.RUNNING),
            "failed": statuses.count(ArchiveStatus.FAILED),
        },
        known=True,
        summarised=[(a.archive_id, a.message_count) for a in archives if a.archive_index <= floor],
    )


def assembled_tokens(
    uow: UnitOfWork, settings: Settings, ident: SessionIdentity, token_budget: Any
) -> int:
    """The estimated tokens of what a pre_prompt assemble would return now (no host messages)."""
    req = AssembleInput(identity=ident, messages=[], phase="pre_prompt", token_budget=token_budget)
    return assemble_pre_prompt(uow, settings, req, 0.0).estimated_tokens


def _summary_message(
    overview: str, after: list[Message], archives: list[tuple[str, int]]
) -> tuple[Message | None, int]:
    """The Working Memory as the first user message, dated with the messages it precedes, with
    the ids of the archives behind it (the model needs them to read originals back); its tokens."""
    if not overview:
        return None, 0
    text, tokens = _summary_content(overview, archive_index_line(archives))
    return {"role": "user", "content": text, "timestamp": summary_timestamp(after)}, tokens


@functools.lru_cache(maxsize=64)
def _summary_content(overview: str, index_line: str) -> tuple[str, int]:
    """The summary's text, redacted, and its tokens. Remembered for the latest overviews: a
    session's overview changes once per commit, but is read on every assemble, and redacting and
    weighing 10 KB of it costs about a millisecond. A pure function of its arguments."""
    text = SUMMARY_PREFIX + redact_text(overview).rstrip("\n") + index_line
    return text, message_tokens({"role": "user", "content": text})


__all__ = [
    "AssembleInput",
    "AssembleResult",
    "assemble",
    "assemble_tool_loop",
    "assembled_tokens",
    "passthrough",
]
