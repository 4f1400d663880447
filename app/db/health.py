"""Probes of the database and its SQLite extensions for ``check``: they look, they change nothing."""

from __future__ import annotations

import pysqlite3.dbapi2 as sqlite_dbapi
import sqlite_vec
from sqlalchemy import Engine, text

from app.db.engine import MIN_SQLITE_VERSION


class ExtensionMissing(Exception):
    """SQLite lacks something the service needs (sqlite-vec, FTS5 trigram, a recent version)."""


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
