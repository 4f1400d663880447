"""PostgreSQL: a session's write lock, for writers that run concurrently."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session


class PostgresSessionLock:
    def lock_session(self, db: Session, tenant_id: str, session_id: str) -> None:
        """A transaction-scoped advisory lock on the session's key: what SQLite's single writer
        gives every write unit of work."""
        db.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"),
            {"k": f"session\x1f{tenant_id}\x1f{session_id}"},
        )
