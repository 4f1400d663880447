"""The durable Phase 2 job queue (docs/architecture.md, Background work).

Claiming is one ``UPDATE … RETURNING`` over a candidate subquery inside a write transaction: on
SQLite the write transaction (BEGIN IMMEDIATE) serialises claimers; on PostgreSQL the candidate row
is locked with ``FOR UPDATE SKIP LOCKED``. A candidate is a queued job whose session has no running
job and no older archive still pending or running, so one session's archives run in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, exists, func, select, update
from sqlalchemy.orm import Session, aliased

from app.db.models import AgentSession, Archive, ArchiveStatus, Job, JobStatus, StoredMessage


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    job_id: int
    tenant_id: str
    session_pk: int
    archive_pk: int
    archive_index: int
    attempts: int


def enqueue_phase2(db: Session, archive: Archive, now: datetime) -> Job:
    """Add the Phase 2 job of an archive, in the caller's transaction (same as the archive)."""
    job = Job(
        tenant_id=archive.tenant_id,
        kind="phase2",
        session_pk=archive.session_pk,
        archive_pk=archive.id,
        archive_index=archive.archive_index,
        status=JobStatus.QUEUED,
        attempts=0,
        run_after=now,
        created_at=now,
        updated_at=now,
    )
    db.add(job)
    db.flush()
    return job


def has_claimable(db: Session, now: datetime) -> bool:
    """Whether a job is queued and due, or running past its lease: a read, so an idle worker's
    poll neither takes the write lock nor waits for a sync of the log."""
    due = (Job.status == JobStatus.QUEUED) & (Job.run_after <= now)
    expired = (Job.status == JobStatus.RUNNING) & (Job.lease_expires_at < now)
    return bool(db.execute(select(exists().where(due | expired))).scalar())


def requeue_expired(db: Session, now: datetime) -> int:
    """Jobs whose worker stopped renewing the lease become claimable again."""
    expired = (
        db.execute(
            update(Job)
            .where(Job.status == JobStatus.RUNNING, Job.lease_expires_at < now)
            .values(status=JobStatus.QUEUED, worker_id=None, lease_expires_at=None, updated_at=now)
            .returning(Job.archive_pk)
        )
        .scalars()
        .all()
    )
    _mark_archives(db, list(expired), ArchiveStatus.PENDING)
    return len(expired)


def requeue_all_running(db: Session, now: datetime) -> int:
    """At start-up of the embedded default: every running job belonged to our previous process."""
    return _requeue_running(db, now, Job.status == JobStatus.RUNNING)


def release_owned(db: Session, worker_id: str, now: datetime) -> int:
    """A stopping worker hands back the jobs it still holds: claimable at once by another worker,
    the interrupted attempt not counted (it did not fail)."""
    owned = (Job.status == JobStatus.RUNNING) & (Job.worker_id == worker_id)
    return _requeue_running(db, now, owned, attempts=Job.attempts - 1)


def _requeue_running(db: Session, now: datetime, which: Any, **values: Any) -> int:
    """Running jobs matching ``which`` become queued now; their archives pending again."""
    requeued = (
        db.execute(
            update(Job)
            .where(which)
            .values(
                status=JobStatus.QUEUED,
                worker_id=None,
                lease_expires_at=None,
                run_after=now,
                updated_at=now,
                **values,
            )
            .returning(Job.archive_pk)
        )
        .scalars()
        .all()
    )
    _mark_archives(db, list(requeued), ArchiveStatus.PENDING)
    return len(requeued)


def claim_next(db: Session, worker_id: str, now: datetime, lease: timedelta) -> ClaimedJob | None:
    """Claim the next runnable job with a lease, or None."""
    running = aliased(Job)
    older = aliased(Archive)
    candidate = (
        select(Job.id)
        .where(
            Job.status == JobStatus.QUEUED,
            Job.run_after <= now,
            ~exists().where(
                running.session_pk == Job.session_pk, running.status == JobStatus.RUNNING
            ),
            ~exists().where(
                older.session_pk == Job.session_pk,
                older.archive_index < Job.archive_index,
                older.status.in_([ArchiveStatus.PENDING, ArchiveStatus.RUNNING]),
            ),
        )
        .order_by(Job.run_after, Job.id)
        .limit(1)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    row = db.execute(
        update(Job)
        .where(Job.id == candidate)
        .values(
            status=JobStatus.RUNNING,
            worker_id=worker_id,
            lease_expires_at=now + lease,
            attempts=Job.attempts + 1,
            updated_at=now,
        )
        .returning(
            Job.id, Job.tenant_id, Job.session_pk, Job.archive_pk, Job.archive_index, Job.attempts
        )
    ).one_or_none()
    if row is None:
        return None
    _mark_archives(db, [row.archive_pk], ArchiveStatus.RUNNING)
    return ClaimedJob(
        row.id, row.tenant_id, row.session_pk, row.archive_pk, row.archive_index, row.attempts
    )


def renew_lease(db: Session, job_id: int, worker_id: str, now: datetime, lease: timedelta) -> bool:
    """Extend the lease; False when the job is no longer ours."""
    result = cast(
        CursorResult[Any],
        db.execute(
            update(Job)
            .where(Job.id == job_id, Job.worker_id == worker_id, Job.status == JobStatus.RUNNING)
            .values(lease_expires_at=now + lease, updated_at=now)
        ),
    )
    return bool(result.rowcount)


def still_owned(db: Session, job_id: int, worker_id: str) -> bool:
    stmt = select(Job.id).where(
        Job.id == job_id, Job.worker_id == worker_id, Job.status == JobStatus.RUNNING
    )
    return db.execute(stmt).first() is not None


def mark_succeeded(db: Session, job_id: int, now: datetime) -> None:
    db.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(status=JobStatus.SUCCEEDED, lease_expires_at=None, stage=None, updated_at=now)
    )


def schedule_retry(
    db: Session,
    job: ClaimedJob,
    run_after: datetime,
    error: str,
    stage: str,
    now: datetime,
    *,
    refund_attempt: bool = False,
) -> None:
    """Queue the job again after ``run_after``, recording why; a refunded attempt does not count."""
    attempts = Job.attempts - 1 if refund_attempt else Job.attempts
    db.execute(
        update(Job)
        .where(Job.id == job.job_id)
        .values(
            status=JobStatus.QUEUED,
            worker_id=None,
            lease_expires_at=None,
            run_after=run_after,
            last_error=error,
            stage=stage,
            attempts=attempts,
            updated_at=now,
        )
    )
    _mark_archives(db, [job.archive_pk], ArchiveStatus.PENDING)


def mark_failed(db: Session, job: ClaimedJob, error: str, stage: str, now: datetime) -> None:
    db.execute(
        update(Job)
        .where(Job.id == job.job_id)
        .values(
            status=JobStatus.FAILED,
            lease_expires_at=None,
            last_error=error,
            stage=stage,
            updated_at=now,
        )
    )
    db.execute(
        update(Archive)
        .where(Archive.id == job.archive_pk)
        .values(status=ArchiveStatus.FAILED, error=error, error_stage=stage, completed_at=now)
    )


def _mark_archives(db: Session, archive_pks: list[int], status: ArchiveStatus) -> None:
    if archive_pks:
        db.execute(update(Archive).where(Archive.id.in_(archive_pks)).values(status=status))


def job_session(db: Session, session_pk: int) -> AgentSession | None:
    """The session a job's archive belongs to (None once the session is deleted)."""
    return db.get(AgentSession, session_pk)


def first_user_request(db: Session, session_pk: int) -> str | None:
    """The search text of the session's first user message (Phase 2's first_user_request)."""
    stmt = (
        select(StoredMessage.search_text)
        .where(StoredMessage.session_pk == session_pk, StoredMessage.role == "user")
        .order_by(StoredMessage.seq)
        .limit(1)
    )
    return db.execute(stmt).scalar_one_or_none()


def open_job_count(db: Session) -> int:
    """Jobs queued or running: the depth of the queue."""
    stmt = (
        select(func.count())
        .select_from(Job)
        .where(Job.status.in_([JobStatus.QUEUED, JobStatus.RUNNING]))
    )
    return int(db.execute(stmt).scalar_one())
