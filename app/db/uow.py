"""Units of work: the only place that opens transactions and commits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from app.db.dialects import Dialect, dialect_for
from app.db.engine import BEGIN_MODE_OPTION


class UnitOfWork:
    """Opens read and write transactions; a write commits when its block ends without error."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect: Dialect = dialect_for(engine)
        # SQLite has one writer per file. Queueing writers of this process on a lock is fairer and
        # cheaper than letting them spin in SQLite's busy handler; other processes still meet the
        # busy timeout.
        self._write_lock: AbstractContextManager[object] = (
            threading.Lock() if engine.dialect.name == "sqlite" else nullcontext()
        )

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction that holds the write lock from its first statement."""
        with self._write_lock, self.engine.connect() as conn:
            conn.execution_options(**{BEGIN_MODE_OPTION: "IMMEDIATE"})
            with Session(bind=conn, expire_on_commit=False, autoflush=False) as session:
                with session.begin():
                    yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only snapshot; nothing is committed."""
        # Closing the connection rolls the snapshot back.
        with self.engine.connect() as conn, Session(bind=conn, expire_on_commit=False) as session:
            yield session
