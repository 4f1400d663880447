"""Apply the Alembic migrations programmatically (at startup and from the CLI)."""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

ROOT = Path(__file__).resolve().parents[2]


def alembic_config() -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    return config


def upgrade_to_head(engine: Engine) -> None:
    """Bring the database to the newest revision."""
    config = alembic_config()
    with engine.connect() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        conn.commit()


@functools.cache
def code_head() -> str | None:
    """The newest revision the code knows: fixed while the process runs, and reading it parses
    every migration file (/readyz asks on every probe)."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_and_head(engine: Engine) -> tuple[str | None, str | None]:
    """The database's revision and the newest one known to the code."""
    head = code_head()
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
    return current, head
