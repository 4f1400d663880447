"""SQL of the operator's view of Phase 2 jobs: list, retry, cancel. Repositories never commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.db.models import AgentSession, Archive, ArchiveStatus, Job, JobStatus


def list_jobs(db: Session, tenant_id: str | None, statuses: Sequence[str], limit: int) -> list[Any]:
    """Jobs with their session id and archive index, newest change first (plain rows)."""
    stmt = (
        select(
            Job.id,
            Job.tenant_id,
            Job.status,
            Job.attempts,
            Job.worker_id,
            Job.lease_expires_at,
            Job.run_after,
            Job.last_error,
            Job.stage,
            Job.created_at,
            Job.updated_at,
            Job.archive_index,
            AgentSession.session_id,
        )
        .join(AgentSession, AgentSession.id == Job.session_pk)
        .order_by(Job.updated_at.desc(), Job.id.desc())
        .limit(limit)
    )
    if tenant_id is not None:
        stmt = stmt.where(Job.tenant_id == tenant_id)
    if statuses:
        stmt = stmt.where(Job.status.in_(list(statuses)))
    return list(db.execute(stmt))


def status_counts(db: Session, tenant_id: str | None) -> dict[str, int]:
    stmt = select(Job.status, func.count()).group_by(Job.status)
    if tenant_id is not None:
        stmt = stmt.where(Job.tenant_id == tenant_id)
    return {status: int(count) for status, count in db.execute(stmt)}


def get_job(db: Session, tenant_id: str | None, job_id: int) -> Job | None:
    job = db.get(Job, job_id)
    if job is None or (tenant_id is not None and job.tenant_id != tenant_id):
        return None
    return job


def requeue(db: Session, job: Job, now: datetime) -> None:
    """Queue a failed or cancelled job afresh (all attempts again); its archive is pending again."""
    db.execute(
        update(Job)
        .where(Job.id == job.id)
        .values(
            status=JobStatus.QUEUED,
            attempts=0,
            worker_id=None,
            lease_expires_at=None,
            run_after=now,
            last_error=None,
            stage=None,
            updated_at=now,
        )
    )
    db.execute(
        update(Archive)
        .where(Archive.id == job.archive_pk)
        .values(status=ArchiveStatus.PENDING, error=None, error_stage=None, completed_at=None)
    )


def cancel(db: Session, job: Job, reason: str, now: datetime) -> None:
    """Stop a queued or running job; its archive fails with the reason, so it blocks nothing."""
    db.execute(
        update(Job)
        .where(Job.id == job.id)
        .values(
            status=JobStatus.CANCELLED,
            worker_id=None,
            lease_expires_at=None,
            last_error=reason,
            stage="cancelled",
            updated_at=now,
        )
    )
    db.execute(
        update(Archive)
        .where(Archive.id == job.archive_pk)
        .values(
            status=ArchiveStatus.FAILED, error=reason, error_stage="cancelled", completed_at=now
        )
    )
