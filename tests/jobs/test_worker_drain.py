"""A stopping worker (SIGTERM, the service's shutdown): running jobs may finish within the drain
time; the rest are handed back to the queue at once, their interrupted attempt not counted."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from app.db.engine import create_db_engine
from app.db.models import Job
from app.db.uow import UnitOfWork
from app.jobs.worker import Phase2Worker
from tests.jobs.test_worker import ScriptedBuilder, run_until_idle, setup_sessions, statuses


async def started(worker: Phase2Worker, builder: ScriptedBuilder, calls: int) -> None:
    await worker.start(reclaim_own=False)
    async with asyncio.timeout(10):
        while len(builder.calls) < calls:  # noqa: ASYNC110 (polls what the builder recorded)
            await asyncio.sleep(0.01)


def jobs(uow: UnitOfWork) -> list[tuple[str, str | None, int]]:
    with uow.read() as db:
        rows = db.execute(select(Job.status, Job.worker_id, Job.attempts).order_by(Job.id))
        return [(r.status, r.worker_id, r.attempts) for r in rows]


async def test_a_job_that_ends_within_the_drain_time_completes(make_settings):
    settings = make_settings(worker={"lease_s": 600})
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["x"], archives=1)
    builder = ScriptedBuilder(delay=0.5)
    worker = Phase2Worker(uow, builder, settings.worker)
    await started(worker, builder, 1)
    await worker.stop(drain_s=10)
    assert jobs(uow) == [("succeeded", worker.worker_id, 1)]
    assert [status for _, status, _ in statuses(uow, "x")] == ["completed"]


async def test_a_job_still_running_after_the_drain_time_goes_back_to_the_queue(make_settings):
    settings = make_settings(worker={"lease_s": 600, "concurrency": 2})
    uow = UnitOfWork(create_db_engine(settings))
    setup_sessions(uow, settings, ["x", "y"], archives=1)
    slow = ScriptedBuilder(delay=60)
    stopping = Phase2Worker(uow, slow, settings.worker)
    await started(stopping, slow, 2)
    assert [status for status, _, _ in jobs(uow)] == ["running", "running"]
    await stopping.stop(drain_s=0.2)
    # Queued at once, not held until the 600 s lease runs out; the cut-short attempt is not counted.
    assert jobs(uow) == [("queued", None, 0), ("queued", None, 0)]
    assert [status for _, status, _ in statuses(uow, "x")] == ["pending"]
    other = ScriptedBuilder()
    await run_until_idle(Phase2Worker(uow, other, settings.worker), uow, timeout=10)
    assert sorted(key for key, _ in other.calls) == ["x-a1", "y-a1"]
    assert [status for status, _, _ in jobs(uow)] == ["succeeded", "succeeded"]
    assert [r[2] for r in jobs(uow)] == [1, 1]
