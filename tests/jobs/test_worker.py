"""The Phase 2 worker: archive order per session, failures that block nothing, retries, leases."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from app.core.clock import utcnow
from app.db.engine import create_db_engine
from app.db.uow import UnitOfWork
from app.jobs import repository as queue
from app.jobs.retry import RetryStrategy
from app.jobs.worker import Phase2Worker
from app.providers.protocols import PermanentProviderError, TransientProviderError
from app.sessions.archived import expand_archive
from app.sessions.capture import TurnInput, capture_turn
from app.sessions.identity import SessionIdentity
from app.sessions.service import commit_session, get_session_view
from app.working_memory.service import WmInputs, WmResult, build_extractive
from tests.helpers.messages import turn


class ScriptedBuilder:
    """Records every call; fails as told (archive first message → list of errors to raise)."""

    def __init__(
        self, failures: dict[str, list[Exception]] | None = None, delay: float = 0.0
    ) -> None:
        self.calls: list[tuple[str, str | None]] = []
        self.failures = failures or {}
        self.delay = delay

    async def build(self, inputs: WmInputs) -> WmResult:
        first = inputs.messages[0]["content"]
        key = first.split(":")[0]
        self.calls.append((key, inputs.prior_overview))
        await asyncio.sleep(self.delay)
        pending = self.failures.get(key)
        if pending:
            raise pending.pop(0)
        return build_extractive(inputs)


def setup_sessions(uow: UnitOfWork, settings, sessions: list[str], archives: int) -> None:  # type: ignore[no-untyped-def]
    for session_id in sessions:
        history: list[dict] = []
        for index in range(archives):
            history += [
                {
                    "role": "user",
                    "content": f"{session_id}-a{index + 1}: request",
                    "timestamp": index,
                }
            ]
            history += turn(index)
            ident = SessionIdentity("default", session_id)
            capture_turn(
                uow, settings, TurnInput(ident, list(history), len(history) - 3, token_budget=10**9)
            )
            assert commit_session(uow, "default", session_id, 0).archived


async def run_until_idle(worker: Phase2Worker, uow: UnitOfWork, timeout: float = 20) -> None:
    await worker.start(reclaim_own=False)
    deadline = asyncio.get_running_loop().time() + timeout
    try:
        while asyncio.get_running_loop().time() < deadline:
            with uow.read() as db:
                from sqlalchemy import func, select

                from app.db.models import Job

                busy = db.execute(
                    select(func.count())
                    .select_from(Job)
                    .where(Job.status.in_(["queued", "running"]))
                ).scalar_one()
            if busy == 0:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("jobs did not finish")
    finally:
        await worker.stop()


def statuses(uow: UnitOfWork, session_id: str) -> list[tuple[str, str, str | None]]:
    view = get_session_view(uow, "default", session_id)
    return [(a.archive_id, a.status, a.error) for a in view.archives]


async def test_archives_of_a_session_run_in_order(make_settings):
    settings = make_settings(worker={"concurrency": 4})
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["x", "y"], archives=4)
    builder = ScriptedBuilder(delay=0.02)
    await run_until_idle(Phase2Worker(uow, builder, settings.worker), uow)
    for session_id in ("x", "y"):
        order = [key for key, _ in builder.calls if key.startswith(session_id)]
        assert order == [f"{session_id}-a{i}" for i in range(1, 5)]
        assert all(status == "completed" for _, status, _ in statuses(uow, session_id))
    # Each UPDATE received the previous archive's Working Memory.
    priors = dict(builder.calls)
    assert priors["x-a1"] is None
    assert priors["x-a2"] is not None and priors["x-a2"].startswith("# Working Memory")


async def test_permanent_failure_marks_failed_and_blocks_nothing(make_settings):
    settings = make_settings()
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["s"], archives=3)
    builder = ScriptedBuilder({"s-a1": [PermanentProviderError("bad request")]})
    await run_until_idle(Phase2Worker(uow, builder, settings.worker), uow)
    result = statuses(uow, "s")
    assert result[0][:2] == ("archive_001", "failed") and "bad request" in (result[0][2] or "")
    assert [s for _, s, _ in result[1:]] == ["completed", "completed"]
    priors = dict(builder.calls)
    assert priors["s-a2"] is None  # no completed archive before it
    assert priors["s-a3"] is not None
    # The failed archive's messages stay expandable.
    view = expand_archive(uow, "default", "s", "archive_001", 0, None)
    assert view.status == "failed" and view.message_count == 3 and view.error


async def test_transient_errors_are_retried_then_complete(make_settings):
    settings = make_settings()
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["t"], archives=1)
    builder = ScriptedBuilder(
        {"t-a1": [TransientProviderError("429", retry_after=0.05), TimeoutError("slow")]}
    )
    worker = Phase2Worker(
        uow, builder, settings.worker, retry=RetryStrategy(max_attempts=4, base_s=0.01, cap_s=0.05)
    )
    await run_until_idle(worker, uow)
    assert statuses(uow, "t")[0][1] == "completed"
    assert len(builder.calls) == 3


async def test_transient_errors_exhaust_attempts_then_fail(make_settings):
    settings = make_settings()
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["u"], archives=1)
    builder = ScriptedBuilder({"u-a1": [TransientProviderError("503") for _ in range(10)]})
    worker = Phase2Worker(
        uow, builder, settings.worker, retry=RetryStrategy(max_attempts=4, base_s=0.01, cap_s=0.02)
    )
    await run_until_idle(worker, uow)
    assert statuses(uow, "u")[0][1] == "failed"
    assert len(builder.calls) == 4


async def test_expired_lease_is_claimed_by_another_worker(make_settings):
    settings = make_settings()
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["v"], archives=1)
    with uow.write() as db:
        dead = queue.claim_next(
            db, "dead-worker", utcnow(), timedelta(seconds=-1)
        )  # already expired
    assert dead is not None
    assert statuses(uow, "v")[0][1] == "running"
    builder = ScriptedBuilder()
    await run_until_idle(Phase2Worker(uow, builder, settings.worker), uow)
    assert statuses(uow, "v")[0][1] == "completed"
    with uow.write() as db:
        assert queue.still_owned(db, dead.job_id, "dead-worker") is False


def test_retry_strategy_backoff_and_retry_after():
    strategy = RetryStrategy(max_attempts=4, base_s=1, cap_s=8)
    import random

    rng = random.Random(0)
    first = strategy.decide(TransientProviderError("x"), 1, rng)
    assert first.retry and 1 <= first.delay_s <= 1.25
    third = strategy.decide(TransientProviderError("x"), 3, rng)
    assert 4 <= third.delay_s <= 5
    honoured = strategy.decide(TransientProviderError("x", retry_after=30), 1, rng)
    assert honoured.delay_s == 30
    assert strategy.decide(TransientProviderError("x"), 4, rng).retry is False
    assert strategy.decide(PermanentProviderError("x"), 1, rng).retry is False
    assert strategy.decide(ValueError("bug"), 1, rng).retry is False


async def test_an_idle_worker_polls_without_writing(make_settings, monkeypatch):
    """Polls that find nothing are reads: no write lock (nor, on SQLite, a sync of the log)."""
    settings = make_settings(worker={"poll_interval_ms": 10})
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["w"], archives=1)
    await run_until_idle(Phase2Worker(uow, ScriptedBuilder(), settings.worker), uow)
    writes = 0
    write = uow.write

    def counted_write():  # type: ignore[no-untyped-def]
        nonlocal writes
        writes += 1
        return write()

    monkeypatch.setattr(uow, "write", counted_write)
    worker = Phase2Worker(uow, ScriptedBuilder(), settings.worker)
    await worker.start(reclaim_own=False)
    try:
        await asyncio.sleep(0.3)  # about 30 polls
        polls_written = writes
    finally:
        await worker.stop()
    assert polls_written == 0
    with uow.read() as db:
        assert queue.has_claimable(db, utcnow()) is False
