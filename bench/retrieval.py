"""Evidence retrieval on long multi-session conversations: archive search (every mode), memory
search and recall against a BM25 baseline (stop words removed) and a dense-only baseline with the
same local model, computed in the same run (issue 10). ``python -m bench retrieval``.

The dataset (``bench/conversations.py``) is generated deterministically: 8 conversations, 2,400
turns, questions labelled with their evidence turns. Each conversation is one agent session whose
ten conversation sessions are ten archives, stored and archived with the app's own code; the search
facts and vectors of the archived messages are written by the same functions Phase 2 runs. Each
conversation is also one user's memories (every turn committed with ``commit_memory``), searched
with ``search_memories`` and with recall's ranking. Metrics per question category: recall@k = the
share of a question's evidence turns among the first k results, hit@10 = at least one of them in
the first 10. ``bench/RESULTS.md`` is written from the run.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import bench.search as search_bench
from app.archives import repository as archives_repo
from app.archives.indexing import embed_facts, facts_of, write_search_index
from app.archives.service import SearchRequest, search_archives
from app.core.query import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, normalise
from app.db.engine import create_db_engine
from app.db.models import Archive
from app.db.uow import UnitOfWork
from app.memory.embedding_cache import CachedEmbedder
from app.memory.ranking import pick_memories_for_injection, post_process_memories
from app.memory.search import SearchInput, search_memories
from app.memory.service import Caller, MemoryService, NewMemory
from app.providers.embeddings import LocalE5Embedder
from app.settings import Settings
from bench.common import Config, Row, migrated_db, summary, temp_dir
from bench.conversations import Conversation, build_dataset
from bench.retrieval_latency import measure_latency
from bench.search import add_archived_session

KS = (1, 5, 10)
CATEGORIES = ("single-hop", "multi-hop", "temporal", "paraphrase", "adversarial")
RESULTS = Path(__file__).with_name("RESULTS.md")
Ranker = Callable[[Conversation, str], list[int]]


def _messages(conv: Conversation, session: int) -> list[dict]:
    return [
        {"role": "user" if t.speaker == conv.speakers[0] else "assistant",
         "content": t.text if t.speaker == conv.speakers[0] else [{"type": "text", "text": t.text}],
         "timestamp": int(t.at.timestamp() * 1000)}
        for t in conv.turns if t.session == session
    ]


async def index_archives(uow: UnitOfWork, embedder: CachedEmbedder) -> int:
    """What Phase 2 does for search, for every archive: facts, vectors (batched, cached), write."""
    with uow.read() as db:
        archive_pks = [a.id for a in db.query(Archive).all()]
    count = 0
    for pk in archive_pks:
        with uow.read() as db:
            archive = archives_repo.get_archive_by_pk(db, pk)
            facts = facts_of(archives_repo.archive_messages(db, archive))
        vectors = await embed_facts(embedder.embed_passages, facts)
        with uow.write() as db:
            write_search_index(db, uow.dialect, facts, vectors, embedder.model_id)
        count += len(facts)
    return count


def _bm25_baseline(conv: Conversation) -> Callable[[str], list[int]]:
    """Okapi BM25 over lowercase words and CJK character pairs, stop words removed, no stemming."""
    def tokens(text: str) -> list[str]:
        out: list[str] = []
        for word in normalise(text).replace("?", " ").split():
            word = "".join(ch for ch in word if ch.isalnum())
            for stop in CHINESE_STOPWORDS:
                word = word.replace(stop, " ")
            for piece in word.split():
                if piece.isascii():
                    if piece not in ENGLISH_STOPWORDS and len(piece) > 1:
                        out.append(piece)
                else:
                    out += [piece] if len(piece) < 2 else [piece[i:i + 2] for i in range(len(piece) - 1)]
        return out
    docs = [tokens(t.text) for t in conv.turns]
    n, avg = len(docs), sum(map(len, docs)) / len(docs)
    df: dict[str, int] = defaultdict(int)
    for d in docs:
        for token in set(d):
            df[token] += 1

    def rank(question: str) -> list[int]:
        q = set(tokens(question))
        scores = []
        for i, d in enumerate(docs):
            s = 0.0
            for token in q:
                tf = d.count(token)
                if tf:
                    idf = math.log(1 + (n - df[token] + 0.5) / (df[token] + 0.5))
                    s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(d) / avg))
            if s > 0:
                scores.append((-s, i))
        return [i for _, i in sorted(scores)[:10]]
    return rank


def _dense_baseline(vectors: list[list[float]], query_vectors: dict[str, list[float]]) -> Callable[[str], list[int]]:
    def rank(question: str) -> list[int]:
        q = query_vectors[question]
        sims = [(-sum(a * b for a, b in zip(q, v, strict=True)), i) for i, v in enumerate(vectors)]
        return [i for _, i in sorted(sims)[:10]]
    return rank


def score(ranking: list[int], evidence: tuple[int, ...]) -> dict[str, float]:
    found = {f"r@{k}": len(set(ranking[:k]) & set(evidence)) / len(evidence) for k in KS}
    found["hit@10"] = float(bool(set(ranking[:10]) & set(evidence)))
    return found


class Evaluation:
    def __init__(self) -> None:
        self.scores: dict[str, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
        self.latency: dict[str, list[float]] = defaultdict(list)

    def add(self, system: str, category: str, ranking: list[int], evidence: tuple[int, ...], ms: float) -> None:
        result = score(ranking, evidence)
        self.scores[system][category].append(result)
        self.scores[system]["overall"].append(result)
        self.latency[system].append(ms)

    def mean(self, system: str, category: str, metric: str) -> float:
        rows = self.scores[system][category]
        return 100 * sum(r[metric] for r in rows) / len(rows) if rows else float("nan")


async def _evaluate(tmp: Path, quick: bool) -> tuple[Evaluation, dict[str, int], list[Conversation]]:
    conversations = build_dataset()[: 2 if quick else None]
    path = migrated_db(tmp / "retrieval.db")
    engine = create_db_engine(Settings(database_url=f"sqlite:///{path}", db={"sqlite_synchronous": "NORMAL"}))
    uow = UnitOfWork(engine)
    model = LocalE5Embedder()
    await model.warm()
    embedder = CachedEmbedder(uow, model)
    sizes = {"conversations": len(conversations), "turns": sum(len(c.turns) for c in conversations),
             "questions": sum(len(c.questions) for c in conversations)}
    row_of: dict[tuple[str, int], int] = {}  # (conversation, seq) -> turn index
    for conv in conversations:
        add_archived_session_by_sessions(uow, conv)
        for t in conv.turns:
            row_of[(conv.id, t.index + 1)] = t.index
    started = time.perf_counter()
    sizes["indexed"] = await index_archives(uow, embedder)
    sizes["index_s"] = round(time.perf_counter() - started)
    service = MemoryService(uow, embedder)
    memory_turn: dict[str, int] = {}
    for conv in conversations:
        caller = Caller("default", conv.id, "main")
        for t in conv.turns:
            out = await service.commit_memory(caller, NewMemory(content=t.text, category="events", title=t.speaker))
            memory = out.get("memory")
            if out["action"] == "ADD" and memory:
                memory_turn[memory["id"]] = t.index
    ev = Evaluation()
    for conv in conversations:
        raw_vectors = await embedder.embed_passages([t.text for t in conv.turns])
        queries = {q.text: await embedder.embed_query(q.text) for q in conv.questions}
        baselines = {"baseline: BM25": _bm25_baseline(conv), "baseline: dense": _dense_baseline(raw_vectors, queries)}
        for q in conv.questions:
            for name, rank in baselines.items():
                began = time.perf_counter()
                ranking = rank(q.text)
                ev.add(name, q.category, ranking, q.evidence, (time.perf_counter() - began) * 1000)
            for name, mode, fusion, vector in (
                ("archive keyword", "keyword", "calibrated", None), ("archive regex", "regex", "calibrated", None),
                ("archive ranked, lexical only", "ranked", "calibrated", None),
                ("archive ranked, hybrid RRF", "ranked", "rrf", queries[q.text]),
                ("archive ranked, hybrid calibrated", "ranked", "calibrated", queries[q.text]),
            ):
                began = time.perf_counter()
                try:
                    result = await asyncio.to_thread(search_archives, uow, "default", SearchRequest(
                        conv.id, q.text, mode=mode, limit=10, fusion=fusion), 1.0, vector)
                    ranking = [row_of[(conv.id, h["seq"])] for h in result["results"]]
                except Exception:  # noqa: BLE001 - a natural question may be an invalid regex
                    ranking = []
                ev.add(name, q.category, ranking, q.evidence, (time.perf_counter() - began) * 1000)
            await _memory_systems(ev, service, conv, q, memory_turn)
    engine.dispose()
    return ev, sizes, conversations


async def _memory_systems(ev: Evaluation, service: MemoryService, conv: Conversation, q, memory_turn: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    caller = Caller("default", conv.id, "main")
    began = time.perf_counter()
    # Decay off: the conversations are dated years back, and every turn is an event of the same user.
    found = await search_memories(service, caller, SearchInput(q.text, owners=[("user", conv.id)], limit=10, half_life_days=0))
    ev.add("memory search", q.category, [memory_turn[r["id"]] for r in found["results"] if r["id"] in memory_turn],
           q.evidence, (time.perf_counter() - began) * 1000)
    began = time.perf_counter()
    pool = await search_memories(service, caller, SearchInput(q.text, owners=[("user", conv.id)], limit=40, half_life_days=0))
    items = [{k: r[k] for k in ("id", "uri", "category", "title", "abstract", "content", "score", "level")} for r in pool["results"]]
    picked = pick_memories_for_injection(post_process_memories(items, 40, 0.0), 10, q.text, 0.0)
    ev.add("recall (injection ranking)", q.category, [memory_turn[i["id"]] for i in picked if i["id"] in memory_turn],
           q.evidence, (time.perf_counter() - began) * 1000)


def add_archived_session_by_sessions(uow: UnitOfWork, conv: Conversation) -> None:
    """One agent session per conversation, one archive per conversation session."""
    sessions = sorted({t.session for t in conv.turns})
    size = search_bench.ARCHIVE_SIZE
    search_bench.ARCHIVE_SIZE = len([t for t in conv.turns if t.session == 0])
    try:
        add_archived_session(uow, conv.id, [m for s in sessions for m in _messages(conv, s)])
    finally:
        search_bench.ARCHIVE_SIZE = size


SYSTEM_ORDER = (
    "baseline: BM25", "baseline: dense", "archive keyword", "archive regex", "archive ranked, lexical only",
    "archive ranked, hybrid RRF", "archive ranked, hybrid calibrated", "memory search", "recall (injection ranking)",
)


def _table(ev: Evaluation) -> list[str]:
    lines = ["| system | category | n | recall@1 | recall@5 | recall@10 | hit@10 |", "|---|---|---|---|---|---|---|"]
    for system in SYSTEM_ORDER:
        for category in ("overall", *CATEGORIES):
            n = len(ev.scores[system][category])
            cells = " | ".join(f"{ev.mean(system, category, m):.1f}" for m in ("r@1", "r@5", "r@10", "hit@10"))
            lines.append(f"| {system} | {category} | {n} | {cells} |")
    return lines


def _margins(ev: Evaluation, system: str) -> list[str]:
    out = []
    for category in ("overall", *CATEGORIES):
        ours = ev.mean(system, category, "r@10")
        bm25 = ev.mean("baseline: BM25", category, "r@10")
        dense = ev.mean("baseline: dense", category, "r@10")
        out.append(f"| {system} | {category} | {ours:.1f} | {ours - bm25:+.1f} | {ours - dense:+.1f} |")
    return out


def write_results(ev: Evaluation, sizes: dict[str, int], latency_lines: list[str]) -> None:
    p50 = {s: summary(v)[0] for s, v in ev.latency.items() if v}
    text = [
        "# Retrieval evaluation", "",
        "Written by `python -m bench retrieval` (`bench/retrieval.py`; dataset `bench/conversations.py`).", "",
        "## Dataset", "",
        f"{sizes['conversations']} generated conversations (5 English, 3 Chinese), {sizes['turns']} turns in ten dated "
        f"sessions each, {sizes['questions']} questions labelled with their evidence turns. Every turn starts with its "
        "speaker's name; most turns are small talk from a shared pool of everyday sentences; about a dozen turns per "
        "conversation state facts, 60% of them with a relative date. Questions: single-hop (one fact, in the asker's "
        "words), multi-hop (two facts of one speaker from different sessions), temporal (what a speaker did on a "
        "calendar day that the turn only called \"yesterday\", \"last week\", \"上周\"...), paraphrase (the fact in other "
        "words) and adversarial (the fact asked about the other speaker; the evidence is the turn holding the fact). "
        "Generated with a fixed seed from tables in the code: no public data.", "",
        "Each conversation is one agent session whose ten sessions are ten archives; the archived messages' search "
        f"facts and vectors were written by the Phase 2 functions ({sizes['indexed']} messages in {sizes['index_s']} s "
        "with the local model, 2 CPU cores). Each conversation is also one user's memories: every turn committed with "
        "`commit_memory` (repeated small talk is deduplicated; questions only target unique turns).", "",
        "Baselines, computed in the same run over the same turns: **BM25** (Okapi k1 1.2, b 0.75, lowercase words "
        "and CJK character pairs, English and Chinese stop words removed, no stemming, the conversation's own "
        "statistics) and **dense** (cosine between the local model's query vector and each turn's passage vector, "
        "the turn as stored).", "",
        "## Results (recall@k and hit@10 in %)", "", *_table(ev), "",
        "## recall@10 against the baselines (points)", "",
        "| system | category | recall@10 | vs BM25 | vs dense |", "|---|---|---|---|---|",
        *_margins(ev, "archive ranked, hybrid calibrated"), *_margins(ev, "archive ranked, hybrid RRF"),
        *_margins(ev, "memory search"), *_margins(ev, "recall (injection ranking)"), "",
        "## Latency on this dataset (p50 per query, ms, in process, 300-turn sessions)", "",
        "| system | p50 ms |", "|---|---|", *[f"| {s} | {p50[s]:.1f} |" for s in SYSTEM_ORDER if s in p50], "",
        *latency_lines,
    ]
    RESULTS.write_text("\n".join(text) + "\n")


def run(cfg: Config) -> list[Row]:
    with temp_dir("retrieval") as tmp:
        ev, sizes, _ = asyncio.run(_evaluate(tmp, cfg.quick))
    latency_rows, latency_lines = measure_latency(cfg)
    if not cfg.quick:
        write_results(ev, sizes, latency_lines)
    rows = []
    for system in SYSTEM_ORDER:
        p50, p99 = summary(ev.latency[system])
        rows.append(Row(name=f"retrieval: {system}", workload=f"{sizes['questions']} questions, recall@10 overall",
                        p50_ms=p50, p99_ms=p99, target="-", figure=ev.mean(system, "overall", "r@10"),
                        target_value=None, samples=len(ev.latency[system]), unit="%"))
    return rows + latency_rows
