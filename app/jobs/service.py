"""What the other domains ask of the job queue, inside the caller's transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from app.db.models import Archive
from app.db.uow import UnitOfWork
from app.jobs import repository as queue


def enqueue_phase2(db: Session, archive: Archive, now: datetime) -> None:
    """Queue the Phase 2 job of a new archive, atomically with the archive itself."""
    queue.enqueue_phase2(db, archive, now)


def queue_depth(uow: UnitOfWork) -> int:
    """How many Phase 2 jobs are queued or running."""
    with uow.read() as db:
        return queue.open_job_count(db)
