"""SQLite's seams composed: one writer per database, reads in process, the vector matrices of both
vector indexes in one budget."""

from __future__ import annotations

from app.db.seams import Storage
from app.db.sqlite.memory_vectors import SqliteMemoryVectors
from app.db.sqlite.memory_words import SqliteMemoryWords
from app.db.sqlite.message_text import SqliteMessageText
from app.db.sqlite.message_vectors import SqliteMessageVectors
from app.db.sqlite.session_lock import SqliteSessionLock
from app.db.sqlite.tool_use import SqliteToolUse
from app.db.sqlite.vector_cache import VectorCache


def sqlite_storage(vector_cache: VectorCache | None = None) -> Storage:
    cache = vector_cache or VectorCache()
    return Storage(
        name="sqlite",
        text=SqliteMessageText(),
        memory_words=SqliteMemoryWords(),
        message_vectors=SqliteMessageVectors(cache),
        memory_vectors=SqliteMemoryVectors(cache),
        locks=SqliteSessionLock(),
        tools=SqliteToolUse(),
        single_writer=True,
        in_process_reads=True,
    )
