"""``POST /assemble``: rebuild the history (pre_prompt) or inject recall (tool_loop).

docs/lifecycle.md, Assemble. A passthrough returns the host's messages unchanged, as a new list.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from app.assembly.budget import reserved_tokens, resolve_budget
from app.assembly.guide import SESSION_CONTEXT_GUIDE
from app.assembly.history_cache import HistoryCache
from app.assembly.rebuild import StoredHistory, fitted, stored_history
from app.assembly.reconcile import HostHistoryNeeded, reconcile_and_read
from app.assembly.result import AssembleInput, AssembleResult, elapsed_ms, passthrough
from app.assembly.tool_loop import MIN_QUERY_CHARS, assemble_tool_loop, query_of, recall_request
from app.core.recall import RecallBlock, RecallSource
from app.core.rules.bypass import is_bypassed
from app.core.rules.sanitize import contains_injected_context
from app.core.rules.tokens import estimate_text_tokens
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.sessions.history import StoredContext
from app.sessions.identity import SessionIdentity
from app.settings import Settings

# Per process, shared by the requests (app/assembly/history_cache.py).
StoredHistoryCache = HistoryCache[StoredHistory]


async def assemble(
    uow: UnitOfWork,
    settings: Settings,
    recall: RecallSource,
    req: AssembleInput,
    cache: StoredHistoryCache | None = None,
) -> AssembleResult:
    """Dispatch on the phase; never raises for recall problems."""
    started = time.perf_counter()
    ident = req.identity
    if is_bypassed(settings.capture.bypass_session_patterns, ident.session_key, ident.session_id):
        return passthrough(req, "session_bypassed", started)
    if req.phase == "pre_prompt":
        result = await to_thread(assemble_pre_prompt, uow, settings, req, started, cache)
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
    query = await query_of(req.prompt or "")
    if (
        len(query) >= MIN_QUERY_CHARS
        and not contains_injected_context(req.prompt or "")
        and req.options.get("autoRecall", settings.assemble.auto_recall)
    ):
        # The 2026.9 host ignores prependContext and reads recall from the tool_loop answer:
        # archived turns are searched here only for a client that injects prependContext.
        archives = _archives_before_prompt(req.options)
        request = await to_thread(
            recall_request, settings, req, query, result.messages, 0, archives
        )
        if req.tool_loop_follows and not archives:
            recall.prepare(request, req.identity.session_id)
        recalled: RecallBlock | None
        try:
            recalled = await asyncio.wait_for(recall.recall(request), timeout=timeout_s)
        except Exception:  # noqa: BLE001 - recall never fails the hook (docs/quality.md, Degradation)
            recalled = None
        if recalled is not None and recalled.text:
            found = {
                "query": request.query,
                **recalled.diagnostics,
                "injectedChars": len(recalled.text),
            }
            diagnostics = {**result.diagnostics, "recall": found}
            result = replace(result, prepend_context=recalled.text, diagnostics=diagnostics)
    return result


def _archives_before_prompt(options: dict[str, Any]) -> bool:
    given = options.get("archiveRecall")
    return isinstance(given, dict) and given.get("prePrompt") is True


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
    uow: UnitOfWork,
    settings: Settings,
    req: AssembleInput,
    started: float,
    cache: StoredHistoryCache | None = None,
) -> AssembleResult:
    """History rebuild: summary first, then unsummarised and live messages, within the budget."""
    ident = req.identity
    held = _Held(cache, (ident.tenant_id, ident.session_id)) if cache is not None else None
    try:
        reconciled, context = reconcile_and_read(
            uow, settings, ident, req.messages, req.omitted_messages, held
        )
    except HostHistoryNeeded:
        return passthrough(req, "host_history_needed", started)
    stored = _stored_of(context, held)
    if not stored.known or (not stored.overview and not stored.messages):
        # With the guide, as every assembled answer: the system prompt never changes mid-session.
        empty = passthrough(req, "no_stored_context", started)
        return replace(
            empty,
            system_prompt_addition=SESSION_CONTEXT_GUIDE,
            estimated_tokens=empty.estimated_tokens + estimate_text_tokens(SESSION_CONTEXT_GUIDE),
        )
    # Stored bodies are read in their redacted form (docs/quality.md, Security).
    budget = resolve_budget(req.token_budget)
    fit = fitted(stored, budget)
    diagnostics: dict[str, Any] = {
        "phase": "pre_prompt",
        "mode": "assembled",
        "reason": "overview_exceeds_budget" if fit.overview_dropped else "ok",
        "archives": {**stored.archives, "overviewIncluded": fit.overview_included},
        "messages": {
            "input": len(req.messages),
            "omitted": req.omitted_messages,
            "stored": len(stored.messages),
            "reconciled": reconciled,
            "returned": len(fit.messages),
            "dropped": fit.dropped,
        },
        "budget": {"total": budget, "reserved": int(reserved_tokens(budget))},
        "durationMs": elapsed_ms(started),
    }
    # A new list: the fit may be shared with other requests.
    return AssembleResult(
        list(fit.messages), fit.tokens, diagnostics, system_prompt_addition=fit.guide or None
    )


class _Held:
    """Asked by the store with the context's version: takes the cached history for it, if any."""

    def __init__(self, cache: StoredHistoryCache, key: tuple[str, str]) -> None:
        self.cache, self.key = cache, key
        self.value: StoredHistory | None = None

    def __call__(self, version: Hashable) -> bool:
        self.value = self.cache.get(self.key, version)
        return self.value is not None


def _stored_of(context: StoredContext | None, held: _Held | None) -> StoredHistory:
    """The decoded history: the cached messages the store did not read again (with the overview
    it read), else decoded from the rows read (and cached for this version)."""
    if context is not None and context.rows is None and held is not None and held.value:
        return replace(held.value, overview=context.overview)
    stored = stored_history(context)
    if held is not None and context is not None and context.rows is not None:
        chars = len(context.overview) + sum(len(row.body) for row in context.rows)
        held.cache.put(held.key, context.version, stored, chars)
    return stored


def assembled_tokens(
    uow: UnitOfWork, settings: Settings, ident: SessionIdentity, token_budget: Any
) -> int:
    """The estimated tokens of what a pre_prompt assemble would return now (no host messages)."""
    req = AssembleInput(identity=ident, messages=[], phase="pre_prompt", token_budget=token_budget)
    return assemble_pre_prompt(uow, settings, req, 0.0).estimated_tokens


__all__ = [
    "AssembleInput",
    "AssembleResult",
    "assemble",
    "assemble_tool_loop",
    "assembled_tokens",
    "passthrough",
]
