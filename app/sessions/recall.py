"""The recall source /assemble asks: long-term memories and experiences (app/memory/recall/source.py) and
the session's own archived turns, in one envelope and one budget (docs/recall.md).

Memory recall and the archive search run at the same time and share the query's embedding (the
cached embedder shares a query's vector in flight). The archive side has a time budget of its own:
past it the prompt goes with the memories alone and the turn does not wait.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from app.archives.search.recall import RecallAsk, RecallFound
from app.archives.search.recall_render import render_archive_section
from app.archives.service import embed_search_query
from app.core.recall import RecallBlock, RecallRequest, RecallSource
from app.core.rules.redaction import redact_text
from app.core.rules.tokens import estimate_text_tokens
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.memory.recall.render import build_context_envelope
from app.sessions.archived import has_archives, recall_archived_turns
from app.settings.recall import RecallSettings

KEPT_SIZE = 1024


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
        self._kept = KeptSections(settings.cache_ttl_s)
        self._with_archives = ArchivedSessions(uow)
        self._preparing: set[asyncio.Future[None]] = set()

    def prepare(self, request: RecallRequest, session_id: str) -> None:
        """Start embedding the archive query of ``request`` for the session, when it has archives
        and archive recall is on for it: the 2026.9 host follows a pre_prompt assemble with a
        tool_loop one for the same prompt, whose recall then finds the vector made or being made
        (the cached embedder shares a query in flight) instead of waiting for all of it."""
        options = _ArchiveOptions(self._settings, request.options)
        if not options.enabled or self._embedder is None:
            return
        task = asyncio.ensure_future(self._prepare(request, session_id, options))
        self._preparing.add(task)
        task.add_done_callback(self._preparing.discard)

    async def _prepare(
        self, request: RecallRequest, session_id: str, options: _ArchiveOptions
    ) -> None:
        try:
            if await self._with_archives.holds(request.tenant_id, session_id):
                await embed_search_query(self._embedder, request.query, options.timeout_ms / 1000)
        except Exception:  # noqa: BLE001 - preparing is best effort: the later recall embeds itself
            return

    async def recall(self, request: RecallRequest) -> RecallBlock | None:
        options = _ArchiveOptions(self._settings, request.options)
        if not options.enabled or not request.session_id:
            return await self._memory.recall(request)
        key = _kept_key(request, options)
        kept = self._kept.get(key, time.monotonic())
        archived = (
            None if kept is not None else asyncio.ensure_future(self._archived(request, options))
        )
        block = await self._memory.recall(request)
        sections = list(block.sections) if block is not None else []
        budget = request.budget_tokens
        if budget is not None:
            budget = max(0, budget - sum(estimate_text_tokens(s) for s in sections))
        if kept is not None and (budget is None or kept.tokens <= budget):
            added, diagnostics = list(kept.sections), {**kept.diagnostics, "cached": True}
        else:
            found, diagnostics = (
                await archived if archived is not None else await self._archived(request, options)
            )
            added = _archive_sections(
                found, request.history_dates, budget, options.max_chars, diagnostics
            )
            if found is not None:
                self._kept.put(key, time.monotonic(), added, diagnostics)
        diagnostics["budgetTokens"] = budget
        sections += added
        merged = {**(block.diagnostics if block is not None else {}), "archive": diagnostics}
        return RecallBlock(build_context_envelope(sections), merged, tuple(sections))

    async def _archived(
        self, request: RecallRequest, options: _ArchiveOptions
    ) -> tuple[RecallFound | None, dict[str, Any]]:
        """The archived turns for the request within the archive time budget, and what to say."""
        started = time.perf_counter()
        timeout_s = options.timeout_ms / 1000
        timings: dict[str, float] = {}
        try:
            found = await asyncio.wait_for(
                self._search(request, options, timeout_s, timings), timeout_s
            )
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
            **timings,
        }

    async def _search(
        self,
        request: RecallRequest,
        options: _ArchiveOptions,
        timeout_s: float,
        timings: dict[str, float],
    ) -> RecallFound | None:
        """The query's embedding, alone (work beside the engine's threads on their cores slows
        every one of them: app/providers/openmp.py), then the search."""
        assert request.session_id is not None
        if not await self._with_archives.holds(request.tenant_id, request.session_id):
            return None
        started = time.perf_counter()
        vectors = await embed_search_query(self._embedder, request.query, timeout_s)
        timings["embedMs"] = _ms(started)
        floor = float(getattr(self._embedder, "similarity_floor", 0.0) or 0.0)
        ask = RecallAsk(
            request.query, vectors, options.limit, options.threshold, floor, request.shown
        )
        started = time.perf_counter()
        found = await recall_archived_turns(self._uow, request.tenant_id, request.session_id, ask)
        timings["searchMs"] = _ms(started)
        return found

    async def skill_memory(self, tenant_id: str, agent_id: str, messages: list[Any]) -> str:
        return await self._memory.skill_memory(tenant_id, agent_id, messages)

    async def tool_memory(self, tenant_id: str, agent_id: str, tools: list[str]) -> str:
        return await self._memory.tool_memory(tenant_id, agent_id, tools)


def _archive_sections(
    found: RecallFound | None,
    history_dates: str,
    budget: int | None,
    max_chars: int,
    diagnostics: dict[str, Any],
) -> list[str]:
    """The archive section and the history's dates, within the budget; nothing without archives
    (a session that has none is answered as it always was)."""
    if found is None:
        diagnostics["injected"] = 0
        return []
    room = 10**9 if budget is None else budget
    section, count = render_archive_section(found.turns, room, max_chars)
    diagnostics["injected"] = count
    out: list[str] = []
    if section:
        out.append(redact_text(section))
        diagnostics["injectedTokens"] = estimate_text_tokens(section)
        room -= estimate_text_tokens(section)
    if history_dates and estimate_text_tokens(history_dates) <= room:
        out.append(redact_text(history_dates))
        diagnostics["historyDates"] = history_dates.count("\n- ")
    return out


def _kept_key(request: RecallRequest, options: _ArchiveOptions) -> Hashable:
    return (
        request.tenant_id,
        request.session_id,
        request.query,
        request.shown,
        request.history_dates,
        options.key,
    )


@dataclass(frozen=True, slots=True)
class _Kept:
    at: float
    sections: tuple[str, ...]
    diagnostics: dict[str, Any]

    @property
    def tokens(self) -> int:
        return sum(estimate_text_tokens(s) for s in self.sections)


class KeptSections:
    """The archive sections of recent requests, served again to the same request while they fit
    its budget: the host asks before every model call of a turn with the same prompt and history,
    and the same envelope keeps the prompt's prefix (and a provider's prompt cache) the same
    between those calls. A turn archived since is at most ``ttl_s`` late to appear."""

    def __init__(self, ttl_s: float, size: int = KEPT_SIZE) -> None:
        self._ttl_s, self._size = ttl_s, size
        self._entries: OrderedDict[Hashable, _Kept] = OrderedDict()

    def get(self, key: Hashable, now: float) -> _Kept | None:
        entry = self._entries.get(key)
        if entry is None or now - entry.at > self._ttl_s:
            return None
        self._entries.move_to_end(key)
        return entry

    def put(
        self, key: Hashable, now: float, sections: list[str], diagnostics: dict[str, Any]
    ) -> None:
        if self._ttl_s <= 0:
            return
        self._entries[key] = _Kept(now, tuple(sections), dict(diagnostics))
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)


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
        self.key = (self.enabled, self.limit, self.threshold, self.max_chars)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


class ArchivedSessions:
    """The sessions known to have an archive. A session only gains archives, so a yes is kept
    (bounded, the oldest dropped); a no is asked again next time, since another process may
    archive at any moment. A session deleted since costs one embedding, then finds nothing."""

    def __init__(self, uow: UnitOfWork, size: int = KEPT_SIZE) -> None:
        self._uow, self._size = uow, size
        self._known: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def holds(self, tenant_id: str, session_id: str) -> bool:
        key = (tenant_id, session_id)
        if key in self._known:
            self._known.move_to_end(key)
            return True
        if not await to_thread(has_archives, self._uow, tenant_id, session_id):
            return False
        self._known[key] = None
        while len(self._known) > self._size:
            self._known.popitem(last=False)
        return True
