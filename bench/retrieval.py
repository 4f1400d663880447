"""Evidence retrieval on long multi-session conversations: archive search (every mode), memory
search and recall against a BM25 baseline (stop words removed) and a dense-only baseline with the
same local model, computed in the same run. ``python -m bench retrieval``.

The dataset (``bench/conversations.py``) is generated deterministically: 12 conversations, 3,600
turns, questions labelled with their evidence turns, half of the conversations for tuning and half
held out. Each conversation is one agent session whose ten conversation sessions are ten archives,
stored and archived with the app's own code; the search facts, statistics and vectors of the
archived messages are written by the function Phase 2 runs. Each conversation is also one user's
memories (every turn committed with ``commit_memory``, observed at the turn's time), searched with
``search_memories`` in each mode and with recall's ranking. Metrics per question category:
recall@k = the share of a question's evidence turns among the first k results, hit@10 = at least
one of them in the first 10. ``bench/RESULTS.md`` is written from the run.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import bench.search as search_bench
from app.archives.index.search_index import embed_facts, facts_of, write_search_index
from app.archives.read import repository as archives_repo
from app.archives.service import SearchRequest, embed_search_query
from app.db.engine import create_db_engine
from app.db.models import Archive
from app.db.uow import UnitOfWork
from app.memory.recall.source import injectable_items
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.search.ranking import pick_memories_for_injection, post_process_memories
from app.memory.service import Caller, MemoryService, NewMemory
from app.memory.store.embedding_cache import CachedEmbedder
from app.providers.embeddings import LocalE5Embedder
from app.sessions.archived import search_archives
from app.settings import Settings
from bench.common import Config, Row, migrated_db, summary, temp_dir
from bench.conversations import Conversation, Question, build_dataset
from bench.retrieval_baselines import bm25_baseline, dense_baseline
from bench.retrieval_latency import measure_latency
from bench.retrieval_report import SYSTEM_ORDER, Evaluation, write_results
from bench.search import add_archived_session

ARCHIVE_SYSTEMS = (
    ("archive keyword", "keyword", "calibrated", False),
    ("archive regex", "regex", "calibrated", False),
    ("archive ranked, lexical only", "ranked", "calibrated", False),
    ("archive ranked, hybrid RRF", "ranked", "rrf", True),
    ("archive ranked, hybrid calibrated", "ranked", "calibrated", True),
)
MEMORY_MODES = (
    ("memory search, bm25 mode", "bm25"),
    ("memory search, vector mode", "vector"),
    ("memory search", "hybrid"),
)


def _messages(conv: Conversation, session: int) -> list[dict]:
    return [
        {
            "role": "user" if t.speaker == conv.speakers[0] else "assistant",
            "content": t.text
            if t.speaker == conv.speakers[0]
            else [{"type": "text", "text": t.text}],
            "timestamp": int(t.at.timestamp() * 1000),
        }
        for t in conv.turns
        if t.session == session
    ]


async def index_archives(uow: UnitOfWork, embedder: CachedEmbedder) -> int:
    """What Phase 2 does for search, for every archive: facts, vectors (batched, cached), statistics."""
    with uow.read() as db:
        archive_pks = [a.id for a in db.query(Archive).order_by(Archive.id).all()]
    count = 0
    for pk in archive_pks:
        with uow.read() as db:
            archive = archives_repo.get_archive_by_pk(db, pk)
            facts = facts_of(archives_repo.archive_messages(db, archive))
        vectors = await embed_facts(embedder.embed_passages, facts)
        with uow.write() as db:
            write_search_index(db, uow.storage, facts, vectors, embedder.model_id)
        count += len(facts)
    return count


def add_archived_session_by_sessions(uow: UnitOfWork, conv: Conversation) -> None:
    """One agent session per conversation, one archive per conversation session."""
    sessions = sorted({t.session for t in conv.turns})
    size = search_bench.ARCHIVE_SIZE
    search_bench.ARCHIVE_SIZE = len([t for t in conv.turns if t.session == 0])
    try:
        add_archived_session(uow, conv.id, [m for s in sessions for m in _messages(conv, s)])
    finally:
        search_bench.ARCHIVE_SIZE = size


async def _commit_memories(
    service: MemoryService, conversations: list[Conversation]
) -> dict[str, int]:
    """Every turn as one memory of the conversation's user, observed when it was said."""
    memory_turn: dict[str, int] = {}
    for conv in conversations:
        caller = Caller("default", conv.id, "main")
        for t in conv.turns:
            out = await service.commit_memory(
                caller,
                NewMemory(content=t.text, category="events", title=t.speaker, observed_at=t.at),
            )
            if out.action == "ADD" and out.memory is not None:
                memory_turn[out.memory.id] = t.index
    return memory_turn


async def _evaluate(tmp: Path, quick: bool) -> tuple[Evaluation, dict[str, Any]]:
    conversations = build_dataset()
    if quick:
        conversations = [c for c in conversations if c.id in ("en0", "en1", "zh0", "zh1")]
    path = migrated_db(tmp / "retrieval.db")
    engine = create_db_engine(
        Settings(database_url=f"sqlite:///{path}", db={"sqlite_synchronous": "NORMAL"})
    )
    uow = UnitOfWork(engine)
    model = LocalE5Embedder()
    await model.warm()
    embedder = CachedEmbedder(uow, model)
    sizes: dict[str, Any] = {
        "conversations": len(conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
    }
    for conv in conversations:
        add_archived_session_by_sessions(uow, conv)
    started = time.perf_counter()
    sizes["indexed"] = await index_archives(uow, embedder)
    sizes["index_s"] = round(time.perf_counter() - started)
    service = MemoryService(uow, embedder)
    started = time.perf_counter()
    memory_turn = await _commit_memories(service, conversations)
    sizes["memories"], sizes["memory_s"] = len(memory_turn), round(time.perf_counter() - started)
    ev = Evaluation()
    for conv in conversations:
        await _ask_conversation(ev, uow, service, embedder, conv, memory_turn)
    engine.dispose()
    return ev, sizes


async def _ask_conversation(
    ev: Evaluation,
    uow: UnitOfWork,
    service: MemoryService,
    embedder: CachedEmbedder,
    conv: Conversation,
    memory_turn: dict[str, int],
) -> None:
    raw_vectors = await embedder.embed_passages([t.text for t in conv.turns])
    queries = {q.text: await embedder.embed_query(q.text) for q in conv.questions}
    baselines = {
        "baseline: BM25": bm25_baseline(conv),
        "baseline: dense": dense_baseline(raw_vectors, queries),
    }
    row_of = {t.index + 1: t.index for t in conv.turns}  # seq -> turn index
    for q in conv.questions:
        for name, rank in baselines.items():
            began = time.perf_counter()
            ranking = rank(q.text)
            ev.add(
                name,
                conv.split,
                q.category,
                ranking,
                q.evidence,
                (time.perf_counter() - began) * 1000,
            )
        vectors = await embed_search_query(
            embedder, q.text, 30.0
        )  # cached: what the API would pass
        for name, mode, fusion, hybrid in ARCHIVE_SYSTEMS:
            began = time.perf_counter()
            try:
                result = await asyncio.to_thread(
                    search_archives,
                    uow,
                    "default",
                    SearchRequest(conv.id, q.text, mode=mode, limit=10, fusion=fusion),
                    1.0,
                    vectors if hybrid else None,
                )
                ranking = [row_of[h.seq] for h in result.results]
            except Exception:  # noqa: BLE001 - a natural question may be an invalid regex
                ranking = []
            ev.add(
                name,
                conv.split,
                q.category,
                ranking,
                q.evidence,
                (time.perf_counter() - began) * 1000,
            )
        await _memory_systems(ev, service, conv, q, memory_turn)


async def _memory_systems(
    ev: Evaluation,
    service: MemoryService,
    conv: Conversation,
    q: Question,
    memory_turn: dict[str, int],
) -> None:
    caller = Caller("default", conv.id, "main")
    for name, mode in MEMORY_MODES:
        began = time.perf_counter()
        # Decay off: the conversations are dated years back, and every turn is an event of the same user.
        found = await search_memories(
            service,
            caller,
            SearchInput(q.text, owners=[("user", conv.id)], limit=10, mode=mode, half_life_days=0),
        )
        ev.add(
            name,
            conv.split,
            q.category,
            [memory_turn[h.record.id] for h in found.results if h.record.id in memory_turn],
            q.evidence,
            (time.perf_counter() - began) * 1000,
        )
    began = time.perf_counter()
    pool = await search_memories(
        service,
        caller,
        SearchInput(
            q.text, owners=[("user", conv.id)], limit=40, half_life_days=0, by_clause=False
        ),
    )  # as recall searches
    items = injectable_items(pool.results)
    kinds = [
        "evidence"
        if memory_turn.get(i["id"]) in q.evidence
        else conv.turns[memory_turn[i["id"]]].kind
        if i["id"] in memory_turn
        else "other"
        for i in items
    ]
    ev.add_threshold_sample(
        conv.split, [(kind, i["score"]) for kind, i in zip(kinds, items, strict=True)]
    )
    picked = pick_memories_for_injection(post_process_memories(items, 40, 0.0), 10, q.text, 0.0)
    ev.add(
        "recall (injection ranking)",
        conv.split,
        q.category,
        [memory_turn[i["id"]] for i in picked if i["id"] in memory_turn],
        q.evidence,
        (time.perf_counter() - began) * 1000,
    )


def run(cfg: Config) -> list[Row]:
    with temp_dir("retrieval") as tmp:
        ev, sizes = asyncio.run(_evaluate(tmp, cfg.quick))
    latency_rows, latency_lines = measure_latency(cfg)
    if not cfg.quick:
        write_results(ev, sizes, latency_lines)
    rows = []
    for system in SYSTEM_ORDER:
        p50, p99 = summary(ev.latency[system])
        rows.append(
            Row(
                name=f"retrieval: {system}",
                workload="held-out questions, recall@10 overall",
                p50_ms=p50,
                p99_ms=p99,
                target="-",
                figure=ev.mean(system, "held-out", "overall", "r@10"),
                target_value=None,
                samples=len(ev.latency[system]),
                unit="%",
            )
        )
    return rows + latency_rows
