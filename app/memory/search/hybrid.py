"""Hybrid memory search (docs/recall.md, Hybrid search): BM25 and vector candidates merged by chunk,
best chunk per memory, temporal decay on dated categories, MMR diversity, threshold and limit.

The query embedding happens before the read transaction; with no embedding available the search
degrades to keyword-only and says so (``mode: "bm25"``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from app.core.clock import utcnow
from app.core.rules.redaction import without_secrets
from app.core.threads import to_thread
from app.db.models import Memory
from app.memory.records import memory_record
from app.memory.results import SearchHit, SearchOutcome
from app.memory.search.ranking import LEAF_LEVEL
from app.memory.search.sides import ChunkRow, mentions_any_day, vector_side, word_side
from app.memory.service import Caller, MemoryService
from app.providers.protocols import ProviderError
from app.search.fusion import (
    DEFAULT_HALF_LIFE_DAYS,
    DEFAULT_MMR_LAMBDA,
    DEFAULT_TEXT_WEIGHT,
    DEFAULT_VECTOR_WEIGHT,
    ChunkHit,
    ScoredMemory,
    apply_decay,
    best_per_memory,
    best_then_newest,
    merge_hybrid,
    mmr_rerank,
    text_coverage,
    threshold_and_limit,
    vector_score,
)
from app.search.text.memory_phrases import memory_phrases
from app.search.text.query import clauses, parse_query

MIN_POOL = 20
# (vector, text) weights of a query whose day a memory mentions: the embedding model knows nothing
# of calendar days, so "what did Alice do on 2023-05-20" leans on the memories that name the day
# (archive search does the same: app/search/ranking.py, DATE_DENSE_WEIGHT).
DATE_LED_WEIGHTS = (0.1, 0.9)


@dataclass(frozen=True, slots=True)
class SearchInput:
    query: str
    categories: list[str] | None = None
    target_uri: str | None = None
    limit: int = 10
    score_threshold: float = 0.0
    mode: str = "hybrid"
    explain: bool = False
    owners: list[tuple[str, str]] | None = None
    embed_timeout_s: float | None = None
    half_life_days: float = (
        DEFAULT_HALF_LIFE_DAYS  # docs/recall.md, Hybrid search step 5; 0 switches decay off
    )
    # A query of a few questions is searched question by question, a memory keeping its best
    # score. Recall leaves it off: each clause costs a query embedding within its time budget.
    by_clause: bool = True


async def search_memories(
    service: MemoryService, caller: Caller, req: SearchInput
) -> SearchOutcome:
    """Search the caller's memories; returns the mode actually used and the ranked results."""
    # A query may quote a secret: it is neither searched for nor sent to an embedding provider.
    req = replace(req, query=without_secrets(req.query))
    owners = req.owners or [("user", caller.user_id), ("agent", caller.agent_id)]
    parts = clauses(req.query) if req.by_clause else [req.query]
    vectors, mode = await _query_vectors(service, req, parts)
    merged: list[ScoredMemory] = []
    memories: dict[str, Memory] = {}
    for part, vector in zip(parts, vectors, strict=True):
        found, loaded = await _collect(service, caller.tenant_id, owners, req, part, vector, mode)
        merged += found
        memories.update(loaded)
    ranked = _rank(best_per_memory(merged), memories, req)
    return SearchOutcome(
        mode, [_hit(s, memories[s.memory_id], caller, req.explain) for s in ranked]
    )


async def _query_vectors(
    service: MemoryService, req: SearchInput, parts: list[str]
) -> tuple[list[list[float] | None], str]:
    none: list[list[float] | None] = [None] * len(parts)
    if req.mode == "bm25" or service.embedder is None or not req.query.strip():
        return none, "bm25"
    embedder = service.embedder
    try:
        vectors = asyncio.gather(*(embedder.embed_query(p) for p in parts))
        if req.embed_timeout_s is not None:
            return list(await asyncio.wait_for(vectors, req.embed_timeout_s)), req.mode
        return list(await vectors), req.mode
    except (ProviderError, TimeoutError):
        return none, "bm25"  # docs/quality.md, Degradation: keyword search rather than failure


async def _collect(
    service: MemoryService,
    tenant_id: str,
    owners: list[tuple[str, str]],
    req: SearchInput,
    text: str,
    vector: list[float] | None,
    mode: str,
) -> tuple[list[ScoredMemory], dict[str, Memory]]:
    """The word side and the vector side, each in a read transaction of its own that also loads
    its chunks' rows, at the same time, then their chunks merged. On PostgreSQL each side has a
    server process of its own; in process (SQLite) the vector side's matrix product releases the
    interpreter's lock and runs on the second core while the word side's Python runs on the first
    (how much it hides: bench/RESULTS.md, Measurements behind the code)."""
    pool = max(req.limit * 4, MIN_POOL)
    query = parse_query(text, today=utcnow().date())
    phrases = memory_phrases(query)
    days = {t.literal for t in query.terms if t.kind == "date"}

    def words() -> tuple[dict[int, float], float, list[ChunkRow], bool]:
        if mode == "vector" or not phrases:
            return {}, 0.0, [], False
        ranks, ideal, found = word_side(service, tenant_id, owners, phrases, pool)
        # Dates are read out of whole memories: in the worker thread, not on the event loop.
        date_led = (
            mode == "hybrid" and bool(days) and any(mentions_any_day(m, days) for _, m in found)
        )
        return ranks, ideal, found, date_led

    def nearest() -> tuple[dict[int, float], list[ChunkRow]]:
        if vector is None:
            return {}, []
        return vector_side(service, tenant_id, owners, vector, pool)

    (text_ranks, ideal, text_rows, date_led), (similarities, vector_rows) = await asyncio.gather(
        to_thread(words), to_thread(nearest)
    )
    rows = {chunk_id: (chunk_id, memory) for chunk_id, memory in [*text_rows, *vector_rows]}
    weighing = "date" if date_led else mode
    return _merge(service, req, weighing, text_ranks, ideal, similarities, list(rows.values()))


def _merge(
    service: MemoryService,
    req: SearchInput,
    mode: str,
    text_ranks: dict[int, float],
    ideal: float,
    similarities: dict[int, float],
    rows: list[ChunkRow],
) -> tuple[list[ScoredMemory], dict[str, Memory]]:
    memories = {memory.id: memory for _, memory in rows if _wanted(memory, req)}
    owner_of_chunk = {chunk_id: memory.id for chunk_id, memory in rows if memory.id in memories}
    floor = service.embedder.similarity_floor if service.embedder is not None else 0.0
    model_id = service.embedder.model_id if service.embedder is not None else None
    vector_hits = [
        ChunkHit(c, owner_of_chunk[c], vector_score(similarity, floor))
        for c, similarity in similarities.items()
        if c in owner_of_chunk and _same_space(memories[owner_of_chunk[c]], model_id)
    ]
    text_hits = [
        ChunkHit(c, owner_of_chunk[c], text_coverage(r, ideal))
        for c, r in text_ranks.items()
        if c in owner_of_chunk
    ]
    if mode == "bm25" and text_hits and (best := max(h.score for h in text_hits)) > 0:
        # docs/peers.md, OpenClaw §2.4 step 10: keyword-only search ranks lexically, best match 1.0.
        text_hits = [replace(h, score=h.score / best) for h in text_hits]
    weights = {"bm25": (0.0, 1.0), "vector": (1.0, 0.0), "date": DATE_LED_WEIGHTS}.get(
        mode, (DEFAULT_VECTOR_WEIGHT, DEFAULT_TEXT_WEIGHT)
    )
    merged = merge_hybrid(vector_hits, text_hits, vector_weight=weights[0], text_weight=weights[1])
    return merged, memories


def _same_space(memory: Memory, model_id: str | None) -> bool:
    """Whether a memory's vectors may be compared with the query's: never those of another model
    (docs/recall.md, Embeddings), which only its words find until ``reembed`` runs. No model
    recorded: keyword-only (no vectors to compare), or marked for re-embedding by a migration
    with the vectors it had."""
    return memory.embedding_model is None or memory.embedding_model == model_id


def _wanted(memory: Memory, req: SearchInput) -> bool:
    if req.categories and memory.category not in req.categories:
        return False
    return not (req.target_uri and not memory.uri.startswith(req.target_uri))


def _rank(
    merged: list[ScoredMemory], memories: dict[str, Memory], req: SearchInput
) -> list[ScoredMemory]:
    """Decay on dated categories, then MMR, then threshold and limit (docs/recall.md steps 5-6)."""
    described = best_then_newest(
        replace(
            item,
            category=memories[item.memory_id].category,
            observed_at=memories[item.memory_id].observed_at or memories[item.memory_id].created_at,
            text=f"{memories[item.memory_id].title} {memories[item.memory_id].content}",
        )
        for item in merged
    )
    decayed = (
        apply_decay(described, utcnow(), half_life_days=req.half_life_days)
        if req.half_life_days > 0
        else described
    )
    # MMR is quadratic in its input: diversify the best few, not every candidate.
    reranked = mmr_rerank(
        decayed[: max(req.limit * 3, MIN_POOL)],
        lambda_=DEFAULT_MMR_LAMBDA,
        limit=max(req.limit * 2, req.limit + 5),
    )
    kept = threshold_and_limit(reranked, req.score_threshold, req.limit)
    if not kept:
        # docs/peers.md, OpenClaw §2.4 step 9: keyword matches survive an empty result, the index having
        # already established their lexical relevance.
        kept = [item for item in reranked if item.explain.text > 0][: req.limit]
    return kept


def _hit(item: ScoredMemory, m: Memory, caller: Caller, explain: bool) -> SearchHit:
    record = memory_record(m, can_read_sensitive=caller.can_read_sensitive)
    return SearchHit(record, round(item.score, 6), LEAF_LEVEL, item.explain if explain else None)
