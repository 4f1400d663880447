"""Session writes on PostgreSQL, where writers run concurrently: the session lock gives each write
use case what SQLite's single writer gives it (no lost counter, no duplicate session, gapless
sequence numbers)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.sessions.capture import TurnInput, capture_turn
from app.sessions.identity import SessionIdentity
from app.settings import Settings
from tests.helpers import postgres

WRITERS = 8
TURNS = 5


@pytest.fixture
def engine(server: postgres.PostgresServer) -> Iterator[Engine]:
    built = create_db_engine(Settings(database_url=server.create_database()))
    upgrade_to_head(built)
    yield built
    built.dispose()


def turn(writer: int, index: int) -> list[dict[str, object]]:
    stamp = 1_760_000_000_000 + writer * 1000 + index * 10
    return [
        {"role": "user", "content": f"writer {writer} turn {index}", "timestamp": stamp},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "timestamp": stamp + 1},
    ]


def test_concurrent_turns_of_one_new_session_lose_and_duplicate_nothing(engine: Engine) -> None:
    uow, settings = UnitOfWork(engine), Settings()
    ident = SessionIdentity("default", "shared")
    start = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        start.wait()  # every writer's first turn races to create the session
        try:
            for index in range(TURNS):
                capture_turn(uow, settings, TurnInput(ident, turn(writer, index)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    with engine.connect() as conn:
        sessions = conn.execute(text("SELECT count(*) FROM agent_sessions")).scalar_one()
        seqs = [s for (s,) in conn.execute(text("SELECT seq FROM messages ORDER BY seq"))]
        counted = conn.execute(
            text("SELECT last_seq, total_message_count FROM agent_sessions")
        ).one()
    expected = WRITERS * TURNS * 2
    assert sessions == 1
    assert seqs == list(range(1, expected + 1))  # gapless, no duplicate
    assert tuple(counted) == (expected, expected)


def test_reads_see_one_snapshot_and_writes_read_committed(engine: Engine) -> None:
    """A read unit of work runs REPEATABLE READ (all its statements see one snapshot, as a
    deferred SQLite transaction does); a write unit of work PostgreSQL's READ COMMITTED; a
    connection the pool hands from one to the other keeps neither's level."""
    uow = UnitOfWork(engine)
    level = text("SHOW transaction_isolation")
    for _ in range(3):  # the pool's connection goes back and forth
        with uow.read() as db:
            assert db.execute(level).scalar_one() == "repeatable read"
        with uow.write() as db:
            assert db.execute(level).scalar_one() == "read committed"
    with engine.begin() as conn:  # the engine's own transactions, as the migrations use them
        assert conn.execute(level).scalar_one() == "repeatable read"
