"""Archive search latency with vectors for every archived message: one session of 1,000, of
10,000 and of 100,000 archived messages (the first two with ``--quick``) built like
``bench/search.py``, plus a vector
per message and per passage (app/search/text/passages.py) and a search-facts row per message, as Phase 2
leaves them. Building 100k vectors with the model
would take about half an hour on 2 cores, so the vectors are random unit vectors: the KNN costs
what it costs (it reads every vector of the session), not its scores. Timed in process:
``search_archives`` for keyword, ranked lexical-only and ranked hybrid (a random query vector),
four queries each; docs/quality.md sets p50 <= 50 ms for keyword search at this size."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

from app.archives.index.search_index import MessageVectors, facts_of, write_search_index
from app.archives.search.modes import QueryVectors
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
            write_search_index(db, uow.storage, facts, vectors, "random")


MODES = (("keyword", None), ("ranked lexical", None), ("ranked hybrid", _unit))


def measure_latency(cfg: Config) -> tuple[list[Row], list[str]]:
    """The table at 1,000, 10,000 and 100,000 archived messages (1,000 and 10,000 with
    ``--quick``); the rows of the largest size."""
    sizes = (1_000, 10_000) if cfg.quick else (1_000, 10_000, 100_000)
    lines = [
        f"## Latency at {', '.join(f'{n:,}' for n in sizes)} archived messages with vectors",
        "",
        "One session per size, vectors and search facts added as Phase 2 adds them (random unit "
        "vectors; see `bench/retrieval_latency.py`). p50 / p95 in ms over 15 calls per query after "
        "one untimed call, in process (no HTTP); the first call of each mode is given below.",
        "",
        "| messages | mode | query | p50 ms | p95 ms | hits |",
        "|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    rows: list[Row] = []
    for size in sizes:
        rows, table, note = _measure_size(size)
        lines += table
        notes.append(note)
    return rows, [*lines, "", *notes]


def _measure_size(size: int) -> tuple[list[Row], list[str], str]:
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
        table: list[str] = []
        cold: list[str] = []
        for mode, vector_of in MODES:
            samples_all: list[float] = []
            for label, query in QUERIES:
                samples, hits, first_ms = _timed_calls(uow, mode, query, vector_of, rng)
                if not samples_all:  # a mode's first call fills caches (the vector matrix)
                    cold.append(f"{mode} ({label}) {first_ms:.0f} ms")
                p50, _ = summary(samples)
                p95 = sorted(samples)[int(0.95 * (len(samples) - 1))]
                table.append(f"| {size:,} | {mode} | {label} | {p50:.1f} | {p95:.1f} | {hits} |")
                samples_all += samples
            rows.append(_row(size, mode, samples_all))
        engine.dispose()
    note = (
        f"{size:,} messages: built in {build_s:.0f} s, vectors and search facts added in "
        f"{vectors_s:.0f} s; first call of each mode, untimed above: {', '.join(cold)}. A hybrid "
        "search's first call loads the session's vectors from the database into the in-process "
        "matrix that later searches reuse (app/core/vector_matrix.py)."
    )
    return rows, table, note


def _timed_calls(
    uow: UnitOfWork, mode: str, query: str, vector_of: Any, rng: random.Random
) -> tuple[list[float], int, float]:
    """(the 15 timed calls' ms, hits of the last, the untimed first call's ms)."""
    samples: list[float] = []
    hits, first_ms = 0, 0.0
    for call in range(16):
        vector = QueryVectors(vector_of(rng), model="random") if vector_of else None
        request = SearchRequest(
            "big", query, mode="keyword" if mode == "keyword" else "ranked", limit=20
        )
        began = time.perf_counter()
        result = search_archives(uow, "default", request, 1.0, vector)
        elapsed_ms = (time.perf_counter() - began) * 1000
        hits = len(result.results)
        if call == 0:
            first_ms = elapsed_ms
        else:
            samples.append(elapsed_ms)
    return samples, hits, first_ms


def _row(size: int, mode: str, samples: list[float]) -> Row:
    p50, p99 = summary(samples)
    return Row(
        name=f"archive search {mode} + vectors",
        workload=f"{size:,} archived messages, 4 queries",
        p50_ms=p50,
        p99_ms=p99,
        target="p50 <= 50 ms" if mode == "keyword" else "-",
        figure=p50,
        target_value=TARGET_MS if mode == "keyword" else None,
        samples=len(samples),
    )
