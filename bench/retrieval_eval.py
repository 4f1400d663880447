"""Retrieval quality of memory search: recall@5 and MRR over the project's own evaluation set.

``bench/eval_data.py`` holds 60 memories of one user and her agent (English and Chinese) and 40
queries with the ids of the memories that answer each. They are written with
``MemoryService.commit_memory`` (the real local embedder through the cache, redaction, chunking,
dedupe: every one must be an ADD) into a temporary database, then every query is searched with
``search_memories`` in each mode (bm25, vector, hybrid), limit 10, no threshold, over the user's and
the agent's memories, as ``POST /memories/search`` does.

- recall@5: the share of a query's relevant memories among its first 5 results, averaged;
- MRR: 1 / the rank of the first relevant result within the 10 returned (0 when none is), averaged.

The figure is recall@5 in percent; docs/quality.md sets no target, so there is no ratio. Deterministic:
fixed data, a deterministic model on the CPU, observedAt at fixed ages (see ``eval_data``). The
latency columns are the searches themselves with the query vector already in the cache.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from unittest.mock import patch

import app.memory.search.hybrid as search_module
from app.core.clock import utcnow
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.service import Caller, MemoryService, NewMemory
from app.memory.store.embedding_cache import CachedEmbedder
from app.providers.embeddings import LocalE5Embedder
from app.search.fusion import ScoredMemory
from bench.common import Config, Row, migrated_db, summary, temp_dir
from bench.eval_data import KINDS, MEMORIES, QUERIES, REFERENCE_DAY, EvalQuery
from bench.memory_search import open_uow

MODES = ("bm25", "vector", "hybrid")
K = 5
LIMIT = 10
CALLER = Caller("default", "mei", "main")


@dataclass
class Outcome:
    query: EvalQuery
    ranked: list[str]  # memory ids, best first
    mode_used: str
    ms: float
    scores: list[float] = field(default_factory=list)  # of ``ranked``

    @property
    def recall(self) -> float:
        return len(set(self.ranked[:K]) & set(self.query.relevant)) / len(self.query.relevant)

    @property
    def first_hit(self) -> int | None:
        return next(
            (i + 1 for i, memory_id in enumerate(self.ranked) if memory_id in self.query.relevant),
            None,
        )

    @property
    def reciprocal_rank(self) -> float:
        rank = self.first_hit
        return 1 / rank if rank else 0.0


async def _load(service: MemoryService, now: datetime) -> None:
    for memory in MEMORIES:
        observed = (
            now - timedelta(days=(REFERENCE_DAY - memory.happened).days)
            if memory.happened
            else None
        )
        result = await service.commit_memory(
            CALLER,
            NewMemory(
                content=memory.content,
                category=memory.category,
                title=memory.title,
                id=memory.id,
                observed_at=observed,
            ),
        )
        if result.action != "ADD":
            raise RuntimeError(
                f"eval memory {memory.id} was not added: {result.reason or result.action}"
            )


async def _search_all(service: MemoryService, mode: str) -> list[Outcome]:
    outcomes = []
    for query in QUERIES:
        started = time.perf_counter()
        result = await search_memories(
            service, CALLER, SearchInput(query=query.text, mode=mode, limit=LIMIT)
        )
        ms = (time.perf_counter() - started) * 1000
        outcomes.append(
            Outcome(
                query,
                [h.record.id for h in result.results],
                result.mode,
                ms,
                [h.score for h in result.results],
            )
        )
    return outcomes


def _no_decay(items: list[ScoredMemory], _now: datetime, **_: object) -> list[ScoredMemory]:
    return sorted(items, key=lambda m: -m.score)  # what apply_decay returns, minus the decay


def _no_mmr(items: list[ScoredMemory], **_: object) -> list[ScoredMemory]:
    return list(items)


# Diagnostic variants: ranking steps of search.py replaced inside this benchmark only (the app is
# unchanged), to show what each step costs or gains on this set.
ABLATIONS: list[tuple[str, str, dict[str, object]]] = [
    ("hybrid without temporal decay", "hybrid", {"apply_decay": _no_decay}),
    ("hybrid without MMR", "hybrid", {"mmr_rerank": _no_mmr}),
    ("hybrid without both", "hybrid", {"apply_decay": _no_decay, "mmr_rerank": _no_mmr}),
    ("vector without both", "vector", {"apply_decay": _no_decay, "mmr_rerank": _no_mmr}),
]


async def _evaluate(
    service: MemoryService,
) -> tuple[dict[str, list[Outcome]], dict[str, list[Outcome]]]:
    assert service.embedder is not None
    for query in QUERIES:  # query vectors into the cache, so the timings below are the search alone
        await service.embedder.embed_query(query.text)
    modes = {mode: await _search_all(service, mode) for mode in MODES}
    ablations: dict[str, list[Outcome]] = {}
    for label, mode, replaced in ABLATIONS:
        with ExitStack() as stack:
            for name, stand_in in replaced.items():
                stack.enter_context(patch.object(search_module, name, stand_in))
            ablations[label] = await _search_all(service, mode)
    return modes, ablations


async def _run_async(
    path: Path,
) -> tuple[dict[str, list[Outcome]], dict[str, list[Outcome]], float]:
    uow = open_uow(path)
    embedder = LocalE5Embedder()
    try:
        service = MemoryService(uow, CachedEmbedder(uow, embedder))
        started = time.perf_counter()
        await _load(service, utcnow())
        load_s = time.perf_counter() - started
        modes, ablations = await _evaluate(service)
        return modes, ablations, load_s
    finally:
        uow.engine.dispose()


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _threshold_note(outcomes: list[Outcome]) -> str:
    """How recall's thresholds split the results: relevant memories against the others."""
    pairs = [
        (memory_id in o.query.relevant, score)
        for o in outcomes
        for memory_id, score in zip(o.ranked, o.scores, strict=True)
    ]
    parts = []
    for threshold in (0.15, 0.35):
        for relevant, label in ((True, "relevant"), (False, "other")):
            scores = [s for r, s in pairs if r is relevant]
            parts.append(
                f"{label} >= {threshold}: {100 * sum(1 for s in scores if s >= threshold) / max(len(scores), 1):.0f}%"
            )
    return (
        "calibrated scores against recall's thresholds (share of the results in the top 10): "
        + ", ".join(parts)
    )


def run(cfg: Config) -> list[Row]:
    with temp_dir("retrieval-eval") as tmp:
        path = migrated_db(tmp / "eval.db")
        results, ablations, load_s = asyncio.run(_run_async(path))
    rows = []
    for mode in MODES:
        outcomes = results[mode]
        recall, mrr = (
            _mean([o.recall for o in outcomes]),
            _mean([o.reciprocal_rank for o in outcomes]),
        )
        p50, p99 = summary([o.ms for o in outcomes])
        row = Row(
            name=f"retrieval eval: {mode}",
            workload=f"{len(MEMORIES)} memories, {len(QUERIES)} queries (EN/ZH); recall@{K} {recall:.3f}, MRR {mrr:.3f}",
            p50_ms=p50,
            p99_ms=p99,
            target="-",
            figure=recall * 100,
            target_value=None,
            samples=len(outcomes),
            unit=f"% R@{K}",
        )
        by_kind = []
        for kind in KINDS:
            chosen = [o for o in outcomes if o.query.kind == kind]
            by_kind.append(
                f"{kind} {_mean([o.recall for o in chosen]):.2f}/{_mean([o.reciprocal_rank for o in chosen]):.2f} (n={len(chosen)})"
            )
        row.notes.append(f"recall@{K}/MRR by query kind: " + ", ".join(by_kind))
        misses = [o for o in outcomes if o.recall < 1]
        if misses and mode == "hybrid":
            row.notes.append(
                f"relevant memories outside the top {K} ({len(misses)} queries): "
                + "; ".join(
                    f"{o.query.id} {o.query.text!r} -> first relevant at "
                    f"{o.first_hit if o.first_hit else f'>{LIMIT}'}, top: {', '.join(o.ranked[:3]) or 'none'}"
                    for o in misses
                )
            )
        elif misses:
            row.notes.append(
                f"{len(misses)} queries have a relevant memory outside the top {K}: "
                + ", ".join(o.query.id for o in misses)
            )
        if mode == "hybrid":
            row.notes.append(_threshold_note(outcomes))
        degraded = sum(1 for o in outcomes if o.mode_used != mode)
        if degraded:
            row.notes.append(f"UNEXPECTED: {degraded} searches ran in another mode than {mode!r}")
        rows.append(row)
    rows[-1].notes.append(
        "diagnostic, a ranking step of search.py switched off inside the benchmark (recall@5/MRR): "
        + "; ".join(
            f"{label} {_mean([o.recall for o in outcomes]):.3f}/{_mean([o.reciprocal_rank for o in outcomes]):.3f}"
            for label, outcomes in ablations.items()
        )
    )
    rows[0].notes.append(
        f"memories written with MemoryService.commit_memory and the local embedder in {load_s:.1f} s; "
        f"latency = the search alone (query vectors cached), limit {LIMIT}"
    )
    return rows
