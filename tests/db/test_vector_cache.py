"""Nearest-vector search from in-process matrices (app/db/sqlite/vector_cache.py): the same
answers as sqlite-vec's own KNN, and every write of another process seen at the next search."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from app.db.engine import create_db_engine
from app.db.sqlite.memory_vectors import MEMORY_SPACE, SqliteMemoryVectors
from app.db.sqlite.message_vectors import MESSAGE_SPACE
from app.db.sqlite.vector_cache import VectorCache, log_reset
from app.db.uow import UnitOfWork
from app.settings import Settings

OWNER = "default:user:u1"
DIMENSIONS = 384


def unit(rng: random.Random) -> list[float]:
    vector = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
    norm = sum(x * x for x in vector) ** 0.5
    return [x / norm for x in vector]


@pytest.fixture
def engine(settings: Settings) -> Iterator[Engine]:
    built = create_db_engine(settings)
    yield built
    built.dispose()


def vec0_nearest(uow: UnitOfWork, owner: str, query: list[float], k: int) -> list[int]:
    """sqlite-vec's own KNN: a storage whose cache holds nothing."""
    uncached = SqliteMemoryVectors(VectorCache(budget_bytes=0))
    with uow.read() as db:
        return [hit.row_id for hit in uncached.nearest_memory_chunks(db, owner, query, k)]


def store(uow: UnitOfWork, rows: list[tuple[int, str, list[float]]]) -> None:
    with uow.write() as db:
        uow.storage.memory_vectors.store_chunk_vectors(db, rows)


def test_matrix_search_returns_what_vec0_returns(engine: Engine) -> None:
    rng = random.Random(7)
    uow = UnitOfWork(engine)
    store(uow, [(i, OWNER, unit(rng)) for i in range(1, 301)])
    store(uow, [(i, "default:user:other", unit(rng)) for i in range(301, 401)])
    for _ in range(5):
        query = unit(rng)
        with uow.read() as db:
            hits = uow.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 10)
        assert [h.row_id for h in hits] == vec0_nearest(uow, OWNER, query, 10)
        assert all(h.row_id <= 300 for h in hits)  # the partition only
        assert [h.score for h in hits] == sorted(h.score for h in hits)


def test_writes_of_another_process_are_seen_at_the_next_search(engine: Engine) -> None:
    rng = random.Random(11)
    reader, writer = UnitOfWork(engine), UnitOfWork(engine)  # two caches, as two processes
    store(writer, [(i, OWNER, unit(rng)) for i in range(1, 51)])
    query = unit(rng)
    with reader.read() as db:
        assert len(reader.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 100)) == 50
    store(writer, [(51, OWNER, query)])  # the query itself: the nearest from now on
    with reader.read() as db:
        hits = reader.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 3)
    assert hits[0].row_id == 51 and hits[0].score == pytest.approx(0.0, abs=1e-5)
    with writer.write() as db:
        writer.storage.unindex_memory_chunks(db, [51, 1, 2])
    with reader.read() as db:
        ids = [
            h.row_id
            for h in reader.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 100)
        ]
    assert len(ids) == 48 and not {1, 2, 51} & set(ids)
    assert ids[:10] == vec0_nearest(reader, OWNER, query, 10)


def test_replacing_a_vector_moves_the_row(engine: Engine) -> None:
    rng = random.Random(13)
    uow = UnitOfWork(engine)
    store(uow, [(i, OWNER, unit(rng)) for i in range(1, 21)])
    query = unit(rng)
    with uow.read() as db:
        uow.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 5)
    store(uow, [(7, OWNER, query)])
    with uow.read() as db:
        hits = uow.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 20)
    assert hits[0].row_id == 7 and len(hits) == 20


def test_message_vectors_filter_by_time_and_a_dropped_session_reloads(engine: Engine) -> None:
    rng = random.Random(17)
    session_pk = 1
    reader, writer = UnitOfWork(engine), UnitOfWork(engine)
    rows = [(i, session_pk, i * 1000, unit(rng)) for i in range(1, 41)]
    with writer.write() as db:
        writer.storage.message_vectors.store_message_vectors(db, rows)
    query = unit(rng)
    with reader.read() as db:
        everything = reader.storage.message_vectors.nearest_messages(db, session_pk, query, 100)
        window = reader.storage.message_vectors.nearest_messages(
            db, session_pk, query, 5, (10_000, 20_000)
        )
    assert len(everything) == 40
    inside = [h.row_id for h in everything if 10 <= h.row_id <= 20]
    assert [h.row_id for h in window] == inside[:5]
    with writer.write() as db:  # what unindex_session does to a session's vectors
        db.execute(text("DELETE FROM message_vec WHERE message_id > 20"))
        log_reset(db, MESSAGE_SPACE, str(session_pk))
    with reader.read() as db:
        left = reader.storage.message_vectors.nearest_messages(db, session_pk, query, 100)
    assert sorted(h.row_id for h in left) == list(range(1, 21))


def test_a_partition_over_the_budget_is_searched_by_vec0(engine: Engine) -> None:
    rng = random.Random(19)
    uow = UnitOfWork(engine)
    store(uow, [(i, OWNER, unit(rng)) for i in range(1, 31)])
    small = SqliteMemoryVectors(VectorCache(budget_bytes=10 * DIMENSIONS * 4))
    query = unit(rng)
    with uow.read() as db:
        assert small.cache.nearest(db, MEMORY_SPACE, OWNER, query, 5) is None
        hits = small.nearest_memory_chunks(db, OWNER, query, 5)
    assert [h.row_id for h in hits] == vec0_nearest(uow, OWNER, query, 5)


def test_a_partition_loaded_after_removals_holds_only_live_rows(engine: Engine) -> None:
    rng = random.Random(23)
    writer = UnitOfWork(engine)
    store(writer, [(i, OWNER, unit(rng)) for i in range(1, 41)])
    with writer.write() as db:
        writer.storage.unindex_memory_chunks(db, [3, 17, 40])
    reader = UnitOfWork(engine)  # loads the partition from the vector table's storage
    query = unit(rng)
    with reader.read() as db:
        ids = [
            h.row_id
            for h in reader.storage.memory_vectors.nearest_memory_chunks(db, OWNER, query, 100)
        ]
    assert sorted(ids) == [i for i in range(1, 41) if i not in {3, 17, 40}]
    assert ids[:10] == vec0_nearest(reader, OWNER, query, 10)
