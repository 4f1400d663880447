"""Storage failures: what SQLite or PostgreSQL says when the disk is full, the database is
read-only, the device fails or the server cannot be reached, and how long the service has been
seeing them (docs/api.md, Errors: 503; docs/quality.md, Reliability).

These are not bugs: the request did nothing and can be retried once an operator frees space or
fixes permissions. They become 503 ``STORAGE_UNAVAILABLE`` with ``Retry-After``, ``/readyz`` fails
while they keep coming, and Phase 2 retries the job instead of failing it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError

# SQLite's primary result codes by name (extended codes such as SQLITE_IOERR_WRITE share them).
_REASONS = {
    "SQLITE_FULL": "disk_full",
    "SQLITE_READONLY": "read_only",
    "SQLITE_IOERR": "io_error",
    "SQLITE_CANTOPEN": "cannot_open",
    "SQLITE_PERM": "read_only",
    "SQLITE_CORRUPT": "corrupt",
    "SQLITE_NOTADB": "corrupt",
    "SQLITE_BUSY": "busy",
    "SQLITE_LOCKED": "busy",
}
# Drivers without error names: the messages SQLite itself writes.
_MESSAGES = (
    ("database or disk is full", "disk_full"),
    ("readonly database", "read_only"),
    ("disk i/o error", "io_error"),
    ("unable to open database file", "cannot_open"),
    ("database disk image is malformed", "corrupt"),
    ("file is not a database", "corrupt"),
    ("database is locked", "busy"),
)
# PostgreSQL's SQLSTATE codes (psycopg's errors carry ``sqlstate``); class 08, connection
# exceptions, is ``unreachable`` as a whole.
_SQLSTATES = {
    "53100": "disk_full",
    "25006": "read_only",  # a read-only transaction: a standby, default_transaction_read_only
    "58030": "io_error",
    "XX001": "corrupt",
    "XX002": "corrupt",
    "53300": "busy",  # too many connections
    "55P03": "busy",  # lock not available
    "40P01": "busy",  # deadlock detected: the other writer went on, this one may try again
    "40001": "busy",  # serialization failure
    "57P01": "unreachable",  # the server is shutting down or restarting
    "57P02": "unreachable",
    "57P03": "unreachable",
}
DESCRIPTIONS = {
    "disk_full": "the disk holding the database is full",
    "read_only": "the database file cannot be written (read-only file or directory)",
    "io_error": "the storage device reported an I/O error",
    "cannot_open": "the database file cannot be opened",
    "corrupt": "the database file is damaged or not a database",
    "busy": "the database is locked by another process",
    "unreachable": "the database server cannot be reached",
}


def storage_problem(error: BaseException) -> str | None:
    """The storage reason of a database error (``disk_full``, ``read_only``, …), else None."""
    original = (error.orig if isinstance(error, DBAPIError) else None) or error
    sqlstate = getattr(original, "sqlstate", None)
    if sqlstate or _is_psycopg(original):
        return _postgres_reason(original, str(sqlstate or ""))
    name = str(getattr(original, "sqlite_errorname", "") or "")
    for prefix, reason in _REASONS.items():
        if name == prefix or name.startswith(prefix + "_"):
            return reason
    if not isinstance(error, DBAPIError):
        return None
    message = str(original).lower()
    return next((reason for text, reason in _MESSAGES if text in message), None)


def _is_psycopg(error: BaseException) -> bool:
    return type(error).__module__.startswith("psycopg")


def _postgres_reason(error: BaseException, sqlstate: str) -> str | None:
    if sqlstate.startswith("08"):
        return "unreachable"
    if not sqlstate:
        # No SQLSTATE: no server answered. An operational or interface error is then the
        # connection failing (refused, dropped, closed); anything else is a bug, not storage.
        kind = type(error).__name__
        return "unreachable" if kind in ("OperationalError", "InterfaceError") else None
    return _SQLSTATES.get(sqlstate)


@dataclass(frozen=True, slots=True)
class StorageFailure:
    reason: str
    at: float  # time.monotonic()


class StorageHealth:
    """The last storage failure this process saw (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: StorageFailure | None = None

    def record_failure(self, reason: str) -> None:
        with self._lock:
            self._last = StorageFailure(reason, time.monotonic())

    def recent_failure(self, within_s: float) -> StorageFailure | None:
        """The last failure when it happened less than ``within_s`` seconds ago."""
        with self._lock:
            last = self._last
        if last is None or time.monotonic() - last.at >= within_s:
            return None
        return last
