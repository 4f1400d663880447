"""The two databases of a copy: a SQLite source at the code's migration, a PostgreSQL target
brought to it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from app.db.engine import create_db_engine
from app.db.migrate import current_and_head, upgrade_to_head
from app.db.uow import UnitOfWork
from app.settings import Settings


class CopyError(Exception):
    """The copy cannot go on (or the copy does not match its source): one line for the operator."""


@dataclass(frozen=True, slots=True)
class Endpoints:
    source: UnitOfWork
    target: UnitOfWork


def backend_of(url: str) -> str:
    try:
        return make_url(url).get_backend_name()
    except (ArgumentError, ValueError) as exc:
        raise CopyError(f"not a database URL: {url!r}") from exc


@contextmanager
def open_endpoints(
    settings: Settings, source_url: str, target_url: str, *, migrate: bool
) -> Iterator[Endpoints]:
    """Engines for both sides; the source must be SQLite at the code's migration, the target
    PostgreSQL (migrated to head here when ``migrate``, else required to be there)."""
    if backend_of(source_url) != "sqlite":
        raise CopyError(f"the source must be a SQLite database, not {source_url}")
    if backend_of(target_url) != "postgresql":
        raise CopyError(
            f"the target must be a PostgreSQL database (postgresql+psycopg://…), not {target_url}"
        )
    path = make_url(source_url).database
    if not path or path == ":memory:" or not Path(path).expanduser().is_file():
        raise CopyError(f"the source database {path or source_url} does not exist")
    source = create_db_engine(settings.model_copy(update={"database_url": source_url}))
    target = create_db_engine(settings.model_copy(update={"database_url": target_url}))
    try:
        current, head = current_and_head(source)
        if current != head:
            raise CopyError(
                f"the source is at migration {current or 'none'}, the code at {head}: "
                "run `context-engine migrate` against it first"
            )
        if current_and_head(target)[0] != head:
            if not migrate:
                raise CopyError("the target is not at the code's migration: run the copy first")
            upgrade_to_head(target)
        yield Endpoints(UnitOfWork(source), UnitOfWork(target))
    finally:
        source.dispose()
        target.dispose()


def shown(url: str) -> str:
    """A database URL as it may be printed: without its password."""
    return make_url(url).render_as_string(hide_password=True)
