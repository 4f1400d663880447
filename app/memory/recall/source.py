"""Recall for /assemble (docs/recall.md, Recall into the prompt): agent experiences behind the task
gate, long-term memories of the user, one ``<openviking-context>`` envelope, experiences first.
Every block injected into a prompt passes through the redaction boundary on its way out."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Iterable
from typing import Any

from app.core.recall import RecallBlock, RecallRequest
from app.core.rules.redaction import redact_text
from app.core.threads import to_thread
from app.memory.recall.cache import RecallCache, recall_key
from app.memory.recall.render import (
    build_context_envelope,
    build_memory_lines_with_budget,
    render_experience_section,
    render_long_term_section,
)
from app.memory.recall.skills import skill_read_of
from app.memory.recall.task_gate import should_recall_experience
from app.memory.recall.usage import skill_memory_block, tool_memory_block
from app.memory.results import SearchHit
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.search.ranking import MemoryItem, pick_memories_for_injection, post_process_memories
from app.memory.service import Caller, MemoryService
from app.settings.recall import RecallSettings

LONG_TERM_CATEGORIES = ["profile", "preferences", "entities", "events", "cases", "skills", "tools"]


class MemoryRecall:
    """The recall source wired into /assemble once memories exist."""

    def __init__(
        self, service: MemoryService, settings: RecallSettings, embed_timeout_s: float
    ) -> None:
        self._service = service
        self._settings = settings
        self._embed_timeout_s = embed_timeout_s
        self._cache = RecallCache(settings.cache_ttl_s) if settings.cache_ttl_s > 0 else None

    async def recall(self, request: RecallRequest) -> RecallBlock | None:
        """The answer kept for this request while its owners' memories are unchanged
        (app/memory/recall/cache.py), else a new one."""
        if self._cache is None:
            block, _ = await self._recall(request)
            return block
        owners = [("user", request.user_id), ("agent", request.agent_id)]
        # Read before the searches: a change committed while they run leaves the entry stale.
        generations = await self._generations(request.tenant_id, owners)
        if not any(generations):
            # Generation 0: nothing was ever written for these owners (every write moves it on,
            # app/memory/store/repository.py), so there is nothing to search or to embed for.
            return self._none_stored(request)
        key = recall_key(request)
        found, kept = self._cache.get(key, generations, time.monotonic())
        if found:
            return _served_from_cache(kept)
        block, degraded = await self._recall(request)
        if not degraded:  # an answer without vectors is not kept: the next call tries again
            self._cache.put(key, generations, time.monotonic(), block)
        return block

    def _none_stored(self, request: RecallRequest) -> RecallBlock:
        """What recall answers when the owners have no memory: an empty block with the
        diagnostics a search that found nothing gives."""
        _, experience = _experience_gate(request, _Options(self._settings, request.options))
        mode = "hybrid" if self._service.embedder is not None else "bm25"
        diagnostics = {"experience": experience, "longTerm": {"hits": 0, "mode": mode}}
        return RecallBlock("", diagnostics, ())

    async def _generations(self, tenant_id: str, owners: list[tuple[str, str]]) -> tuple[int, ...]:
        # SQLite answers this indexed read of a row or two from pages in memory in less time than
        # the hop to a worker thread and back costs (the API key lookup does the same).
        # A database server's reads wait on the network, so they run in a thread.
        if self._service.uow.storage.in_process_reads:
            return self._service.generations(tenant_id, owners)
        return await to_thread(self._service.generations, tenant_id, owners)

    async def _recall(self, request: RecallRequest) -> tuple[RecallBlock, bool]:
        """The recall block, and whether a search fell back to keywords (the embedder failed)."""
        options = _Options(self._settings, request.options)
        caller = Caller(
            request.tenant_id, request.user_id, request.agent_id, can_read_sensitive=False
        )
        diagnostics: dict[str, Any] = {}
        # The two searches run at the same time (each side in read transactions of its own); the
        # query is embedded once for both (CachedEmbedder shares a query's embedding in flight).
        modes: set[str] = set()
        experience, long_term = await asyncio.gather(
            self._experiences(caller, request, options, diagnostics, modes),
            self._long_term(caller, request, options, diagnostics, modes),
        )
        sections = tuple(redact_text(s) for s in (experience, long_term) if s)
        envelope = build_context_envelope(list(sections))
        degraded = self._service.embedder is not None and "bm25" in modes
        # An empty block still carries the diagnostics: the gate's verdict is reported without hits.
        return RecallBlock(redact_text(envelope), diagnostics, sections), degraded

    def prepare(self, request: RecallRequest, session_id: str) -> None:
        """Nothing: memory recall has no archived turns to prepare for."""

    async def skill_memory(self, tenant_id: str, agent_id: str, messages: list[Any]) -> str:
        name = skill_read_of([m for m in messages if isinstance(m, dict)])
        if name is None:
            return ""
        block = await to_thread(skill_memory_block, self._service, tenant_id, agent_id, name)
        return redact_text(block)

    async def tool_memory(self, tenant_id: str, agent_id: str, tools: list[str]) -> str:
        if not tools:
            return ""
        block = await to_thread(tool_memory_block, self._service, tenant_id, agent_id, tools)
        return redact_text(block)

    async def _experiences(
        self,
        caller: Caller,
        request: RecallRequest,
        o: _Options,
        diag: dict[str, Any],
        modes: set[str],
    ) -> str:
        recall, diag["experience"] = _experience_gate(request, o)
        if not recall:
            return ""
        found, mode = await self._search(
            caller,
            request.query,
            ["experiences"],
            [("agent", caller.agent_id)],
            max(o.experience_limit * 4, 12),
            o.experience_threshold,
        )
        modes.add(mode)
        unique: dict[str, MemoryItem] = {}
        for item in found:
            unique.setdefault(item["uri"], item)
        chosen = list(unique.values())[: o.experience_limit]
        diag["experience"]["hits"] = len(chosen)
        return render_experience_section(chosen, o.experience_max_chars)

    async def _long_term(
        self,
        caller: Caller,
        request: RecallRequest,
        o: _Options,
        diag: dict[str, Any],
        modes: set[str],
    ) -> str:
        candidate_limit = max(o.limit * 4, 20)
        found, mode = await self._search(
            caller,
            request.query,
            LONG_TERM_CATEGORIES,
            [("user", caller.user_id)],
            candidate_limit,
            0.0,
        )
        modes.add(mode)
        processed = post_process_memories(found, candidate_limit, o.threshold)
        picked = pick_memories_for_injection(processed, o.limit, request.query, o.threshold)
        lines = build_memory_lines_with_budget(picked, o.max_chars)
        diag["longTerm"] = {"hits": len(lines), "mode": mode}
        return render_long_term_section(lines) if lines else ""

    async def _search(
        self,
        caller: Caller,
        query: str,
        categories: list[str],
        owners: list[tuple[str, str]],
        limit: int,
        threshold: float,
    ) -> tuple[list[MemoryItem], str]:
        result = await search_memories(
            self._service,
            caller,
            SearchInput(
                query=query,
                categories=categories,
                owners=owners,
                limit=limit,
                score_threshold=threshold,
                embed_timeout_s=self._embed_timeout_s,
                half_life_days=self._settings.decay_half_life_days,
                by_clause=False,
            ),
        )
        return injectable_items(result.results), result.mode


def _experience_gate(request: RecallRequest, o: _Options) -> tuple[bool, dict[str, Any]]:
    """Whether experiences are searched for the request, and the gate's diagnostics."""
    if not o.experience_enabled:
        return False, {"gate": "disabled", "score": 0, "hits": 0}
    gate = should_recall_experience(
        request.query,
        trigger_hint="cron_start" if request.is_cron else None,
        min_query_chars=o.experience_min_chars,
    )
    return gate.recall, {"gate": gate.reason, "score": gate.score, "hits": 0}


class _Options:
    """The configured recall settings with the request's ``options`` overrides."""

    def __init__(self, s: RecallSettings, overrides: dict[str, Any]) -> None:
        given = overrides.get("agentExperience")
        exp: dict[str, Any] = given if isinstance(given, dict) else {}
        self.limit = int(overrides.get("recallLimit", s.limit))
        self.threshold = float(overrides.get("recallScoreThreshold", s.score_threshold))
        self.max_chars = int(overrides.get("recallMaxInjectedChars", s.max_injected_chars))
        self.experience_enabled = bool(exp.get("enabled", s.experience_enabled))
        self.experience_limit = int(exp.get("recallLimit", s.experience_recall_limit))
        self.experience_threshold = float(exp.get("scoreThreshold", s.experience_score_threshold))
        self.experience_max_chars = int(
            exp.get("maxInjectedChars", s.experience_max_injected_chars)
        )
        self.experience_min_chars = int(exp.get("minQueryChars", s.experience_min_query_chars))


def _served_from_cache(block: RecallBlock | None) -> RecallBlock | None:
    """A kept answer as this request's: its diagnostics copied (the caller may extend them) and
    marked ``cached``."""
    if block is None:
        return None
    diagnostics = {**copy.deepcopy(block.diagnostics), "cached": True}
    return RecallBlock(block.text, diagnostics, block.sections)


def injectable_items(hits: Iterable[SearchHit]) -> list[MemoryItem]:
    """The search hits recall may put in the prompt, as the injection ranking reads them. Masked
    memories stay out: their text is not for the model."""
    return [
        MemoryItem(
            id=hit.record.id,
            uri=hit.record.uri,
            category=hit.record.category,
            title=hit.record.title,
            abstract=hit.record.abstract,
            content=hit.record.content,
            score=hit.score,
            level=hit.level,
        )
        for hit in hits
        if hit.record.sensitivity != "masked"
    ]
