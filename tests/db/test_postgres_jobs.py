"""The Phase 2 job claim on PostgreSQL (docs/architecture.md, Background work): concurrent claimers
skip a locked candidate (FOR UPDATE SKIP LOCKED) instead of queueing behind it, never take the same
job twice, and never run two archives of one session at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import Engine, text

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.jobs import repository as queue
from app.settings import Settings
from tests.db.test_postgres_seams import NOW, _insert
from tests.helpers import postgres

LEASE = timedelta(seconds=30)


@pytest.fixture
def uow(server: postgres.PostgresServer) -> Iterator[UnitOfWork]:
    url = server.create_database()
    engine: Engine = create_db_engine(Settings(database_url=url))
    upgrade_to_head(engine)
    yield UnitOfWork(engine)
    engine.dispose()
    server.drop_database(url)


def seed_jobs(uow: UnitOfWork, archives: dict[int, list[int]]) -> None:
    """Sessions (by key) with pending archives (by index), each with its queued job."""
    counters = dict.fromkeys(
        (
            "live_count",
            "total_message_count",
            "last_seq",
            "pending_tokens",
            "commit_count",
            "archive_count",
            "llm_prompt_tokens",
            "llm_completion_tokens",
        ),
        0,
    )
    with uow.write() as db:
        for session_pk, indexes in archives.items():
            _insert(
                db,
                "agent_sessions",
                [
                    {"id": session_pk, "tenant_id": "t", "session_id": f"s{session_pk}"}
                    | {"agent_id": "main", "user_id": "u", "keep_recent_count": 10}
                    | {**counters, "created_at": NOW, "updated_at": NOW}
                ],
            )
            for index in indexes:
                archive_pk = session_pk * 100 + index
                _insert(
                    db,
                    "archives",
                    [
                        {"id": archive_pk, "tenant_id": "t", "session_pk": session_pk}
                        | {"archive_index": index, "status": "pending", "overview": ""}
                        | {"abstract": "", "overview_tokens": 0, "message_count": 0}
                        | {"message_tokens": 0, "first_seq": 1, "last_seq": 1}
                        | {"keep_recent_count": 10, "created_at": NOW}
                    ],
                )
                _insert(
                    db,
                    "jobs",
                    [
                        {"id": archive_pk, "tenant_id": "t", "kind": "phase2"}
                        | {"session_pk": session_pk, "archive_pk": archive_pk}
                        | {"archive_index": index, "status": "queued", "attempts": 0}
                        | {"run_after": NOW, "created_at": NOW, "updated_at": NOW}
                    ],
                )


def test_a_claimer_skips_the_job_another_is_claiming(uow: UnitOfWork) -> None:
    seed_jobs(uow, {1: [1, 2], 2: [1]})
    first_claimed = threading.Event()
    release = threading.Event()
    claims: dict[str, queue.ClaimedJob | None] = {}

    def slow_claimer() -> None:
        with uow.write() as db:
            claims["slow"] = queue.claim_next(db, "w-slow", NOW, LEASE)
            first_claimed.set()
            release.wait(10)

    thread = threading.Thread(target=slow_claimer)
    thread.start()
    assert first_claimed.wait(10)
    # The slow claimer's transaction is still open: its job row is locked, its archive's new
    # status not yet visible. The second claimer must neither wait nor take the same job, nor
    # the same session's next archive.
    with uow.write() as db:
        db.execute(text("SET LOCAL lock_timeout = '2s'"))
        claims["fast"] = queue.claim_next(db, "w-fast", NOW, LEASE)
    with uow.write() as db:
        db.execute(text("SET LOCAL lock_timeout = '2s'"))
        claims["third"] = queue.claim_next(db, "w-third", NOW, LEASE)
    release.set()
    thread.join(10)

    slow, fast = claims["slow"], claims["fast"]
    assert slow is not None and fast is not None
    assert (slow.session_pk, slow.archive_index) == (1, 1)  # oldest first
    assert (fast.session_pk, fast.archive_index) == (2, 1)
    assert claims["third"] is None  # session 1's second archive waits for its first
    with uow.read() as db:
        running = db.execute(
            text("SELECT session_pk, worker_id FROM jobs WHERE status = 'running' ORDER BY 1")
        ).all()
    assert [tuple(r) for r in running] == [(1, "w-slow"), (2, "w-fast")]


def test_many_concurrent_claimers_take_each_job_once(uow: UnitOfWork) -> None:
    seed_jobs(uow, {pk: [1] for pk in range(1, 13)})
    taken: list[int] = []
    lock = threading.Lock()

    def claimer(n: int) -> None:
        while True:
            with uow.write() as db:
                job = queue.claim_next(db, f"w{n}", NOW, LEASE)
            if job is None:
                return
            with lock:
                taken.append(job.job_id)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(taken) == sorted(pk * 100 + 1 for pk in range(1, 13))
