"""``/assemble`` in the tool_loop phase: inject recall for the user's latest message, or a
skill's history after a SKILL.md read (docs/lifecycle.md, tool_loop phase)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from app.assembly.history_dates import history_date_notes
from app.assembly.injection import (
    append_envelope_message,
    append_to_last_message,
    latest_user_text,
    prepend_to_latest_user,
    recall_query,
)
from app.assembly.rebuild import SUMMARY_PREFIX
from app.assembly.recall_inputs import (
    history_tokens,
    recall_budget_tokens,
    shown_keys,
    widened_query,
)
from app.assembly.result import AssembleInput, AssembleResult, elapsed_ms, estimate, passthrough
from app.core.recall import RecallRequest, RecallSource, RecallUnavailable
from app.core.rules.bypass import is_cron_session
from app.core.rules.messages import role_of
from app.core.rules.sanitize import contains_injected_context
from app.core.threads import to_thread
from app.settings import Settings

MIN_QUERY_CHARS = 5


async def assemble_tool_loop(
    settings: Settings, recall: RecallSource, req: AssembleInput, started: float
) -> AssembleResult:
    """Recall injection (docs/lifecycle.md, tool_loop phase).

    Older hosts end ``messages`` with the current user message: the envelope is prepended to it.
    The 2026.9 host sends the history before the current turn and the current message only as
    ``prompt``, then appends the turn itself: ``prompt`` is the query and the envelope goes in a
    user message of its own at the end of the history, the one field of the answer that host reads.
    """
    messages = req.messages
    prompt = req.prompt or ""
    tail_is_user = (
        bool(messages)
        and isinstance(messages[-1], dict)
        and role_of(messages[-1]) == "user"
        # A history that is all summary ends with the service's own summary message: the
        # current message is then the prompt, as after any other history.
        and not (prompt.strip() and _is_summary(messages[-1]))
    )
    if not tail_is_user and not prompt.strip():
        return await _skill_memory_or_passthrough(recall, req, started)
    if not req.options.get("autoRecall", settings.assemble.auto_recall):
        return passthrough(req, "recall_disabled", started)
    if contains_injected_context(latest_user_text(messages) if tail_is_user else prompt):
        return passthrough(
            req, "already_injected", started, recall={"experience": _gate("already_injected")}
        )
    query = await query_of(latest_user_text(messages) if tail_is_user else prompt)
    if len(query) < MIN_QUERY_CHARS:
        return passthrough(
            req,
            "query_too_short",
            started,
            recall={"query": query, "experience": _gate("query_too_short")},
        )
    return await _inject_recall(settings, recall, req, started, query, tail_is_user)


# Sanitizing and redacting a text this short costs less than a hop to a worker thread and back,
# which a request arriving after an idle spell pays several times over; a longer text (a pasted
# log, a file) is handled in a thread, off the event loop.
INLINE_QUERY_CHARS = 4096


async def query_of(text: str) -> str:
    """The recall query of a user text (``recall_query``)."""
    if len(text) <= INLINE_QUERY_CHARS:
        return recall_query(text)
    return await to_thread(recall_query, text)


def recall_request(
    settings: Settings,
    req: AssembleInput,
    query: str,
    history: list[Any],
    omitted: int = 0,
    archives: bool = True,
) -> RecallRequest:
    """What recall is asked for the request's identity and this query, given the ``history`` the
    prompt will hold: its messages are not recalled again, and recall takes what it leaves of the
    budget (docs/recall.md, Archive recall); ``omitted``: how many older messages of the history
    the client left out of ``history`` (they take their share of the budget too). Without
    ``archives`` the request asks memories alone (no session), which read none of that: it is
    not computed (a rebuilt history can hold thousands of messages)."""
    ident = req.identity
    query = widened_query(query, history)
    request = RecallRequest(
        tenant_id=ident.tenant_id,
        user_id=ident.user_id,
        agent_id=ident.agent_id,
        query=query,
        is_cron=is_cron_session(ident.session_key, req.runtime_context),
        options=req.options,
        session_id=ident.session_id if archives else None,
    )
    if not archives:
        return request
    share = float(req.options.get("fillShare", settings.assemble.fill_share))
    used = history_tokens(history, estimate(history), omitted)
    return replace(
        request,
        shown=shown_keys(history),
        budget_tokens=recall_budget_tokens(req.token_budget, used, share),
        history_dates=history_date_notes(history, query),
    )


async def _inject_recall(
    settings: Settings,
    recall: RecallSource,
    req: AssembleInput,
    started: float,
    query: str,
    tail_is_user: bool,
) -> AssembleResult:
    """Recall for the query, injected into the latest user message or appended as one."""
    messages = req.messages
    timeout_s = settings.assemble.recall_timeout_ms / 1000
    try:
        request = await to_thread(
            recall_request, settings, req, query, messages, req.omitted_messages
        )
        block = await asyncio.wait_for(recall.recall(request), timeout=timeout_s)
    except RecallUnavailable:
        return passthrough(req, "recall_unavailable", started, recall={"query": query})
    except TimeoutError:
        return passthrough(
            req, "recall_timeout", started, recall={"query": query, "timedOut": True}
        )
    except Exception:  # noqa: BLE001 - recall must never fail the hook (docs/quality.md, Degradation)
        return passthrough(req, "recall_failed", started, recall={"query": query})
    if block is None or not block.text:
        # The experience gate's verdict is reported with or without hits (docs/api.md, diagnostics.recall).
        return passthrough(
            req,
            "no_recall_hits",
            started,
            recall={"query": request.query, **(block.diagnostics if block else {})},
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
        "recall": {"query": request.query, **block.diagnostics, "injectedChars": len(block.text)},
        "durationMs": elapsed_ms(started),
    }
    return AssembleResult(
        messages=output, estimated_tokens=estimate(output), diagnostics=diagnostics
    )


def _is_summary(message: dict[str, Any]) -> bool:
    """Whether a user message is the rebuilt history's ``[Session History Summary]``."""
    return latest_user_text([message]).startswith(SUMMARY_PREFIX)


def _gate(reason: str) -> dict[str, Any]:
    """diagnostics.recall.experience when the gate is decided before recall runs."""
    return {"gate": reason, "score": 0, "hits": 0}


async def _skill_memory_or_passthrough(
    recall: RecallSource, req: AssembleInput, started: float
) -> AssembleResult:
    """docs/recall.md, Skill memory: a SKILL.md read gets the skill's history appended to its result."""
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
        "durationMs": elapsed_ms(started),
    }
    return AssembleResult(
        messages=output, estimated_tokens=estimate(output), diagnostics=diagnostics
    )
