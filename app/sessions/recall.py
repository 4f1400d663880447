"""The recall source /assemble asks: long-term memories and experiences (app/memory/recall.py) and
the session's own archived turns, in one envelope and one budget (docs/recall.md).

Memory recall and the archive search run at the same time and share the query's embedding (the
cached embedder shares a query's vector in flight). The archive side has a time budget of its own:
past it the prompt goes with the memories alone and the turn does not wait.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from app.archives.recall import RecallAsk, RecallFound
from app.archives.recall_render import render_archive_section
from app.archives.service import embed_search_query
from app.core.recall import RecallBlock, RecallRequest, RecallSource
from app.core.redaction import redact_text
from app.core.threads import to_thread
from app.core.tokens import estimate_text_tokens
from app.db.uow import UnitOfWork
from app.memory.render import build_context_envelope
from app.sessions.archived import recall_archived_turns
from app.settings.groups import RecallSettings


class SessionRecall:
    """Memory recall with the session's archived turns added to its envelope."""

    def __init__(
        self,
        memory: RecallSource,
        uow: UnitOfWork,
        embedder: Any,
        settings: RecallSettings,
    ) -> None:
        self._memory = memory
        self._uow = uow
        self._embedder = embedder
        self._settings = settings

    async def recall(self, request: RecallRequest) -> RecallBlock | None:
        options = _ArchiveOptions(self._settings, request.options)
        archived = (
            asyncio.ensure_future(self._archived(request, options))
            if options.enabled and request.session_id
            else None
        )
        block = await self._memory.recall(request)
        if archived is None:
            return block
        found, diagnostics = await archived
        sections = list(block.sections) if block is not None else []
        budget = request.budget_tokens
        if budget is not None:
            budget -= sum(estimate_text_tokens(s) for s in sections)
        section, count = (
            render_archive_section(
                found.turns, max(budget, 0) if budget is not None else 10**9, options.max_chars
            )
            if found is not None
            else ("", 0)
        )
        diagnostics.update(injected=count, budgetTokens=budget)
        if section:
            sections.append(redact_text(section))
            diagnostics["injectedTokens"] = estimate_text_tokens(section)
        dates = request.history_dates
        left = None if budget is None else budget - estimate_text_tokens(section)
        # Only beside archives: a session that has none is answered as it always was.
        fits = left is None or estimate_text_tokens(dates) <= left
        if dates and found is not None and fits:
            sections.append(redact_text(dates))
            diagnostics["historyDates"] = dates.count("\n- ")
        merged = {**(block.diagnostics if block is not None else {}), "archive": diagnostics}
        return RecallBlock(build_context_envelope(sections), merged, tuple(sections))

    async def _archived(
        self, request: RecallRequest, options: _ArchiveOptions
    ) -> tuple[RecallFound | None, dict[str, Any]]:
        """The archived turns for the request within the archive time budget, and what to say."""
        started = time.perf_counter()
        timeout_s = options.timeout_ms / 1000
        try:
            found = await asyncio.wait_for(self._search(request, options, timeout_s), timeout_s)
        except TimeoutError:
            return None, {"reason": "timeout", "durationMs": _ms(started)}
        except Exception as exc:  # noqa: BLE001 - recall never fails the hook (docs/quality.md)
            return None, {
                "reason": "failed",
                "error": type(exc).__name__,
                "durationMs": _ms(started),
            }
        if found is None:
            return None, {"reason": "no_archives", "durationMs": _ms(started)}
        return found, {
            "reason": "ok" if found.turns else "no_relevant_turns",
            "considered": found.considered,
            "belowThreshold": found.below_threshold,
            "alreadyShown": found.already_shown,
            "hits": len(found.turns),
            "threshold": options.threshold,
            "durationMs": _ms(started),
        }

    async def _search(
        self, request: RecallRequest, options: _ArchiveOptions, timeout_s: float
    ) -> RecallFound | None:
        vectors = await embed_search_query(self._embedder, request.query, timeout_s)
        floor = float(getattr(self._embedder, "similarity_floor", 0.0) or 0.0)
        ask = RecallAsk(
            request.query, vectors, options.limit, options.threshold, floor, request.shown
        )
        assert request.session_id is not None
        return await to_thread(
            recall_archived_turns, self._uow, request.tenant_id, request.session_id, ask
        )

    async def skill_memory(self, tenant_id: str, agent_id: str, messages: list[Any]) -> str:
        return await self._memory.skill_memory(tenant_id, agent_id, messages)

    async def tool_memory(self, tenant_id: str, agent_id: str, tools: list[str]) -> str:
        return await self._memory.tool_memory(tenant_id, agent_id, tools)


class _ArchiveOptions:
    """The archive recall settings with the request's ``options.archiveRecall`` overrides."""

    def __init__(self, s: RecallSettings, overrides: dict[str, Any]) -> None:
        given = overrides.get("archiveRecall")
        o: dict[str, Any] = given if isinstance(given, dict) else {}
        self.enabled = bool(o.get("enabled", s.archive_enabled))
        self.limit = int(o.get("limit", s.archive_limit))
        self.threshold = float(o.get("scoreThreshold", s.archive_score_threshold))
        self.max_chars = int(o.get("maxInjectedChars", s.archive_max_injected_chars))
        self.timeout_ms = int(o.get("timeoutMs", s.archive_timeout_ms))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
