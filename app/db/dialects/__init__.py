"""The dialect seam: the only code (with migrations/helpers.py) that differs per database."""

from __future__ import annotations

from sqlalchemy import Engine

from app.db.dialects.base import Dialect, TextHit
from app.db.dialects.sqlite import SqliteDialect


def dialect_for(engine: Engine) -> Dialect:
    """The dialect implementation for an engine."""
    if engine.dialect.name == "sqlite":
        return SqliteDialect()
    raise ValueError(f"no dialect implementation for {engine.dialect.name}")


__all__ = ["Dialect", "TextHit", "dialect_for"]
