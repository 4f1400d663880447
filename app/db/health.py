"""Probes of the database and its extensions (SQLite's, or PostgreSQL's pgvector and pg_trgm) for
``check``: they look, they change nothing."""

from __future__ import annotations

from collections.abc import Callable

import pysqlite3.dbapi2 as sqlite_dbapi
import sqlite_vec
from sqlalchemy import Engine, make_url, text

from app.db.engine import MIN_SQLITE_VERSION, create_db_engine
from app.settings import Settings

POSTGRES_EXTENSIONS = ("vector", "pg_trgm")


class ExtensionMissing(Exception):
    """The database lacks something the service needs (sqlite-vec, FTS5 trigram, a recent SQLite;
    pgvector or pg_trgm on PostgreSQL)."""


def is_postgres(database_url: str) -> bool:
    return make_url(database_url).get_backend_name() == "postgresql"


def probe_postgres(settings: Settings, probe: Callable[[Engine], str]) -> str:
    """Run one probe on a short-lived engine of the configured database."""
    engine = create_db_engine(settings)
    try:
        return probe(engine)
    finally:
        engine.dispose()


def describe_postgres(engine: Engine) -> str:
    """The server's version and where it is (the password never shown)."""
    with engine.connect() as conn:
        version = conn.execute(text("SHOW server_version")).scalar_one()
    where = engine.url.set(password=None).render_as_string(hide_password=True)
    return f"PostgreSQL {version} ({where})"


def postgres_extensions(engine: Engine) -> str:
    """The versions of the extensions the schema needs, installed in this database."""
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT extname, extversion FROM pg_extension WHERE extname = ANY(:names)"),
            {"names": list(POSTGRES_EXTENSIONS)},
        ).all()
    found = {str(name): str(version) for name, version in rows}
    missing = [name for name in POSTGRES_EXTENSIONS if name not in found]
    if missing:
        raise ExtensionMissing(
            f"the PostgreSQL extension {missing[0]} is not installed in this database "
            "(CREATE EXTENSION, or let `context-engine migrate` create it)"
        )
    return ", ".join(f"{name} {found[name]}" for name in POSTGRES_EXTENSIONS)


def ping(engine: Engine) -> None:
    """One round trip; raises what the driver raises."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


def extension_versions() -> str:
    """SQLite's and sqlite-vec's versions, after proving that sqlite-vec loads and that FTS5 has the
    trigram tokenizer, on a throwaway in-memory database."""
    version = tuple(int(p) for p in sqlite_dbapi.sqlite_version.split("."))
    if version < MIN_SQLITE_VERSION:
        raise ExtensionMissing(
            f"SQLite {sqlite_dbapi.sqlite_version} is older than {MIN_SQLITE_VERSION}"
        )
    conn = sqlite_dbapi.connect(":memory:")
    try:
        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        except sqlite_dbapi.Error as exc:
            raise ExtensionMissing(f"sqlite-vec cannot be loaded: {exc}") from exc
        finally:
            conn.enable_load_extension(False)
        vec_version = conn.execute("SELECT vec_version()").fetchone()[0]
        try:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')")
        except sqlite_dbapi.Error as exc:
            raise ExtensionMissing(f"FTS5 with the trigram tokenizer is missing: {exc}") from exc
    finally:
        conn.close()
    return f"SQLite {sqlite_dbapi.sqlite_version}, sqlite-vec {vec_version}, FTS5 trigram"
