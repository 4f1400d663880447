"""Units of work: the only place that opens transactions and commits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

from sqlalchemy import Engine, text
from sqlalchemy.engine import Dialect as SADialect
from sqlalchemy.orm import Session

from app.db.backends import storage_for
from app.db.driver_query import DriverQuery, raised_as_sqlalchemy
from app.db.engine import BEGIN_MODE_OPTION, group_commit_for
from app.db.seams import Storage
from app.db.shared.write_probe import probe_write
from app.db.storage import StorageHealth, storage_problem

R = TypeVar("R")


class UnitOfWork:
    """Opens read and write transactions; a write commits when its block ends without error."""

    def __init__(self, engine: Engine, vector_cache_mb: int | None = None) -> None:
        self.engine = engine
        self.storage: Storage = (
            storage_for(engine)
            if vector_cache_mb is None
            else storage_for(engine, vector_cache_mb * 1024 * 1024)
        )
        self.health = StorageHealth()
        self._group_commit = group_commit_for(engine)
        # Other processes still meet the database's busy timeout.
        self._write_lock: AbstractContextManager[object] = (
            threading.Lock() if self.storage.single_writer else nullcontext()
        )

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction that holds the write lock from its first statement; when the block
        ends without error it has committed and the commit is on disk."""
        with self._watched():
            with self._write_lock, self.engine.connect() as conn:
                conn.execution_options(**{BEGIN_MODE_OPTION: "IMMEDIATE"})
                with (
                    Session(bind=conn, expire_on_commit=False, autoflush=False) as session,
                    session.begin(),
                ):
                    yield session
            if self._group_commit is not None:
                self._group_commit.wait_durable()  # outside the lock: the next writer goes on

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only snapshot; nothing is committed."""
        # Closing the connection rolls the snapshot back.
        with (
            self._watched(),
            self.engine.connect() as conn,
            Session(bind=conn, expire_on_commit=False) as session,
        ):
            yield session

    def driver_row(self, query: DriverQuery, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """The first row of a one-statement read, on a pooled driver connection without a
        session (app/db/driver_query.py): for the read every request makes."""
        return self._driver_read(query.first_row, query, params)

    def driver_rows(self, query: DriverQuery, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of a one-statement read, on a pooled driver connection without a session
        (as ``driver_row``)."""
        return self._driver_read(query.all_rows, query, params)

    def _driver_read(
        self,
        read: Callable[[Any, SADialect, Mapping[str, Any]], R],
        query: DriverQuery,
        params: Mapping[str, Any],
    ) -> R:
        dbapi_error = self.engine.dialect.loaded_dbapi.Error
        with self._watched(), raised_as_sqlalchemy(dbapi_error, query.statement_text, params):
            connection = self.engine.raw_connection()
            try:
                return read(connection, self.engine.dialect, params)
            finally:
                connection.close()  # back to the pool, which rolls back what the read began

    def ping(self) -> None:
        """Run the cheapest query there is: raises when the database does not answer (a failure
        is remembered for /readyz like any other)."""
        with self.read() as db:
            db.execute(text("SELECT 1"))

    def probe_write(self) -> None:
        """Open a write transaction, make a schema change and roll it back: raises when the database
        cannot be written (a read-only file says so only when something is written)."""
        with self._watched(), self._write_lock, self.engine.connect() as conn:
            conn.execution_options(**{BEGIN_MODE_OPTION: "IMMEDIATE"})
            transaction = conn.begin()
            try:
                probe_write(conn)
            finally:
                transaction.rollback()

    @contextmanager
    def _watched(self) -> Iterator[None]:
        """Remember storage failures (disk full, read-only, I/O errors) for /readyz."""
        try:
            yield
        except Exception as exc:
            reason = storage_problem(exc)
            if reason is not None and reason != "busy":
                self.health.record_failure(reason)
            raise
