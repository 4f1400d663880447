"""SQLite memory word index: postings ordered by impact and per-partition counters

Revision ID: 0010_sqlite_memory_postings
Revises: 0009_memory_postings
Create Date: 2026-11-26 05:00:00

On PostgreSQL nothing changes (0009 made them there). On SQLite the memory word index gets what
PostgreSQL has (app/search/postings.py): ``memory_words`` (each chunk's partition and words),
``memory_postings`` (partition, term, chunk, frequency, impact) with an index that reads a term's
best chunks first, and the counters ``memory_terms`` and ``memory_partitions``. BM25 is then
scored over the searched partitions' statistics, not FTS5's whole-index ones, so
``memory_fts_vocab`` is dropped. Chunks already indexed are posted here.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
from sqlalchemy import select

from app.db.base import Base
from app.db.models import Memory
from app.db.shared.memory_partitions import memory_partition
from app.db.sqlite.memory_postings import post_chunks
from app.memory.store.writes import index_text
from app.search.text.words import words
from migrations.helpers import POSTGRES, create_vocabulary, drop_text_index

revision: str = "0010_sqlite_memory_postings"
down_revision: str | None = "0009_memory_postings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 2000


def upgrade() -> None:
    if op.get_bind().dialect.name == POSTGRES:
        return
    op.execute(
        "CREATE TABLE memory_words (chunk_id INTEGER PRIMARY KEY, partition TEXT NOT NULL, "
        "tokens TEXT NOT NULL)"
    )
    op.execute(
        "CREATE TABLE memory_postings (partition TEXT NOT NULL, term TEXT NOT NULL, "
        "chunk_id INTEGER NOT NULL, frequency INTEGER NOT NULL, impact REAL NOT NULL, "
        "PRIMARY KEY (partition, term, chunk_id)) WITHOUT ROWID"
    )
    op.execute(
        "CREATE INDEX ix_memory_postings_best ON memory_postings (partition, term, impact DESC)"
    )
    op.execute(
        "CREATE TABLE memory_terms (partition TEXT NOT NULL, term TEXT NOT NULL, "
        "chunks INTEGER NOT NULL, PRIMARY KEY (partition, term)) WITHOUT ROWID"
    )
    op.execute(
        "CREATE TABLE memory_partitions (partition TEXT PRIMARY KEY, chunks INTEGER NOT NULL, "
        "words INTEGER NOT NULL)"
    )
    drop_text_index("memory_fts_vocab")
    _post_existing_chunks()


def _post_existing_chunks() -> None:
    bind = op.get_bind()
    memories = Base.metadata.tables["memories"]
    chunks = Base.metadata.tables["memory_chunks"]
    query = (
        select(
            chunks.c.id,
            chunks.c.text,
            memories.c.tenant_id,
            memories.c.owner_kind,
            memories.c.owner_id,
            memories.c.title,
            memories.c.observed_at,
            memories.c.created_at,
        )
        .join(memories, memories.c.id == chunks.c.memory_id)
        .order_by(chunks.c.id)
    )
    rows = []
    for row in bind.execute(query):
        memory = Memory(title=row.title, observed_at=row.observed_at, created_at=row.created_at)
        tokens = words(index_text(memory, row.text))
        if tokens:
            partition = memory_partition(row.tenant_id, (row.owner_kind, row.owner_id))
            rows.append((int(row.id), partition, tokens, None))
    for start in range(0, len(rows), _BATCH):
        post_chunks(bind, rows[start : start + _BATCH])


def downgrade() -> None:
    if op.get_bind().dialect.name == POSTGRES:
        return
    create_vocabulary("memory_fts_vocab", "memory_fts")
    for table in ("memory_partitions", "memory_terms", "memory_postings", "memory_words"):
        op.execute(f"DROP TABLE {table}")
