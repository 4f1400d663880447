"""Memory search over 1k → 10k → 100k chunks in ONE user's partition on PostgreSQL (pgvector).

    .venv/bin/python -m bench.memory_search_postgres [--quick] [--no-write]

The PostgreSQL twin of ``bench/memory_search.py``: the same synthetic corpus (same seeds, the same
1,000-chunk neighbour user), the same four queries, the same ``search_memories`` call with the
defaults of ``POST /memories/search`` and the ``FixedVectors`` stand-in embedder (the query
embedding is not timed). The vectors differ: an HNSW index is approximate, and its recall and
speed depend on how vectors spread. Random unit vectors (the SQLite benchmark's, whose search is
exact) are its worst case; here the chunks' vectors are drawn from a Gaussian fitted to the local
model's embeddings of a sample of the corpus, and the query vectors are real query embeddings
(``bench/vector_shapes.py``). The database is a throwaway PostgreSQL 15
server (tests/helpers/postgres.py, ``shared_buffers`` raised from the tests' 64MB to 512MB so the
100k vectors and their HNSW index stay in the server's cache), migrated by the app's migrations.

Build: the rows go in through ``bench.memory_search.insert_memories`` (SQLAlchemy inserts for the
memory and chunk rows, the dialect's ``index_memory_chunks`` and ``store_chunk_vectors`` for the
word index and the vectors) while the HNSW index of ``memory_vec`` is dropped; after each size it
is created again from its own definition (read from ``pg_indexes``, so the schema stays the
migration's) and the loaded tables are vacuumed and analysed, as autovacuum leaves them after a
bulk load (the postings are read by index-only scans, slow until the visibility map is set). Building the index once over all rows is much quicker
than inserting 100k vectors into it one by one; the build time printed is load + index.

Measured at each size, in process, no HTTP:
- *search*: the whole ``search_memories`` call (KNN of both owners, the word index, loading the
  rows, merge, decay, MMR), the four queries in turn;
- *KNN*: the dialect's ``nearest_memory_chunks`` over the user's partition (k = 40, the search's
  pool) for the four query vectors and real query embeddings of more corpus titles, and the plan
  it got;
- *exact*: the same ORDER BY with index scans off (``SET LOCAL enable_indexscan = off``: the owner
  b-tree as a bitmap scan and a sort of every distance), the reference for the KNN's recall@10
  (and recall@40, the whole pool) over the same vectors in the same run, and the recall, time and
  plan at other ``hnsw.ef_search`` values (``EF_SWEEP``);
- *text*: the dialect's ``match_memory_chunks`` alone (the best postings of each query term,
  FTS5's bm25() over those candidates) per query, and once per query how much of the exhaustive
  ranking (every matching chunk scored with the same statistics) it found: the share of its best
  10 (40) that score at least as well as the exhaustive 10th (40th); chunks of equal score count
  alike, since a templated corpus has thousands of ties.

A statement still running after the time limit is cancelled (``statement_timeout``) and counted at
that time (a lower bound). The run writes its section of ``bench/RESULTS.md`` (between its own
markers) unless ``--no-write``. Not part of ``python -m bench``: it needs a PostgreSQL server.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from app.core.clock import utcnow
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.postgres.knn import EF_SEARCH, tune_vector_scan
from app.db.postgres.literals import tsquery_literal, vector_literal
from app.db.postgres.memory_postings import read_statistics
from app.db.postgres.memory_vectors import MEMORY_VEC
from app.db.uow import UnitOfWork
from app.memory.records import owner_key
from app.memory.search.hybrid import MIN_POOL, SearchInput
from app.search.bm25 import fts5_idf
from app.search.phrases import Phrase
from app.search.postings import score_chunk
from app.search.text.memory_phrases import memory_phrases
from app.search.text.query import parse_query
from app.settings import Settings
from bench.common import REPO_ROOT, Config, Row, fmt_ms, percentile, print_table, summary
from bench.memory_search import (
    AGENT,
    NEIGHBOUR,
    NEIGHBOUR_SIZE,
    PLANTED_COUNT,
    QUERIES,
    TARGET_P95_MS,
    TENANT,
    USER,
    Deadline,
    Series,
    SizeResult,
    _measure,
    _p50_p95,
    _plan,
    insert_memories,
    user_corpus,
)
from bench.peer.report import load, machine, write_results
from bench.vector_shapes import draw, embed_shape
from tests.helpers import postgres

HNSW_INDEX = "ix_memory_vec_hnsw"
EF_SWEEP = (100, 200, 400, 800)  # hnsw.ef_search values tried besides the dialect's own choice
SERVER_SETTINGS = {"shared_buffers": "512MB"}
BUILD_MEMORY = "1GB"  # maintenance_work_mem of the index build: the whole graph built in memory
START = "<!-- bench-memory-search-postgres:start -->"
END = "<!-- bench-memory-search-postgres:end -->"
RESULTS = REPO_ROOT / "bench" / "RESULTS.md"
LOADED_TABLES = (
    "memories",
    "memory_chunks",
    "memory_fts",
    "memory_vec",
    "memory_postings",
    "memory_terms",
    "memory_partitions",
)
FIT_SAMPLE = 1000  # corpus texts embedded for the vectors' shape (a quarter with --quick)
POOL = max(SearchInput(query="x").limit * 4, MIN_POOL)  # the search's KNN k
KNN_SQL = (
    f"SELECT chunk_id, embedding <=> CAST(:v AS vector) AS distance FROM {MEMORY_VEC} "
    "WHERE owner = :owner ORDER BY distance LIMIT :k"
)


class StatementTimeout(Deadline):
    """``Deadline`` on PostgreSQL: the server cancels a statement running past the time limit."""

    STOPPED = "statement timeout"

    def __init__(self, engine: Engine, limit_s: float) -> None:
        self._timeout_ms = int(limit_s * 1000)
        super().__init__(engine)

    def _on_connect(self, dbapi_conn: Any, _record: Any) -> None:
        with dbapi_conn.cursor() as cursor:
            cursor.execute(f"SET statement_timeout = {self._timeout_ms}")
        dbapi_conn.commit()


@dataclass
class Point:
    """One size: the searches (``bench.memory_search``'s result), the parts alone, the recall."""

    size: int
    load_s: float
    index_s: float
    search: SizeResult
    parts: dict[str, Series] = field(default_factory=dict)
    recall10: list[float] = field(default_factory=list)
    recall40: list[float] = field(default_factory=list)
    plan: str = "?"
    sweep: dict[int, list[float]] = field(default_factory=dict)  # hnsw.ef_search → recall@10
    sweep_plans: dict[int, str] = field(default_factory=dict)
    # share of the text side's best 10 (40) that score as the exhaustive ranking's best 10 (40)
    text_overlap10: list[float] = field(default_factory=list)
    text_overlap40: list[float] = field(default_factory=list)


def _engine(url: str) -> Engine:
    return create_db_engine(Settings(database_url=url))


def _rebuild_index(engine: Engine, definition: str) -> None:
    with engine.begin() as conn:
        conn.execute(text(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'"))
        conn.execute(text(definition))
    # VACUUM as autovacuum would after a bulk load: the postings are read by index-only scans,
    # which visit the table for every row until the visibility map is set.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f"VACUUM ANALYZE {', '.join(LOADED_TABLES)}"))


def _parts(
    uow: UnitOfWork,
    deadline: Deadline,
    point: Point,
    knn: list[list[float]],
    rounds: int,
    limit_s: float,
) -> None:
    """The KNN, the exact search and the text side alone, each call in a read transaction of its own."""
    partition = owner_key(TENANT, ("user", USER))
    owners = [("user", USER), ("agent", AGENT)]

    def timed(name: str, fn: Callable[[Session], Any]) -> Any:
        series = point.parts.setdefault(name, Series())
        if series.stopped:
            return None  # stopped once: as slow again, not worth the time
        with uow.read() as db:
            db.execute(text("SELECT 1"))  # the transaction's start is not timed
            ms, finished, value = deadline.call(lambda: fn(db), limit_s)
        series.samples.append(ms)
        series.stopped += 0 if finished else 1
        return value if finished else None

    def ids(db: Session, vector: list[float], settings: dict[str, str]) -> list[int]:
        for name, value in settings.items():
            db.execute(text("SELECT set_config(:s, :v, true)"), {"s": name, "v": value})
        params = {"v": vector_literal(vector), "owner": partition, "k": POOL}
        return [int(r) for r, _ in db.execute(text(KNN_SQL), params)]

    def plan_at(ef: int | None) -> str:
        with uow.read() as db:
            tune_vector_scan(db, POOL)
            if ef is not None:
                db.execute(text("SELECT set_config('hnsw.ef_search', :v, true)"), {"v": str(ef)})
            params = {"v": vector_literal(knn[0]), "owner": partition, "k": POOL}
            plan = "\n".join(r for (r,) in db.execute(text(f"EXPLAIN {KNN_SQL}"), params))
        return "HNSW" if HNSW_INDEX in plan else "exact"

    point.plan = plan_at(None)
    point.sweep_plans = {ef: plan_at(ef) for ef in EF_SWEEP}

    for vector in knn:
        found = timed(
            "knn",
            lambda db, v=vector: uow.storage.memory_vectors.nearest_memory_chunks(
                db, partition, v, POOL
            ),
        )
        # exact: no index scan (so no HNSW), every distance of the partition sorted
        truth = timed("exact", lambda db, v=vector: ids(db, v, {"enable_indexscan": "off"}))
        if truth is None:
            continue
        if found is not None:
            got = [h.row_id for h in found]
            point.recall10.append(len(set(got[:10]) & set(truth[:10])) / 10)
            point.recall40.append(len(set(got) & set(truth)) / max(1, len(truth)))
        for ef in EF_SWEEP if "HNSW" in point.sweep_plans.values() else ():
            scan = {"hnsw.iterative_scan": "strict_order", "hnsw.ef_search": str(ef)}
            got = timed(f"ef {ef}", lambda db, v=vector, scan=scan: ids(db, v, scan))
            if got is not None:
                point.sweep.setdefault(ef, []).append(len(set(got[:10]) & set(truth[:10])) / 10)
    for _ in range(rounds):
        for label, query in QUERIES:
            phrases = memory_phrases(parse_query(query, today=utcnow().date()))
            expression = phrases
            timed(
                f"text {label}",
                lambda db, e=expression: uow.storage.memory_words.match_memory_chunks(
                    db, TENANT, owners, e, POOL
                ),
            )
    _text_overlap(uow, point, owners)


def _text_overlap(uow: UnitOfWork, point: Point, owners: list[tuple[str, str]]) -> None:
    """How much of the exhaustive text ranking (every matching chunk scored, the same statistics)
    the postings' candidates find, per query, at this size: the share of the text side's best k
    that score as well as the exhaustive k-th best. Chunks of equal score are interchangeable:
    where thousands tie (a templated corpus), which of them is returned does not matter."""
    partitions = [owner_key(TENANT, owner) for owner in owners]
    for _, query in QUERIES:
        expression = memory_phrases(parse_query(query, today=utcnow().date()))
        with uow.read() as db:
            hits = uow.storage.memory_words.match_memory_chunks(
                db, TENANT, owners, expression, POOL
            )
            best = _exhaustive_text_ranking(db, partitions, expression, POOL)
        found = [h.score or 0.0 for h in hits]
        for k, into in ((10, point.text_overlap10), (POOL, point.text_overlap40)):
            if best[:k]:
                kth = best[:k][-1] + 1e-9  # bm25() is negative: lower is better
                into.append(sum(1 for score in found[:k] if score <= kth) / len(best[:k]))


def _exhaustive_text_ranking(
    db: Session, partitions: list[str], phrases: list[Phrase], k: int
) -> list[float]:
    """The best k scores of every matching chunk, best first."""
    stats = read_statistics(db, partitions, phrases)
    idfs = [fts5_idf(stats.chunks, f) for f in stats.frequencies]
    rows = db.execute(
        text(
            "SELECT id, tokens FROM memory_fts WHERE partition = ANY(:parts) "
            "AND words @@ CAST(:q AS tsquery)"
        ),
        {"parts": partitions, "q": tsquery_literal(phrases)},
    )
    scored = sorted(score_chunk(list(tokens), phrases, idfs, stats.average) for _, tokens in rows)
    return [score for score in scored if score < 0][:k]


def run(cfg: Config, server: postgres.PostgresServer) -> tuple[list[Point], str]:
    """Build and measure at each size; the points and the pgvector version."""
    sizes = [1000, 10000] if cfg.quick else [1000, 10000, 100000]
    largest = sizes[-1]
    # The same draws, in the same order, as bench/memory_search.py: the same corpus and vectors.
    np_rng = np.random.default_rng(20251122)
    rng = random.Random(42)
    corpus, _ = user_corpus(largest, seed=7, planted=PLANTED_COUNT)
    # Vectors of the shape of real embeddings (bench/vector_shapes.py): the knn's other query
    # vectors are real query embeddings of texts from the end of the corpus.
    extra = [m.title for m in corpus[-cfg.pick(46, 16) :]]
    started = time.perf_counter()
    embedded = embed_shape(
        [m.content for m in corpus[: cfg.pick(FIT_SAMPLE, FIT_SAMPLE // 4)]],
        [q for _, q in QUERIES] + extra,
    )
    print(
        f"  vector shape fitted in {time.perf_counter() - started:.1f} s "
        f"({embedded.shape.effective_dimensions:.1f} effective dimensions)"
    )
    vectors = {q: v.tolist() for (_, q), v in zip(QUERIES, embedded.queries, strict=False)}
    knn = embedded.queries.tolist()
    now = utcnow()
    url = server.create_database()
    engine = _engine(url)
    upgrade_to_head(engine)
    with engine.connect() as conn:
        definition = conn.execute(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = :n"), {"n": HNSW_INDEX}
        ).scalar_one()
        version = conn.execute(
            text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        ).scalar_one()
    points: list[Point] = []
    have = 0
    try:
        for size in sizes:
            with engine.begin() as conn:
                conn.execute(text(f"DROP INDEX IF EXISTS {HNSW_INDEX}"))
            builder = UnitOfWork(engine)
            started = time.perf_counter()
            if have == 0:
                others, _ = user_corpus(NEIGHBOUR_SIZE, seed=8)
                neighbour_vectors = draw(embedded.shape, NEIGHBOUR_SIZE, np_rng)
                insert_memories(builder, ("user", NEIGHBOUR), others, neighbour_vectors, rng, now)
            user_vectors = draw(embedded.shape, size - have, np_rng)
            insert_memories(builder, ("user", USER), corpus[have:size], user_vectors, rng, now)
            load_s = time.perf_counter() - started
            started = time.perf_counter()
            _rebuild_index(engine, definition)
            index_s = time.perf_counter() - started
            have = size
            plan = _plan(cfg, size == largest)
            uow = UnitOfWork(_engine(url))
            deadline = StatementTimeout(uow.engine, plan.fixed.limit_s)
            try:
                search = asyncio.run(
                    _measure(uow, deadline, size, vectors, None, plan, size == largest)
                )
                point = Point(size, load_s, index_s, search)
                _parts(uow, deadline, point, knn, cfg.pick(5, 3), plan.fixed.limit_s)
            finally:
                uow.engine.dispose()
            points.append(point)
            print(
                f"  {size // 1000}k built (load {load_s:.1f} s, index {index_s:.1f} s) and measured"
            )
    finally:
        engine.dispose()
    return points, str(version)


def _k(n: int) -> str:
    return f"{n // 1000}k"


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "-"


def _series(point: Point, step: str) -> Series:
    """Every sample of a step: the searches, or the parts named ``step…``."""
    if step == "search":
        parts = list(point.search.fixed.values())
    else:
        parts = [series for name, series in point.parts.items() if name.startswith(step)]
    return Series([s for x in parts for s in x.samples], sum(x.stopped for x in parts))


def _cell(series: Series) -> str:
    return _p50_p95(series.samples) + (f" ({series.stopped} stopped)" if series.stopped else "")


STEPS = [
    ("search", "memory search, PostgreSQL (no embedding)", "search_memories, hybrid, limit 10"),
    ("knn", "memory KNN alone, PostgreSQL", "nearest_memory_chunks, k=40, user's partition"),
    ("exact", "exact KNN (index scans off)", "the same ORDER BY, every distance sorted"),
    ("text", "memory text side alone, PostgreSQL", "match_memory_chunks, postings + bm25, k=40"),
]


def rows(points: list[Point]) -> list[Row]:
    top = points[-1]
    out: list[Row] = []
    for step, name, workload in STEPS:
        samples = _series(top, step).samples
        p50, p99 = summary(samples)
        target = step == "search"
        row = Row(
            name=name,
            workload=f"{top.size:,} chunks in one user's partition; {workload}",
            p50_ms=p50,
            p99_ms=p99,
            target=f"p95<={TARGET_P95_MS} ms" if target else "-",
            figure=percentile(samples, 95),
            target_value=TARGET_P95_MS if target else None,
            samples=len(samples),
        )
        growth = " -> ".join(f"{_k(p.size)}: {_cell(_series(p, step))}" for p in points)
        row.notes.append(f"figure = p95; growth p50/p95 ms {growth}")
        out.append(row)
    per_query = ", ".join(
        f"{label} {_p50_p95(top.search.fixed[label].samples)} ({top.search.hits.get(q, 0)} hits)"
        for label, q in QUERIES
    )
    out[0].notes.append(f"per query at {_k(top.size)}, p50/p95 ms: {per_query}")
    if top.search.neighbour.samples:
        out[0].notes.append(
            f"a {_k(NEIGHBOUR_SIZE)}-chunk user in the same database: p50/p95 {_cell(top.search.neighbour)} ms"
        )
    out[0].notes.append(
        "built (load + HNSW index): "
        + ", ".join(f"{_k(p.size)} {p.load_s:.1f} + {p.index_s:.1f} s" for p in points)
    )
    out[1].notes.append("plan: " + ", ".join(f"{_k(p.size)} {p.plan}" for p in points))
    for p in points:
        if p.sweep:
            out[1].notes.append(
                f"hnsw.ef_search at {_k(p.size)} (the dialect: {EF_SEARCH}), recall@10 / KNN p50 ms: "
                + ", ".join(
                    f"{ef} {_mean(r)} / {fmt_ms(percentile(p.parts[f'ef {ef}'].samples, 50))} "
                    f"({p.sweep_plans[ef]})"
                    for ef, r in p.sweep.items()
                )
            )
    per_text = ", ".join(
        f"{label} {_cell(top.parts.get(f'text {label}', Series()))}" for label, _ in QUERIES
    )
    out[3].notes.append(f"per query at {_k(top.size)}, p50/p95 ms: {per_text}")
    return out


def recall_line(points: list[Point]) -> str:
    return (
        "recall of the dialect's KNN against exact search, @10 (@40): "
        + ", ".join(f"{_k(p.size)} {_mean(p.recall10)} ({_mean(p.recall40)})" for p in points)
        + f" over {len(points[-1].recall10)} query vectors"
    )


def markdown(points: list[Point], version: str, load_before: str) -> str:
    m = machine()
    m.load_before = load_before
    head = "| step | " + " | ".join(f"{_k(p.size)} p50/p95 ms" for p in points) + " |"
    lines = [
        "## Memory search on PostgreSQL (`python -m bench.memory_search_postgres`)",
        "",
        f"{datetime.now(UTC):%Y-%m-%d}, commit {m.commit}: {m.cpus} × {m.cpu_model}, {m.memory_gb:.0f} GB, "
        f"Python {m.python}; PostgreSQL 15 + pgvector {version} on a unix socket, `shared_buffers` "
        f"{SERVER_SETTINGS['shared_buffers']}, durability off (tests/helpers/postgres.py). Load average "
        f"(1, 5, 15 min) before {load_before}, after {load()}. One user's partition at each size plus "
        f"a {NEIGHBOUR_SIZE:,}-chunk neighbour; synthetic text; vectors drawn from a Gaussian fitted to "
        f"the local model's embeddings of {FIT_SAMPLE:,} corpus texts, real query embeddings "
        "(bench/vector_shapes.py); target from "
        f"docs/quality.md: memory search p95 ≤ {TARGET_P95_MS} ms.",
        "",
        head,
        "|---" * (len(points) + 1) + "|",
    ]
    for step, name, _ in STEPS:
        lines.append(f"| {name} | " + " | ".join(_cell(_series(p, step)) for p in points) + " |")
    lines.append(
        "| recall@10 (@40) of the KNN against exact | "
        + " | ".join(f"{_mean(p.recall10)} ({_mean(p.recall40)})" for p in points)
        + " |"
    )
    lines.append(
        "| text side: share of its best 10 (40) scoring as the exhaustive BM25 best 10 (40) do | "
        + " | ".join(f"{_mean(p.text_overlap10)} ({_mean(p.text_overlap40)})" for p in points)
        + " |"
    )
    lines.append("| KNN plan | " + " | ".join(p.plan for p in points) + " |")
    lines.append(
        "| build: load + HNSW index, s | "
        + " | ".join(f"{p.load_s:.1f} + {p.index_s:.1f}" for p in points)
        + " |"
    )
    top = rows(points)
    lines += ["", *(f"- {r.name}: {note}" for r in top for note in r.notes[1:])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="1k and 10k, fewer samples")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    load_before = load()
    with postgres.postgres_server(SERVER_SETTINGS) as server:
        points, version = run(Config(quick=args.quick), server)
    table = rows(points)
    print_table(table)
    print(f"\n  {recall_line(points)}")
    if not args.no_write:
        write_results(RESULTS, markdown(points, version, load_before), START, END)
        print(f"\n  written to {RESULTS.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
