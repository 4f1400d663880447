"""Storage failures: what SQLite says when the disk is full, the file is read-only or the device
fails, and how long the service has been seeing them (docs/api.md, Errors: 503; docs/quality.md, Reliability).

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
DESCRIPTIONS = {
    "disk_full": "the disk holding the database is full",
    "read_only": "the database file cannot be written (read-only file or directory)",
    "io_error": "the storage device reported an I/O error",
    "cannot_open": "the database file cannot be opened",
    "corrupt": "the database file is damaged or not a database",
    "busy": "the database is locked by another process",
}


def storage_problem(error: BaseException) -> str | None:
    """The storage reason of a database error (``disk_full``, ``read_only``, …), else None."""
    original = error.orig if isinstance(error, DBAPIError) else error
    name = str(getattr(original, "sqlite_errorname", "") or "")
    for prefix, reason in _REASONS.items():
        if name == prefix or name.startswith(prefix + "_"):
            return reason
    if not isinstance(error, DBAPIError):
        return None
    message = str(original).lower()
    return next((reason for text, reason in _MESSAGES if text in message), None)


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
