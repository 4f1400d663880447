"""The PostgreSQL storage seams against a real server, beside SQLite's on the same data: where
the two mean the same (keyword hits, candidates, neighbours, BM25 of the word index), they must
answer the same (docs/architecture.md, Storage)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from app.db.base import Base
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.seams import Storage
from app.db.uow import UnitOfWork
from app.search.text.memory_phrases import cjk_spaced, memory_phrases
from app.search.text.query import parse_query
from app.search.text.words import chunks_with_words
from app.settings import Settings
from tests.helpers import postgres

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DIMENSIONS = 384
MESSAGES = [
    # id, session, archive, seq, role, search text, body extras, said at (ms), days mentioned
    (1, 1, 1, 1, "user", "昨天部署失败了，回滚到上一个版本", {"timestamp": 1000}, 1000, "2026-11-19"),
    (2, 1, 1, 2, "assistant", "Deployment failed because the DATABASE_URL was wrong", {}, 2000, ""),
    (3, 1, 1, 3, "toolResult", "exit code 1: permission denied (deploy)", {"toolName": "exec", "isError": True}, 3000, ""),
    (4, 1, 2, 4, "user", "deploy again tomorrow; the deploy script is ops/deploy.sh", {}, 4000, "2026-11-21"),
    (5, 1, 2, 5, "assistant", "部署成功 after fixing the url; 100% done_now", {}, 5000, ""),
    (6, 1, None, 6, "user", "a live message about deploy, not archived", {}, None, ""),
    (7, 2, 3, 1, "user", "deploy failed in the other session too", {}, 1500, ""),
    (8, 1, 2, 7, "toolResult", "ls: ok", {"toolName": "ls", "isError": False}, 6000, ""),
]  # fmt: skip
OVERVIEWS = {1: "部署失败，回滚计划 rollback plan", 2: "deploy script fixed, deploy done", 3: "x"}
MEMORIES = [
    # memory id, owner kind, owner id, title, chunk texts (chunk ids are 10 * n + index)
    ("m1", "user", "u1", "Deploy notes", ["The deploy script lives in ops/deploy.sh", "部署前先备份数据库"]),
    ("m2", "user", "u1", "Database", ["PostgreSQL listens on port 5433 for the café app"]),
    ("m3", "agent", "main", "Visits", ["visited Paris; visiting Rome next", "deploying on Fridays is risky"]),
    ("m4", "user", "u2", "Other user", ["deploy deploy deploy"]),
]  # fmt: skip


@dataclass
class Backend:
    uow: UnitOfWork
    engine: Engine

    def read(self, call: Callable[[Any, Session], Any]) -> Any:
        with self.uow.read() as db:
            return call(self.uow.storage, db)


def _backend(url: str) -> Backend:
    engine = create_db_engine(Settings(database_url=url))
    upgrade_to_head(engine)
    return Backend(UnitOfWork(engine), engine)


@pytest.fixture(scope="module")
def pair(
    server: postgres.PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Backend, Backend]]:
    """The same data in SQLite and in PostgreSQL, written through each backend's seams."""
    sqlite = _backend(f"sqlite:///{tmp_path_factory.mktemp('pg-dialect') / 'ce.db'}")
    url = server.create_database()
    pg = _backend(url)
    assert sqlite.uow.storage.name == "sqlite"
    assert pg.uow.storage.name == "postgresql"
    assert not pg.uow.storage.single_writer
    for backend in (sqlite, pg):
        seed(backend)
    yield sqlite, pg
    for backend in (sqlite, pg):
        backend.engine.dispose()
    server.drop_database(url)


def _vector(seed: int) -> list[float]:
    values = np.random.default_rng(seed).standard_normal(DIMENSIONS)
    return [float(x) for x in values / np.linalg.norm(values)]


def _insert(db: Session, table: str, rows: list[dict[str, Any]]) -> None:
    db.execute(Base.metadata.tables[table].insert(), rows)


def seed(backend: Backend) -> None:
    counters = {
        "live_count": 0,
        "total_message_count": 0,
        "last_seq": 0,
        "pending_tokens": 0,
        "keep_recent_count": 10,
        "commit_count": 0,
        "archive_count": 0,
        "llm_prompt_tokens": 0,
        "llm_completion_tokens": 0,
        "created_at": NOW,
        "updated_at": NOW,
    }
    with backend.uow.write() as db:
        storage = backend.uow.storage
        _insert(
            db,
            "agent_sessions",
            [
                {"id": pk, "tenant_id": "t", "session_id": f"s{pk}", "agent_id": "main"}
                | {"user_id": "u1", **counters}
                for pk in (1, 2)
            ],
        )
        archive_sessions = {1: 1, 2: 1, 3: 2}
        _insert(
            db,
            "archives",
            [
                {
                    "id": pk,
                    "tenant_id": "t",
                    "session_pk": session_pk,
                    "archive_index": pk,
                    "status": "completed",
                    "overview": OVERVIEWS[pk],
                    "abstract": "",
                    "overview_tokens": 1,
                    "message_count": 1,
                    "message_tokens": 1,
                    "first_seq": 1,
                    "last_seq": 1,
                    "keep_recent_count": 10,
                    "created_at": NOW,
                }
                for pk, session_pk in archive_sessions.items()
            ],
        )
        messages, facts = [], []
        for pk, session_pk, archive_pk, seq, role, search, extra, said_at, days in MESSAGES:
            body = json.dumps({"role": role, "content": search, **extra}, ensure_ascii=False)
            messages.append(
                {
                    "id": pk,
                    "tenant_id": "t",
                    "session_pk": session_pk,
                    "archive_pk": archive_pk,
                    "seq": seq,
                    "role": role,
                    "body": body,
                    "search_text": search,
                    "tokens": 1,
                    "fingerprint": f"f{pk}",
                    "created_at": NOW,
                }
            )
            if archive_pk is not None:
                facts.append(
                    {
                        "message_id": pk,
                        "tenant_id": "t",
                        "session_pk": session_pk,
                        "said_at_ms": said_at,
                        "dates": days,
                        "token_count": 1,
                    }
                )
        _insert(db, "messages", messages)
        _insert(db, "message_search", facts)
        archived = [(m["id"], m["search_text"]) for m in messages if m["archive_pk"]]
        storage.text.index_messages(db, archived)
        for archive_pk, overview in OVERVIEWS.items():
            storage.text.index_archive_overview(db, archive_pk, overview)
        storage.message_vectors.store_message_vectors(
            db,
            [(pk, s, t, _vector(pk)) for pk, s, a, _, _, _, _, t, _ in MESSAGES if a is not None],
        )
        _seed_memories(db, storage)


def _seed_memories(db: Session, storage: Storage) -> None:
    for n, (memory_id, kind, owner_id, title, chunks) in enumerate(MEMORIES, start=1):
        _insert(
            db,
            "memories",
            [
                {
                    "id": memory_id,
                    "tenant_id": "t",
                    "owner_kind": kind,
                    "owner_id": owner_id,
                    "uri": f"mem://{memory_id}",
                    "category": "fact",
                    "title": title,
                    "content": "\n".join(chunks),
                    "created_at": NOW,
                    "updated_at": NOW,
                }
            ],
        )
        ids = [10 * n + i for i in range(len(chunks))]
        _insert(
            db,
            "memory_chunks",
            [
                {"id": i, "tenant_id": "t", "memory_id": memory_id, "chunk_index": c, "text": t}
                for c, (i, t) in enumerate(zip(ids, chunks, strict=True))
            ],
        )
        owner = f"t:{kind}:{owner_id}"
        storage.memory_words.index_memory_chunks(
            db,
            chunks_with_words(
                [(i, owner, cjk_spaced(f"{title}\n{t}")) for i, t in zip(ids, chunks, strict=True)]
            ),
        )
        storage.memory_vectors.store_chunk_vectors(db, [(i, owner, _vector(1000 + i)) for i in ids])


def both(pair: tuple[Backend, Backend], call: Callable[[Any, Session], Any]) -> tuple[Any, Any]:
    return pair[0].read(call), pair[1].read(call)


@pytest.mark.parametrize(
    "terms",
    [
        ["部署失败"],
        ["deploy"],
        ["DEPLOY"],
        ["failed"],
        ["deploy", "script"],
        ["url"],
        ["100%"],
        ["done_now"],
        ["nothing-here"],
        ["permission", "deploy"],
    ],
)
def test_keyword_hits_are_the_same(pair: tuple[Backend, Backend], terms: list[str]) -> None:
    for archive_pk in (None, 1, 2):
        sqlite, pg = both(
            pair,
            lambda d, db, a=archive_pk: [
                h.row_id for h in d.text.match_messages(db, 1, terms, a, False)
            ],
        )
        assert pg == sqlite, (terms, archive_pk)
        sqlite, pg = both(
            pair,
            lambda d, db, a=archive_pk: {
                h.row_id for h in d.text.match_messages(db, 1, terms, a, True)
            },
        )
        assert pg == sqlite, (terms, archive_pk)
        for ranked in (False, True):
            sqlite, pg = both(
                pair,
                lambda d, db, a=archive_pk, r=ranked: {
                    h.row_id for h in d.text.match_overviews(db, 1, terms, a, r)
                },
            )
            assert pg == sqlite, (terms, archive_pk, ranked)


def test_ranked_hits_put_the_densest_match_first(pair: tuple[Backend, Backend]) -> None:
    sqlite, pg = both(
        pair, lambda d, db: list(d.text.match_messages(db, 1, ["deploy"], None, True))
    )
    assert pg[0].row_id == sqlite[0].row_id == 4  # "deploy" three times
    assert all(h.score is not None and h.score > 0 for h in pg)
    assert [h.score for h in pg] == sorted((h.score for h in pg), reverse=True)
    assert pair[1].read(lambda d, db: d.text.min_indexed_term_chars()) == 3


@pytest.mark.parametrize("case_sensitive", [False, True])
@pytest.mark.parametrize("terms", [["de"], ["De"], ["部署"], ["ur", "fix"], ["%"]])
def test_scans_are_the_same(
    pair: tuple[Backend, Backend], terms: list[str], case_sensitive: bool
) -> None:
    for archive_pk in (None, 2):
        sqlite, pg = both(
            pair,
            lambda d, db, a=archive_pk: d.text.scan_message_ids(db, 1, terms, a, case_sensitive),
        )
        assert pg == sqlite


@pytest.mark.parametrize(
    ("literals", "dates", "window", "budget"),
    [
        (["deploy", "ur"], [], (None, None), None),
        (["deploy"], ["2026-11-19"], (None, None), None),
        (["部署失败", "failed"], ["2026-11-21"], (1500, 4500), None),
        (["deploy", "failed"], [], (None, None), 2),
        ([], ["2026-11-21", "2026-11-19"], (None, 3000), None),
    ],
)
def test_message_candidates_are_the_same(
    pair: tuple[Backend, Backend],
    literals: list[str],
    dates: list[str],
    window: tuple[int | None, int | None],
    budget: int | None,
) -> None:
    sqlite, pg = both(
        pair, lambda d, db: d.text.message_candidates(db, 1, literals, dates, None, window, budget)
    )
    assert sorted(pg, key=lambda r: r.row_id) == sorted(sqlite, key=lambda r: r.row_id)
    assert {r.row_id for r in pg}


def test_tool_lookups_are_the_same(pair: tuple[Backend, Backend]) -> None:
    calls: list[Callable[[Any, Session], Any]] = [
        lambda d, db: d.tools.tool_results(db, "t", "main", ["exec", "ls"], 10),
        lambda d, db: d.tools.tool_results(db, "t", "main", ["exec"], 10),
        lambda d, db: d.tools.tool_results(db, "t", "main", [], 10),
        lambda d, db: d.tools.tool_calls_mentioning(db, "t", "main", "DATABASE_URL", 10),
        lambda d, db: d.tools.tool_calls_mentioning(db, "t", "main", "部署成功", 10),
        lambda d, db: d.tools.messages_after(db, 1, 2, 3),
    ]
    for call in calls:
        sqlite, pg = both(pair, call)
        assert pg == sqlite
    pg_results = pair[1].read(calls[0])
    assert [(name, error) for name, error, _ in pg_results] == [("ls", False), ("exec", True)]


@pytest.mark.parametrize(
    ("query", "owners"),
    [
        ("deploy script", [("user", "u1"), ("agent", "main")]),
        ("部署 数据库", [("user", "u1")]),
        ("visit", [("agent", "main")]),
        ("cafe port 5433", [("user", "u1")]),
        ("deploy", [("user", "u2")]),
        ('"ops deploy sh"', [("user", "u1")]),
    ],
)
def test_memory_word_index_finds_what_fts5_finds(
    pair: tuple[Backend, Backend], query: str, owners: list[tuple[str, str]]
) -> None:
    """The same chunks match; PostgreSQL scores them with the searched partitions' statistics
    (tests/db/test_postgres_memory_words.py), FTS5 with the whole index's."""
    phrases = memory_phrases(parse_query(query, today=NOW.date()))
    expression = phrases
    sqlite, pg = both(
        pair, lambda d, db: d.memory_words.match_memory_chunks(db, "t", owners, expression, 20)
    )
    assert {h.row_id for h in pg} == {h.row_id for h in sqlite}, expression
    assert pg, expression


def test_memory_neighbours_are_the_same(pair: tuple[Backend, Backend]) -> None:
    for owner in ("t:user:u1", "t:agent:main", "t:user:nobody"):
        for probe in (1000 + 10, 7, 1000 + 31):
            sqlite, pg = both(
                pair,
                lambda d, db, o=owner, p=probe: d.memory_vectors.nearest_memory_chunks(
                    db, o, _vector(p), 3
                ),
            )
            assert [h.row_id for h in pg] == [h.row_id for h in sqlite]
            assert [h.score for h in pg] == pytest.approx([h.score for h in sqlite], abs=1e-5)
    found = pair[1].read(
        lambda d, db: d.memory_vectors.nearest_memory_chunks(db, "t:user:u1", _vector(1010), 1)
    )
    assert found[0].row_id == 10 and found[0].score == pytest.approx(0.0, abs=1e-6)


def test_message_neighbours_are_the_same(pair: tuple[Backend, Backend]) -> None:
    windows: list[tuple[int | None, int | None]] = [(None, None), (2000, None), (None, 3000)]
    for window in [*windows, (2500, 5000)]:
        for probe in (1, 4, 99):
            sqlite, pg = both(
                pair,
                lambda d, db, p=probe, w=window: d.message_vectors.nearest_messages(
                    db, 1, _vector(p), 3, w
                ),
            )
            assert [h.row_id for h in pg] == [h.row_id for h in sqlite], window
            assert [h.score for h in pg] == pytest.approx([h.score for h in sqlite], abs=1e-5)


def test_probe_write_leaves_nothing(pair: tuple[Backend, Backend]) -> None:
    pg = pair[1]
    pg.uow.probe_write()
    with pg.engine.connect() as conn:
        assert conn.execute(text("SELECT to_regclass('ce_write_probe')")).scalar_one() is None


def test_unindexing_removes_every_entry(server: postgres.PostgresServer, tmp_path: Path) -> None:
    sqlite = _backend(f"sqlite:///{tmp_path / 'ce.db'}")
    url = server.create_database()
    pg = _backend(url)
    try:
        for backend in (sqlite, pg):
            seed(backend)
            with backend.uow.write() as db:
                backend.uow.storage.unindex_session(db, 1)
                backend.uow.storage.unindex_memory_chunks(db, [10, 11, 20])
        pair = (sqlite, pg)
        for terms in (["deploy"], ["部署失败"]):
            sqlite_hits, pg_hits = both(
                pair,
                lambda d, db, t=terms: [
                    h.row_id for h in d.text.match_messages(db, 1, t, None, True)
                ],
            )
            assert pg_hits == sqlite_hits == []
        sqlite_hits, pg_hits = both(
            pair, lambda d, db: list(d.text.match_overviews(db, 2, ["xx"], None, True))
        )
        assert pg_hits == sqlite_hits == []
        assert pg.read(lambda d, db: d.message_vectors.nearest_messages(db, 1, _vector(1), 5)) == []
        assert [
            h.row_id
            for h in pg.read(lambda d, db: d.message_vectors.nearest_messages(db, 2, _vector(1), 5))
        ] == [7]
        expression = memory_phrases(parse_query("deploy", today=NOW.date()))
        owners = [("user", "u1"), ("agent", "main"), ("user", "u2")]
        sqlite_hits, pg_hits = both(
            pair,
            lambda d, db: [
                h.row_id for h in d.memory_words.match_memory_chunks(db, "t", owners, expression, 9)
            ],
        )
        assert pg_hits == sqlite_hits and 10 not in pg_hits and pg_hits
        sqlite_hits, pg_hits = both(
            pair,
            lambda d, db: d.memory_vectors.nearest_memory_chunks(db, "t:user:u1", _vector(1010), 5),
        )
        assert pg_hits == sqlite_hits == []
    finally:
        sqlite.engine.dispose()
        pg.engine.dispose()
        server.drop_database(url)


def test_hnsw_recall_against_exact_search(
    server: postgres.PostgresServer, record_property: Callable[[str, object], None]
) -> None:
    """The HNSW path (forced) finds the exact k nearest of an owner among other owners' vectors:
    the recall quoted in app/db/postgres/knn.py."""
    url = server.create_database()
    pg = _backend(url)
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2000, DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = ["t:user:a" if i % 4 else "t:user:b" for i in range(len(vectors))]
    try:
        with pg.uow.write() as db:
            _insert(
                db,
                "memories",
                [
                    {"id": "m", "tenant_id": "t", "owner_kind": "user", "owner_id": "a"}
                    | {"uri": "mem://m", "category": "fact", "created_at": NOW, "updated_at": NOW}
                ],
            )
            _insert(
                db,
                "memory_chunks",
                [
                    {"id": i + 1, "tenant_id": "t", "memory_id": "m", "text": ""}
                    for i in range(2000)
                ],
            )
            pg.uow.storage.memory_vectors.store_chunk_vectors(
                db, [(i + 1, owners[i], [float(x) for x in v]) for i, v in enumerate(vectors)]
            )
        mine = np.array([o == "t:user:a" for o in owners])
        found_total = 0
        queries = rng.standard_normal((20, DIMENSIONS)).astype(np.float32)
        for query in queries:
            distances = 1 - vectors @ (query / np.linalg.norm(query))
            distances[~mine] = np.inf
            exact = {int(i) + 1 for i in np.argsort(distances)[:10]}
            with pg.uow.read() as db:
                planned = pg.uow.storage.memory_vectors.nearest_memory_chunks(
                    db, "t:user:a", list(query), 10
                )
                assert {h.row_id for h in planned} == exact  # the planner's own choice
                db.execute(text("SET LOCAL enable_seqscan = off"))
                db.execute(text("SET LOCAL enable_sort = off"))  # only HNSW gives the order
                plan = db.execute(
                    text(
                        "EXPLAIN SELECT chunk_id FROM memory_vec WHERE owner = 't:user:a' "
                        "ORDER BY embedding <=> CAST(:v AS vector) LIMIT 10"
                    ),
                    {"v": "[" + ",".join(str(float(x)) for x in query) + "]"},
                ).all()
                assert "ix_memory_vec_hnsw" in " ".join(str(r[0]) for r in plan)
                hits = pg.uow.storage.memory_vectors.nearest_memory_chunks(
                    db, "t:user:a", list(query), 10
                )
            assert len(hits) == 10
            found_total += len({h.row_id for h in hits} & exact)
        recall = found_total / (10 * len(queries))
        record_property("hnsw_recall_at_10", recall)
        assert recall >= 0.95, recall
    finally:
        pg.engine.dispose()
        server.drop_database(url)


def test_session_lock_makes_a_second_writer_wait(pair: tuple[Backend, Backend]) -> None:
    pg = pair[1]
    storage = pg.uow.storage
    assert storage.name == "postgresql"
    order: list[str] = []
    holding = threading.Event()

    def first() -> None:
        with pg.uow.write() as db:
            storage.locks.lock_session(db, "t", "s1")
            holding.set()
            time.sleep(0.3)
            order.append("first commits")

    def second() -> None:
        holding.wait(5)
        with pg.uow.write() as db:
            storage.locks.lock_session(db, "t", "s1")
            order.append("second holds")

    def other_session() -> None:
        holding.wait(5)
        with pg.uow.write() as db:
            storage.locks.lock_session(db, "t", "s2")
            order.append("other session holds")

    threads = [threading.Thread(target=f) for f in (first, second, other_session)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert order == ["other session holds", "first commits", "second holds"]
