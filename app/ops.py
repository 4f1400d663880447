"""Operational checks used by /readyz and /metrics."""

from __future__ import annotations

from app.db.migrate import current_and_head
from app.db.storage import DESCRIPTIONS
from app.db.uow import UnitOfWork
from app.jobs.service import queue_depth


def readiness_problem(uow: UnitOfWork, storage_window_s: float) -> str | None:
    """None when ready, else why not: storage failing in the last ``storage_window_s`` seconds,
    the database not answering, or migrations not current."""
    failure = uow.health.recent_failure(storage_window_s)
    if failure is not None:
        return f"storage unavailable: {DESCRIPTIONS[failure.reason]}"
    try:
        uow.ping()
        current, head = current_and_head(uow.engine)
    except Exception as exc:  # noqa: BLE001 - any failure means not ready
        return f"database unavailable: {exc.__class__.__name__}"
    if current != head:
        return f"migrations not current: database at {current}, code at {head}"
    return None


__all__ = ["queue_depth", "readiness_problem"]
