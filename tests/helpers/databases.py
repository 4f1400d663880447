"""A migrated database of a test's own on either backend, for tests that build their engine."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine

from app.db.engine import create_db_engine
from app.settings import Settings
from tests.helpers import postgres


@contextmanager
def migrated_database(request: pytest.FixtureRequest, backend: str, folder: Path) -> Iterator[str]:
    """The URL of a migrated database: a copy of the migrated SQLite template in ``folder``, or a
    PostgreSQL database made from the migrated template and dropped afterwards."""
    if backend == "sqlite":
        path = folder / "test.db"
        shutil.copyfile(request.getfixturevalue("migrated_template"), path)
        yield f"sqlite:///{path}"
        return
    server: postgres.PostgresServer = request.getfixturevalue("server")
    url = server.create_database(template=request.getfixturevalue("postgres_template"))
    try:
        yield url
    finally:
        server.drop_database(url)


@contextmanager
def migrated_engine(request: pytest.FixtureRequest, backend: str, folder: Path) -> Iterator[Engine]:
    """An engine on a migrated database of ``migrated_database``, disposed of afterwards."""
    with migrated_database(request, backend, folder) as url:
        engine = create_db_engine(Settings(database_url=url))
        try:
            yield engine
        finally:
            engine.dispose()
