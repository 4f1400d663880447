"""``POST /assemble``: rebuild the history (pre_prompt) or inject recall (tool_loop).

lifecycle.md, Assemble. A passthrough returns the host's messages unchanged, as a new list.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from app.assembly.budget import message_budget, reserved_tokens, resolve_budget
from app.assembly.guide import SESSION_CONTEXT_GUIDE, archive_index_line
from app.assembly.injection import (
    append_envelope_message,
    append_to_last_message,
    latest_user_query,
    latest_user_text,
    prepend_to_latest_user,
    recall_query,
)
from app.assembly.provider_validity import make_provider_valid
from app.assembly.recall import RecallBlock, RecallRequest, RecallSource, RecallUnavailable
from app.assembly.reconcile import capture_unstored_tail
from app.assembly.steps import fit_steps_to_budget
from app.assembly.timestamps import summary_timestamp, with_timestamps
from app.core.bypass import is_bypassed, is_cron_session
from app.core.messages import Message, message_tokens, role_of
from app.core.redaction import redact_text
from app.core.sanitize import contains_injected_context, is_conversation_message
from app.core.tokens import estimate_text_tokens
from app.db.models import ArchiveStatus
from app.db.uow import UnitOfWork
from app.sessions.history import stored_context
from app.sessions.identity import SessionIdentity
from app.settings import Settings

SUMMARY_PREFIX = "[Session History Summary]\n"
MIN_QUERY_CHARS = 5


@dataclass(frozen=True, slots=True)
class AssembleInput:
    identity: SessionIdentity
    messages: list[Any]
    phase: str
    token_budget: Any = None
    prompt: str | None = None
    available_tools: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    runtime_context: dict[str, Any] | None = None


@dataclass(slots=True)
class _Stored:
    overview: str = ""
    messages: list[Message] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    archives: dict[str, Any] = field(default_factory=dict)
    known: bool = False
    # (archive id, message count) of the archives the summary stands for, oldest first.
    summarised: list[tuple[str, int]] = field(default_factory=list)


def passthrough(req: AssembleInput, reason: str, started: float, **extra: Any) -> dict[str, Any]:
    """The host's messages unchanged (a new list) with their estimate."""
    messages = list(req.messages)
    diagnostics = {"phase": req.phase, "mode": "passthrough", "reason": reason, **extra}
    diagnostics["durationMs"] = _elapsed_ms(started)
    return {
        "messages": messages,
        "estimatedTokens": _estimate(messages),
        "diagnostics": diagnostics,
    }


async def assemble(
    uow: UnitOfWork, settings: Settings, recall: RecallSource, req: AssembleInput
) -> dict[str, Any]:
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
    settings: Settings, recall: RecallSource, req: AssembleInput, result: dict[str, Any]
) -> dict[str, Any]:
    """pre_prompt extras: tool usage memories in the system prompt, recall for the prompt as
    ``prependContext`` (lifecycle.md, pre_prompt step 7)."""
    ident = req.identity
    timeout_s = settings.assemble.recall_timeout_ms / 1000
    if req.available_tools:
        try:
            block = await asyncio.wait_for(
                recall.tool_memory(ident.tenant_id, ident.agent_id, req.available_tools), timeout_s
            )
        except Exception:  # noqa: BLE001 - a memory lookup never fails the hook
            block = ""
        if block:
            existing = result.get("systemPromptAddition")
            result["systemPromptAddition"] = f"{existing}\n\n{block}" if existing else block
            result["estimatedTokens"] += estimate_text_tokens(block)
    query = await asyncio.to_thread(recall_query, req.prompt or "")
    if (
        len(query) >= MIN_QUERY_CHARS
        and not contains_injected_context(req.prompt or "")
        and req.options.get("autoRecall", settings.assemble.auto_recall)
    ):
        request = RecallRequest(
            tenant_id=ident.tenant_id,
            user_id=ident.user_id,
            agent_id=ident.agent_id,
            query=query,
            is_cron=is_cron_session(ident.session_key, req.runtime_context),
            options=req.options,
        )
        recalled: RecallBlock | None
        try:
            recalled = await asyncio.wait_for(recall.recall(request), timeout=timeout_s)
        except Exception:  # noqa: BLE001 - recall never fails the hook (quality.md, Degradation)
            recalled = None
        if recalled is not None and recalled.text:
            result["prependContext"] = recalled.text
            result["diagnostics"]["recall"] = {
                "query": query,
                **recalled.diagnostics,
                "injectedChars": len(recalled.text),
            }
    return result


def assemble_pre_prompt(
    uow: UnitOfWork, settings: Settings, req: AssembleInput, started: float
) -> dict[str, Any]:
    """History rebuild: summary first, then unsummarised and live messages, within the budget."""
    reconciled = capture_unstored_tail(uow, settings, req.identity, req.messages)
    stored = _load_stored(uow, req.identity)
    if not stored.known or (not stored.overview and not stored.messages):
        return passthrough(req, "no_stored_context", started)
    # Stored bodies are read in their redacted form (quality.md, Security).
    candidates = stored.messages
    budget = resolve_budget(req.token_budget)
    overview, guide = stored.overview, SESSION_CONTEXT_GUIDE if stored.overview else ""
    summary = _summary_message(overview, candidates, stored.summarised)
    overview_tokens = message_tokens(summary) if summary else 0
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
    result: dict[str, Any] = {
        "messages": output,
        "estimatedTokens": _estimate(output, dict(zip(map(id, candidates), costs, strict=True)))
        + guide_tokens,
        "diagnostics": {
            "phase": "pre_prompt",
            "mode": "assembled",
            "reason": "overview_exceeds_budget" if overview_dropped else "ok",
            "archives": {**stored.archives, "overviewIncluded": summary is not None},
            "messages": {
                "input": len(req.messages),
                "stored": len(stored.messages),
                "reconciled": reconciled,
                "returned": len(output),
                "dropped": dropped,
            },
            "budget": {"total": budget, "reserved": int(reserved_tokens(budget))},
        },
    }
    if guide:
        result["systemPromptAddition"] = guide
    result["diagnostics"]["durationMs"] = _elapsed_ms(started)
    return result


async def assemble_tool_loop(
    settings: Settings, recall: RecallSource, req: AssembleInput, started: float
) -> dict[str, Any]:
    """Recall injection (lifecycle.md, tool_loop phase).

    Older hosts end ``messages`` with the current user message: the envelope is prepended to it.
    The 2026.9 host sends the history before the current turn and the current message only as
    ``prompt``, then appends the turn itself: ``prompt`` is the query and the envelope goes in a
    user message of its own at the end of the history, the one field of the answer that host reads.
    """
    messages = req.messages
    tail_is_user = (
        bool(messages) and isinstance(messages[-1], dict) and role_of(messages[-1]) == "user"
    )
    prompt = req.prompt or ""
    if not tail_is_user and not prompt.strip():
        return await _skill_memory_or_passthrough(recall, req, started)
    if not req.options.get("autoRecall", settings.assemble.auto_recall):
        return passthrough(req, "recall_disabled", started)
    if contains_injected_context(latest_user_text(messages) if tail_is_user else prompt):
        return passthrough(
            req, "already_injected", started, recall={"experience": _gate("already_injected")}
        )
    # CPU work on a long message runs in a thread.
    query = await asyncio.to_thread(
        latest_user_query, messages if tail_is_user else [{"role": "user", "content": prompt}]
    )
    if len(query) < MIN_QUERY_CHARS:
        return passthrough(
            req,
            "query_too_short",
            started,
            recall={"query": query, "experience": _gate("query_too_short")},
        )
    ident = req.identity
    request = RecallRequest(
        tenant_id=ident.tenant_id,
        user_id=ident.user_id,
        agent_id=ident.agent_id,
        query=query,
        is_cron=is_cron_session(ident.session_key, req.runtime_context),
        options=req.options,
    )
    timeout_s = settings.assemble.recall_timeout_ms / 1000
    try:
        block = await asyncio.wait_for(recall.recall(request), timeout=timeout_s)
    except RecallUnavailable:
        return passthrough(req, "recall_unavailable", started, recall={"query": query})
    except TimeoutError:
        return passthrough(
            req, "recall_timeout", started, recall={"query": query, "timedOut": True}
        )
    except Exception:  # noqa: BLE001 - recall must never fail the hook (quality.md, Degradation)
        return passthrough(req, "recall_failed", started, recall={"query": query})
    if block is None or not block.text:
        # The experience gate's verdict is reported with or without hits (api.md, diagnostics.recall).
        return passthrough(
            req,
            "no_recall_hits",
            started,
            recall={"query": query, **(block.diagnostics if block else {})},
        )
    output = (
        prepend_to_latest_user(messages, block.text)
        if tail_is_user
        else append_envelope_message(messages, block.text)
    )
    diagnostics = {
        "phase": "tool_loop",
        "mode": "assembled",
        "reason": "ok",
        "recall": {"query": query, **block.diagnostics, "injectedChars": len(block.text)},
        "durationMs": _elapsed_ms(started),
    }
    return {"messages": output, "estimatedTokens": _estimate(output), "diagnostics": diagnostics}


def _gate(reason: str) -> dict[str, Any]:
    """diagnostics.recall.experience when the gate is decided before recall runs."""
    return {"gate": reason, "score": 0, "hits": 0}


async def _skill_memory_or_passthrough(
    recall: RecallSource, req: AssembleInput, started: float
) -> dict[str, Any]:
    """recall.md, Skill memory: a SKILL.md read gets the skill's history appended to its result."""
    ident = req.identity
    try:
        block = await asyncio.wait_for(
            recall.skill_memory(ident.tenant_id, ident.agent_id, req.messages), timeout=5
        )
    except Exception:  # noqa: BLE001 - never fail the hook over a memory lookup
        block = ""
    if not block:
        return passthrough(req, "non_user_tail", started)
    output = append_to_last_message(req.messages, block)
    diagnostics = {
        "phase": "tool_loop",
        "mode": "assembled",
        "reason": "skill_memory",
        "durationMs": _elapsed_ms(started),
    }
    return {"messages": output, "estimatedTokens": _estimate(output), "diagnostics": diagnostics}


def _load_stored(uow: UnitOfWork, ident: SessionIdentity) -> _Stored:
    """Overview of the newest completed archive + later unsummarised archives + live messages."""
    context = stored_context(uow, ident.tenant_id, ident.session_id)
    if context is None:
        return _Stored()
    archives, latest, rows = context.archives, context.latest_completed, context.rows
    floor = latest.archive_index if latest else 0
    statuses = [a.status for a in archives]
    # Host bookkeeping stored by earlier releases is never shown to the model.
    loaded = [
        (message, row.tokens)
        for row in rows
        if is_conversation_message(message := json.loads(row.body))
    ]
    return _Stored(
        overview=redact_text(latest.overview) if latest else "",
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
    return int(assemble_pre_prompt(uow, settings, req, 0.0)["estimatedTokens"])


def _summary_message(
    overview: str, after: list[Message], archives: list[tuple[str, int]]
) -> Message | None:
    """The Working Memory as the first user message, dated with the messages it precedes, with
    the ids of the archives behind it: the model needs them to read originals back."""
    if not overview:
        return None
    text = SUMMARY_PREFIX + overview.rstrip("\n") + archive_index_line(archives)
    return {"role": "user", "content": text, "timestamp": summary_timestamp(after)}


def _estimate(messages: list[Any], known: dict[int, int] | None = None) -> int:
    """Estimated tokens, reusing the costs already known for these very message objects."""
    known = known or {}
    return sum(
        known[id(m)] if id(m) in known else message_tokens(m)
        for m in messages
        if isinstance(m, dict)
    )


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


__all__ = ["AssembleInput", "assemble", "assembled_tokens", "passthrough"]
