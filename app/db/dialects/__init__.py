"""The dialect seam: the only code (with migrations/helpers.py) that differs per database."""

from __future__ import annotations

from sqlalchemy import Engine

from app.db.dialects.base import Dialect, TextHit
from app.db.dialects.postgres import PostgresDialect
from app.db.dialects.sqlite import SqliteDialect
from app.db.dialects.sqlite_vectors import DEFAULT_BUDGET_BYTES, VectorCache


def dialect_for(engine: Engine, vector_cache_bytes: int = DEFAULT_BUDGET_BYTES) -> Dialect:
    """The dialect implementation for an engine."""
    if engine.dialect.name == "sqlite":
        return SqliteDialect(VectorCache(vector_cache_bytes))
    if engine.dialect.name == "postgresql":
        return PostgresDialect()  # pgvector searches the tables: no in-process matrices
    raise ValueError(f"no dialect implementation for {engine.dialect.name}")


__all__ = ["Dialect", "TextHit", "dialect_for"]
