"""A consistent copy of the live SQLite database, taken while the service keeps writing.

SQLite's online backup API copies the pages in one step, inside one read transaction: the copy
is the database exactly as of one commit (WAL readers never block the writer, so the service
goes on acknowledging turns meanwhile). Done in several steps, every write by another connection
would restart the copy. The copy is written beside the destination, checked with
``PRAGMA integrity_check`` and only then moved into place, so a destination file is always whole.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pysqlite3.dbapi2 as sqlite_dbapi
import sqlite_vec
from sqlalchemy.engine import make_url


class BackupError(Exception):
    """The copy could not be made or did not pass the integrity check (nothing was left in place)."""


@dataclass(frozen=True, slots=True)
class BackupResult:
    destination: Path
    pages: int
    bytes: int
    seconds: float


def sqlite_path(database_url: str) -> Path:
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        raise BackupError(
            "backup copies a SQLite database file; CE_DATABASE_URL names none "
            "(for PostgreSQL use its own tools: pg_dump, or the server's base backups and WAL archive)"
        )
    return Path(url.database).expanduser()


def backup_database(
    database_url: str, destination: Path, busy_timeout_s: float = 10.0
) -> BackupResult:
    """Copy the database to ``destination`` (which must not exist) and verify the copy."""
    source_path = sqlite_path(database_url)
    if not source_path.exists():
        raise BackupError(f"the database {source_path} does not exist")
    partial = destination.with_name(destination.name + ".partial")
    partial.unlink(missing_ok=True)
    started = time.monotonic()
    source = sqlite_dbapi.connect(str(source_path), timeout=busy_timeout_s)
    try:
        target = sqlite_dbapi.connect(str(partial))
        try:
            source.backup(target, pages=-1)
            pages = int(target.execute("PRAGMA page_count").fetchone()[0])
        finally:
            target.close()
    except sqlite_dbapi.Error as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"the copy failed: {exc}") from exc
    finally:
        source.close()
    problem = integrity_problem(partial)
    if problem is not None:
        partial.unlink(missing_ok=True)
        raise BackupError(f"the copy failed the integrity check: {problem}")
    _sync(partial)
    os.replace(partial, destination)
    return BackupResult(destination, pages, destination.stat().st_size, time.monotonic() - started)


def integrity_problem(path: Path) -> str | None:
    """None when ``PRAGMA integrity_check`` says ok, else its first complaint."""
    conn = sqlite_dbapi.connect(str(path))
    try:
        # The vector tables are virtual tables of sqlite-vec: the check needs the module loaded.
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        rows = [row[0] for row in conn.execute("PRAGMA integrity_check")]
    except sqlite_dbapi.Error as exc:
        return str(exc)
    finally:
        conn.close()
    return None if rows == ["ok"] else "; ".join(rows[:5])


def _sync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
