"""The Phase 2 worker: claims jobs with a lease, renews it while working, retries transient failures.

The embedded default runs one worker inside the API process; scale-out can run more against the
same database. A job whose worker dies is claimed again when its lease expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import Callable
from datetime import timedelta

import structlog

from app.archives.index.search_index import PassageEmbedder
from app.core.clock import utcnow
from app.core.rules.redaction import redact_text
from app.core.threads import to_thread
from app.db.storage import storage_problem
from app.db.uow import UnitOfWork
from app.jobs import repository as queue
from app.jobs.phase2 import JobLost, Learner, Phase2Context, run_phase2
from app.jobs.repository import ClaimedJob
from app.jobs.retry import RetryStrategy
from app.settings.groups import WorkerSettings
from app.working_memory.service import WorkingMemoryBuilder

log = structlog.get_logger("app.jobs.worker")

JobObserver = Callable[[str, float], None]
STORAGE_BACKOFF_S = 5.0


class Phase2Worker:
    """Runs Phase 2 jobs until stopped."""

    def __init__(
        self,
        uow: UnitOfWork,
        builder: WorkingMemoryBuilder,
        settings: WorkerSettings,
        observe: JobObserver | None = None,
        retry: RetryStrategy | None = None,
        learn: Learner | None = None,
        embed: PassageEmbedder | None = None,
        embed_model: str | None = None,
    ) -> None:
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._uow = uow
        self._settings = settings
        self._lease = timedelta(seconds=settings.lease_s)
        self._retry = retry or RetryStrategy(max_attempts=settings.max_attempts)
        self._ctx = Phase2Context(
            uow, builder, self.worker_id, settings.fault_delay_ms / 1000, learn, embed, embed_model
        )
        self._observe = observe
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._stopping = False

    async def start(self, *, reclaim_own: bool) -> None:
        """Start the loop; ``reclaim_own`` requeues jobs a previous process left running."""
        self._loop = asyncio.get_running_loop()
        if reclaim_own:
            count = await to_thread(self._requeue_all_running)
            if count:
                log.info("phase2_jobs_reclaimed", count=count)
        self._main = asyncio.create_task(self._run(), name="phase2-worker")

    async def stop(self, drain_s: float = 0.0) -> None:
        """Stop claiming; give running jobs up to ``drain_s`` to finish, cancel the rest and hand
        them back to the queue at once (another worker need not wait for their leases)."""
        # A flag rather than cancelling the claim loop: a claim cancelled while its thread runs
        # would still take a job, and nobody would run or release it until its lease ran out.
        self._stopping = True
        self._wake.set()
        if self._main is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._main
        if self._running and drain_s > 0:
            await asyncio.wait(set(self._running), timeout=drain_s)
        unfinished = list(self._running)
        for task in unfinished:
            task.cancel()
        for task in unfinished:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if unfinished:
            await self._release_held()

    async def _release_held(self) -> None:
        # A cancelled job's thread may still be writing; its write checks that the job is still
        # ours (JobLost) and so cannot land after this release.
        try:
            count = await to_thread(self._release_owned)
            log.info("phase2_jobs_released", count=count, worker_id=self.worker_id)
        except Exception:
            log.warning("phase2_jobs_not_released", worker_id=self.worker_id, exc_info=True)

    def _release_owned(self) -> int:
        with self._uow.write() as db:
            return queue.release_owned(db, self.worker_id, utcnow())

    def notify(self) -> None:
        """Wake the worker now (safe from any thread): a job was just enqueued."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)

    async def _run(self) -> None:
        interval = self._settings.poll_interval_ms / 1000
        while not self._stopping:
            try:
                while not self._stopping and len(self._running) < self._settings.concurrency:
                    job = await to_thread(self._claim)
                    if job is None:
                        break
                    task = asyncio.create_task(self._process(job))
                    self._running.add(task)
                    task.add_done_callback(self._finished)
            except Exception as exc:
                log.exception("phase2_claim_failed")
                if storage_problem(exc) is not None:
                    # A full disk or a read-only file fails every claim: poll slower, log less.
                    await asyncio.sleep(STORAGE_BACKOFF_S)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._wake.wait()
            self._wake.clear()

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._wake.set()

    def _claim(self) -> ClaimedJob | None:
        now = utcnow()
        # Most polls find nothing: they are answered by a read, never blocking a hook's write.
        with self._uow.read() as db:
            if not queue.has_claimable(db, now):
                return None
        with self._uow.write() as db:
            queue.requeue_expired(db, now)
            return queue.claim_next(db, self.worker_id, now, self._lease)

    def _requeue_all_running(self) -> int:
        with self._uow.write() as db:
            return queue.requeue_all_running(db, utcnow())

    async def _process(self, job: ClaimedJob) -> None:
        bound = log.bind(job_id=job.job_id, archive_pk=job.archive_pk, attempt=job.attempts)
        renewer = asyncio.create_task(self._renew_forever(job))
        started = asyncio.get_running_loop().time()
        outcome = "succeeded"
        try:
            result = await run_phase2(self._ctx, job)
            bound.info("phase2_completed", action="completed", wm_path=result.path)
        except JobLost as exc:
            outcome = "lost"
            bound.warning("phase2_lost", action="lost", reason=str(exc))
        except Exception as exc:  # noqa: BLE001 - every failure is recorded on the job
            outcome = await self._record_failure_retrying(job, exc)
            bound.warning("phase2_failed", action=outcome, error=_describe(exc))
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
        if self._observe is not None:
            self._observe(outcome, asyncio.get_running_loop().time() - started)

    async def _renew_forever(self, job: ClaimedJob) -> None:
        period = max(0.05, self._settings.lease_s / 3)
        while True:
            await asyncio.sleep(period)
            try:
                await to_thread(self._renew, job)
            except Exception:
                log.warning("phase2_lease_not_renewed", job_id=job.job_id, exc_info=True)

    async def _record_failure_retrying(self, job: ClaimedJob, exc: BaseException) -> str:
        """Record the failure (retry or failed); when the database cannot take even that (a full
        disk), try again with backoff until the lease would have run out, so that the archive does
        not sit ``running`` with nothing said about it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._settings.lease_s
        delay = 0.25
        while True:
            try:
                return await to_thread(self._record_failure, job, exc)
            except Exception as record_error:  # noqa: BLE001 - retried below, then left to the lease
                if loop.time() + delay >= deadline:
                    log.error(
                        "phase2_failure_unrecorded",
                        job_id=job.job_id,
                        error=_describe(record_error),
                    )
                    return "unrecorded"
                log.warning(
                    "phase2_failure_not_recorded", job_id=job.job_id, error=_describe(record_error)
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _renew(self, job: ClaimedJob) -> None:
        with self._uow.write() as db:
            queue.renew_lease(db, job.job_id, self.worker_id, utcnow(), self._lease)

    def _record_failure(self, job: ClaimedJob, exc: BaseException) -> str:
        decision = self._retry.decide(exc, job.attempts)
        now = utcnow()
        with self._uow.write() as db:
            if not queue.still_owned(db, job.job_id, self.worker_id):
                return "lost"
            if decision.retry:
                queue.schedule_retry(
                    db,
                    job,
                    now + timedelta(seconds=decision.delay_s),
                    _describe(exc),
                    "working_memory",
                    now,
                    refund_attempt=decision.refund_attempt,
                )
                return "retry"
            queue.mark_failed(db, job, _describe(exc), "working_memory", now)
            return "failed"


def _describe(exc: BaseException) -> str:
    """The stored failure reason: a provider's error body can quote the prompt, so it is redacted."""
    text = str(exc) or exc.__class__.__name__
    return redact_text(f"{exc.__class__.__name__}: {text}"[:2000])
