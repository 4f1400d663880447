"""Engine creation and the connection policy of each database.

SQLite policy (one place, with reasons):
- the stock ``sqlite3`` module cannot load extensions, so connections come from ``pysqlite3``;
- sqlite-vec is loaded on every connection, extension loading is switched off again at once;
- WAL lets readers run beside the single writer; ``synchronous`` is configurable (FULL by default,
  so that a 200 from /after-turn survives power loss, not only a process crash). FULL on a database
  file is carried out by group commit (``app.db.group_commit``): the connections run NORMAL and the
  unit of work waits for a shared fsync of the WAL after each write commits;
- foreign keys on, busy timeout set;
- the driver's implicit transactions are disabled and we emit BEGIN ourselves, so a write unit of
  work can take the write lock up front with ``BEGIN IMMEDIATE`` (no deadlocking lock upgrades).

PostgreSQL policy (``postgresql+psycopg://``, psycopg 3):
- a pool sized by ``CE_DB__POOL_SIZE``, connections checked before use (a server restart or an
  idle timeout must not fail the next request);
- no pragmas and no group commit: the server's own WAL and ``synchronous_commit`` make a commit
  durable when it returns, and writers run concurrently (row locks, not a database lock);
- a write unit of work (``BEGIN IMMEDIATE`` on SQLite) runs READ COMMITTED, PostgreSQL's default;
  a read unit of work runs REPEATABLE READ, so that all its statements see one snapshot, as a
  deferred SQLite transaction does. The level is set on the psycopg connection before the
  transaction begins, so it travels in the BEGIN (a SET TRANSACTION was one more round trip).
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import pysqlite3.dbapi2 as sqlite_dbapi
import sqlite_vec
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from app.db.driver_query import raised_as_sqlalchemy
from app.db.group_commit import GroupCommit
from app.settings import Settings

BEGIN_MODE_OPTION = "ce_begin"
MIN_SQLITE_VERSION = (3, 43, 0)  # contentless-delete FTS5 tables
_GROUP_COMMITS: weakref.WeakKeyDictionary[Engine, GroupCommit] = weakref.WeakKeyDictionary()


def group_commit_for(engine: Engine) -> GroupCommit | None:
    """The group commit that makes this engine's writes durable, when it has one."""
    return _GROUP_COMMITS.get(engine)


def create_db_engine(settings: Settings) -> Engine:
    """Build the engine for ``settings.database_url`` with the dialect's connection policy."""
    url = make_url(settings.database_url)
    backend = url.get_backend_name()
    if backend == "sqlite":
        return _create_sqlite_engine(settings, url.set(drivername="sqlite+pysqlite"))
    if backend == "postgresql":
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")  # no driver named: psycopg 3
        if url.get_driver_name() != "psycopg":
            raise ValueError(
                f"unsupported PostgreSQL driver {url.get_driver_name()!r}: use postgresql+psycopg://"
            )
        return _create_postgres_engine(settings, url)
    raise ValueError(
        f"unsupported database backend {backend!r}: use sqlite:/// or postgresql+psycopg://"
    )


def _create_postgres_engine(settings: Settings, url: Any) -> Engine:
    import psycopg  # noqa: PLC0415 - a SQLite deployment never loads the PostgreSQL client

    engine = create_engine(
        url,
        pool_size=settings.db.pool_size,
        max_overflow=32,
        pool_pre_ping=True,
        connect_args={"application_name": "context-engine"},
    )

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # psycopg opens the transaction at its first statement, with the connection's level in
        # the same BEGIN: a SET TRANSACTION as the first statement was one more round trip.
        write = conn.get_execution_options().get(BEGIN_MODE_OPTION) == "IMMEDIATE"
        level = None if write else psycopg.IsolationLevel.REPEATABLE_READ
        conn.connection.dbapi_connection.isolation_level = level

    return engine


def _create_sqlite_engine(settings: Settings, url: Any) -> Engine:
    database = url.database
    # A "file:" URI (uri=true, e.g. mode=ro) names its own file; only a plain path gets its directory made.
    path = None
    if database and database != ":memory:" and not database.startswith("file:"):
        path = Path(database).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
    _check_sqlite_version()
    engine = create_engine(
        url,
        module=sqlite_dbapi,
        pool_size=settings.db.pool_size,
        max_overflow=32,
        connect_args={"check_same_thread": False, "timeout": settings.db.busy_timeout_ms / 1000},
    )
    synchronous = settings.db.sqlite_synchronous
    if synchronous == "FULL" and path is not None:
        _GROUP_COMMITS[engine] = GroupCommit(path)
        synchronous = "NORMAL"  # the unit of work syncs the WAL after each write commits
    busy_ms = settings.db.busy_timeout_ms

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        dbapi_conn.enable_load_extension(True)
        sqlite_vec.load(dbapi_conn)
        dbapi_conn.enable_load_extension(False)
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get(BEGIN_MODE_OPTION, "DEFERRED")
        # On the driver's cursor: through exec_driver_sql the BEGIN of every unit of work cost
        # more CPU than SQLite's own work; errors are raised as SQLAlchemy raises them (a busy database too).
        statement = f"BEGIN {mode}"
        cursor = conn.connection.cursor()
        try:
            with raised_as_sqlalchemy(sqlite_dbapi.Error, statement, None):
                cursor.execute(statement)
        finally:
            cursor.close()

    return engine


def _check_sqlite_version() -> None:
    version = tuple(int(p) for p in sqlite_dbapi.sqlite_version.split("."))
    if version < MIN_SQLITE_VERSION:
        raise RuntimeError(
            f"SQLite {sqlite_dbapi.sqlite_version} is too old; need {MIN_SQLITE_VERSION}"
        )
