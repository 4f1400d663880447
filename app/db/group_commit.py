"""Group commit for SQLite: one fsync of the write-ahead log makes many commits durable.

With ``synchronous=FULL`` SQLite fsyncs the WAL inside every commit, while the single write lock is
held, so writers queue behind each other's fsyncs and a database's commit rate is bounded by
the disk's fsync rate before doing any work. Here the connections commit
with ``synchronous=NORMAL`` (the WAL is appended, not synced) and a write unit of work, after its
commit and outside the write lock, waits for an fsync of the WAL file that started after its
commit. Writers that finish while an fsync runs share the next one. A use case still returns only
once its commit is on disk, exactly as with FULL; what changes is that other writers no longer wait
for it. fsync flushes a file's data whatever descriptor it was opened through. With NORMAL, SQLite
syncs the WAL before a checkpoint copies it into the database and syncs the database after, so a
commit that a checkpoint moved before our fsync is already durable.

One difference from FULL remains: another connection can read a commit in the moment between the
commit and its fsync (as with any group commit); the writer itself is not answered before it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path


def fsync_path(path: Path) -> None:
    """fsync one file by name (a file that is gone has nothing left to flush)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class GroupCommit:
    """Shares fsyncs of one database's WAL between the writers that wait for one at a time."""

    def __init__(self, database: Path, sync: Callable[[Path], None] = fsync_path) -> None:
        self.database = database
        self.wal = database.with_name(database.name + "-wal")
        self._sync = sync
        self._cv = threading.Condition()
        self._requested = 0  # tickets handed out: one per commit that wants to be durable
        self._durable = 0  # every ticket up to this one is covered by a finished fsync
        self._syncing = False
        self.syncs = 0  # fsyncs run (for tests and metrics)

    def wait_durable(self) -> None:
        """Return once an fsync that began after this call's commit has finished."""
        with self._cv:
            self._requested += 1
            ticket = self._requested
            while self._durable < ticket:
                if self._syncing:
                    self._cv.wait()
                    continue
                self._lead(self._requested)

    def _lead(self, covers: int) -> None:
        """Run one fsync for every ticket handed out so far (called holding the condition)."""
        self._syncing = True
        self._cv.release()
        try:
            self._sync(self.wal)
        finally:
            self._cv.acquire()
            self._syncing = False
            self._cv.notify_all()
        self.syncs += 1
        self._durable = max(self._durable, covers)
