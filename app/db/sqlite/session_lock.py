"""SQLite: a session's write lock is the database's."""

from __future__ import annotations

from sqlalchemy.orm import Session


class SqliteSessionLock:
    def lock_session(self, db: Session, tenant_id: str, session_id: str) -> None:
        """Nothing to take: a write transaction (BEGIN IMMEDIATE) holds the database's one write
        lock, which already makes every other writer wait."""
