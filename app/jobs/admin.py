"""Operator use cases over Phase 2 jobs: list them, retry a failed one, cancel a waiting one.

``tenant_id=None`` means every tenant (the command line); the console always passes its tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.clock import utcnow
from app.db.models import JobStatus
from app.db.models.archive import format_archive_id
from app.db.uow import UnitOfWork
from app.errors import Conflict, NotFound
from app.jobs import admin_repository as repo

RETRYABLE = (JobStatus.FAILED, JobStatus.CANCELLED)
CANCELLABLE = (JobStatus.QUEUED, JobStatus.RUNNING)
CANCEL_REASON = "cancelled by an operator"


@dataclass(frozen=True, slots=True)
class JobView:
    """One Phase 2 job as an operator sees it."""

    job_id: int
    tenant_id: str
    session_id: str
    archive_id: str
    status: str
    attempts: int
    worker_id: str | None
    lease_expires_at: datetime | None
    run_after: datetime | None
    error: str | None
    stage: str | None
    created_at: datetime | None
    updated_at: datetime | None


@dataclass(frozen=True, slots=True)
class JobChange:
    """A job an operator retried or cancelled, with its new status."""

    job_id: int
    status: str


def list_jobs(
    uow: UnitOfWork, tenant_id: str | None, statuses: list[str] | None = None, limit: int = 200
) -> list[JobView]:
    """Jobs, newest change first; ``statuses`` narrows them (queued, running, failed, …)."""
    with uow.read() as db:
        rows = repo.list_jobs(db, tenant_id, statuses or [], limit)
    return [_job_view(row) for row in rows]


def job_counts(uow: UnitOfWork, tenant_id: str | None) -> dict[str, int]:
    """How many jobs are in each status."""
    with uow.read() as db:
        counts = repo.status_counts(db, tenant_id)
    return {status.value: counts.get(status.value, 0) for status in JobStatus}


def retry_job(uow: UnitOfWork, tenant_id: str | None, job_id: int) -> JobChange:
    """Queue a failed or cancelled job again with a fresh set of attempts."""
    with uow.write() as db:
        job = _found(repo.get_job(db, tenant_id, job_id), job_id)
        if job.status not in RETRYABLE:
            raise Conflict(
                f"job {job_id} is {job.status}; only failed or cancelled jobs can be retried",
                {"status": job.status},
            )
        repo.requeue(db, job, utcnow())
    return JobChange(job_id, JobStatus.QUEUED.value)


def cancel_job(uow: UnitOfWork, tenant_id: str | None, job_id: int) -> JobChange:
    """Cancel a queued or running job: a running one's results are discarded when it finishes."""
    with uow.write() as db:
        job = _found(repo.get_job(db, tenant_id, job_id), job_id)
        if job.status not in CANCELLABLE:
            raise Conflict(
                f"job {job_id} is {job.status}; only queued or running jobs can be cancelled",
                {"status": job.status},
            )
        repo.cancel(db, job, CANCEL_REASON, utcnow())
    return JobChange(job_id, JobStatus.CANCELLED.value)


def _found(job: Any, job_id: int) -> Any:
    if job is None:
        raise NotFound("job", str(job_id))
    return job


def _job_view(row: Any) -> JobView:
    return JobView(
        job_id=row.id,
        tenant_id=row.tenant_id,
        session_id=row.session_id,
        archive_id=format_archive_id(row.archive_index),
        status=row.status,
        attempts=row.attempts,
        worker_id=row.worker_id,
        lease_expires_at=row.lease_expires_at,
        run_after=row.run_after,
        error=row.last_error,
        stage=row.stage,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
