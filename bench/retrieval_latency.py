"""Archive search latency with vectors for every archived message: one session of
100,000 archived messages (10,000 with ``--quick``) built like ``bench/search.py``, plus a vector
per message and per passage (app/core/passages.py) and a search-facts row per message, as Phase 2
leaves them. Building 100k vectors with the model
would take about half an hour on 2 cores, so the vectors are random unit vectors: the KNN costs
what it costs (it reads every vector of the session), not its scores. Timed in process:
``search_archives`` for keyword, ranked lexical-only and ranked hybrid (a random query vector),
four queries each; docs/quality.md sets p50 <= 50 ms for keyword search at this size."""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
from sqlalchemy import text

from app.archives.indexing import MessageVectors, facts_of, write_search_index
from app.archives.search import QueryVectors
from app.archives.service import SearchRequest
from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.sessions.archived import search_archives
from app.settings import Settings
from bench.common import Config, Row, summary, temp_dir
from bench.search import build_db
from bench.workload import CHINESE_TERM, COMMON_TERM, SELECTIVE_TERM

QUERIES = [
    ("selective", SELECTIVE_TERM),
    ("common", COMMON_TERM),
    ("chinese", CHINESE_TERM),
    ("question", "why did the deploy of the billing service fail yesterday?"),
]
TARGET_MS = 50


def _unit(rng: random.Random) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(384)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def _units(generator: np.random.Generator, count: int) -> list[list[float]]:
    v = generator.standard_normal((count, 384), dtype=np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).tolist()  # type: ignore[no-any-return]


def _add_vectors(uow: UnitOfWork) -> None:
    """What Phase 2 writes per archive (facts, session statistics, vectors), random vectors."""
    generator = np.random.default_rng(3)
    with uow.read() as db:
        archive_pks = [pk for (pk,) in db.execute(text("SELECT id FROM archives ORDER BY id"))]
    for pk in archive_pks:
        with uow.read() as db:
            facts = facts_of(
                list(
                    db.execute(
                        text(
                            "SELECT id, tenant_id, session_pk, search_text, body, created_at FROM messages WHERE archive_pk = :a"
                        ),
                        {"a": pk},
                    )
                )
            )
        vectors = {
            f.message_id: MessageVectors(whole, tuple(_units(generator, len(f.passages))))
            for f, whole in zip(facts, _units(generator, len(facts)), strict=True)
        }
        with uow.write() as db:
            write_search_index(db, uow.dialect, facts, vectors, "random")


def measure_latency(cfg: Config) -> tuple[list[Row], list[str]]:
    size = cfg.pick(100_000, 10_000)
    with temp_dir("retrieval-latency") as tmp:
        path: Path = tmp / "latency.db"
        build_s, _ = build_db(path, {"big": size})
        engine = create_db_engine(Settings(database_url=f"sqlite:///{path}"))
        uow = UnitOfWork(engine)
        started = time.perf_counter()
        _add_vectors(uow)
        vectors_s = time.perf_counter() - started
        rng = random.Random(5)
        rows: list[Row] = []
        lines = [
            f"## Latency at {size:,} archived messages with vectors",
            "",
            f"One session, built in {build_s:.0f} s, vectors and search facts added in {vectors_s:.0f} s "
            "(random unit vectors; see `bench/retrieval_latency.py`). p50 / p95 in ms over 15 calls per query "
            "after one untimed call, in process (no HTTP); the first call of each mode is given below.",
            "",
            "| mode | query | p50 ms | p95 ms | hits |",
            "|---|---|---|---|---|",
        ]
        cold: list[str] = []
        for mode, vector_of in (
            ("keyword", None),
            ("ranked lexical", None),
            ("ranked hybrid", _unit),
        ):
            samples_all: list[float] = []
            for label, query in QUERIES:
                samples = []
                hits = 0
                for call in range(16):
                    vector = QueryVectors(vector_of(rng), model="random") if vector_of else None
                    request = SearchRequest(
                        "big", query, mode="keyword" if mode == "keyword" else "ranked", limit=20
                    )
                    began = time.perf_counter()
                    result = search_archives(uow, "default", request, 1.0, vector)
                    elapsed_ms = (time.perf_counter() - began) * 1000
                    hits = len(result.results)
                    if call > 0:
                        samples.append(elapsed_ms)
                    elif not samples_all:  # a mode's first call fills caches (the vector matrix)
                        cold.append(f"{mode} ({label}) {elapsed_ms:.0f} ms")
                p50, _ = summary(samples)
                p95 = sorted(samples)[int(0.95 * (len(samples) - 1))]
                lines.append(f"| {mode} | {label} | {p50:.1f} | {p95:.1f} | {hits} |")
                samples_all += samples
            p50, p99 = summary(samples_all)
            rows.append(
                Row(
                    name=f"archive search {mode} + vectors",
                    workload=f"{size:,} archived messages, 4 queries",
                    p50_ms=p50,
                    p99_ms=p99,
                    target="p50 <= 50 ms" if mode == "keyword" else "-",
                    figure=p50,
                    target_value=TARGET_MS if mode == "keyword" else None,
                    samples=len(samples_all),
                )
            )
        engine.dispose()
    lines += [
        "",
        f"First call of each mode, untimed above: {', '.join(cold)}. A hybrid search's first call "
        "loads the session's vectors from the database into the in-process matrix that later "
        "searches reuse (app/core/vector_matrix.py).",
    ]
    return rows, lines
