"""Start-up check of the database: open it, migrate it when asked, try a write. A database the
service cannot use stops start-up with one sentence that says why, not a traceback."""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.storage import DESCRIPTIONS, storage_problem
from app.db.uow import UnitOfWork
from app.settings import Settings


class DatabaseUnusable(Exception):
    """The database cannot be opened, migrated or written; the message is for the operator."""


def check_database(settings: Settings, *, migrate: bool) -> None:
    """Raise DatabaseUnusable when the configured database cannot serve."""
    where = make_url(settings.database_url).database or settings.database_url
    try:
        engine = create_db_engine(settings)
    except OSError as exc:
        raise DatabaseUnusable(
            f"cannot create the directory of the database {where}: {exc.strerror or exc}"
        ) from exc
    try:
        if migrate:
            upgrade_to_head(engine)
        UnitOfWork(engine).probe_write()
    except (DBAPIError, OSError) as exc:
        reason = storage_problem(exc)
        detail = (
            DESCRIPTIONS[reason]
            if reason
            else str(exc.orig if isinstance(exc, DBAPIError) else exc)
        )
        raise DatabaseUnusable(f"cannot use the database {where}: {detail}") from exc
    finally:
        engine.dispose()
