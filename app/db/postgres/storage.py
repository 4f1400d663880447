"""PostgreSQL's seams composed. Writers run concurrently (row locks, not a database lock), and
pgvector searches the tables: no in-process matrices."""

from __future__ import annotations

from app.db.postgres.memory_vectors import PostgresMemoryVectors
from app.db.postgres.memory_words import PostgresMemoryWords
from app.db.postgres.message_text import PostgresMessageText
from app.db.postgres.message_vectors import PostgresMessageVectors
from app.db.postgres.session_lock import PostgresSessionLock
from app.db.postgres.tool_use import PostgresToolUse
from app.db.seams import Storage


def postgres_storage() -> Storage:
    return Storage(
        name="postgresql",
        text=PostgresMessageText(),
        memory_words=PostgresMemoryWords(),
        message_vectors=PostgresMessageVectors(),
        memory_vectors=PostgresMemoryVectors(),
        locks=PostgresSessionLock(),
        tools=PostgresToolUse(),
    )
