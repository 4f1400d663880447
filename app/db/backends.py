"""The storage of an engine: the only choice of database outside the engine's connection policy
(and migrations/helpers.py)."""

from __future__ import annotations

from sqlalchemy import Engine

from app.db.postgres.storage import postgres_storage
from app.db.seams import Storage
from app.db.sqlite.storage import sqlite_storage
from app.db.sqlite.vector_cache import DEFAULT_BUDGET_BYTES, VectorCache


def storage_for(engine: Engine, vector_cache_bytes: int = DEFAULT_BUDGET_BYTES) -> Storage:
    """The storage seams of an engine's database."""
    if engine.dialect.name == "sqlite":
        return sqlite_storage(VectorCache(vector_cache_bytes))
    if engine.dialect.name == "postgresql":
        return postgres_storage()
    raise ValueError(f"no storage implementation for {engine.dialect.name}")
