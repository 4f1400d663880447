"""PostgreSQL memory word index: postings ordered by impact and per-partition counters

Revision ID: 0009_memory_postings
Revises: 0008_api_keys
Create Date: 2026-11-25 18:00:00

On SQLite nothing changes (FTS5 keeps its own statistics). On PostgreSQL each chunk of the word
index gets its partition, and three tables are added (app/db/postgres/memory_postings.py):
``memory_postings`` (partition, term, chunk, frequency, impact) with a b-tree that reads a term's
best chunks first, and the counters ``memory_terms`` (chunks holding a term, per partition) and
``memory_partitions`` (chunks and words per partition). Rows already indexed are posted here.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op
from sqlalchemy import text

from app.db.postgres.memory_postings import post_chunks
from migrations.helpers import POSTGRES

revision: str = "0009_memory_postings"
down_revision: str | None = "0008_api_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 2000


def upgrade() -> None:
    if op.get_bind().dialect.name != POSTGRES:
        return
    op.execute('ALTER TABLE memory_fts ADD COLUMN partition TEXT COLLATE "C"')
    op.execute(
        "CREATE TABLE memory_postings (chunk_id BIGINT NOT NULL REFERENCES memory_chunks (id) "
        'ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, term TEXT COLLATE "C" NOT NULL, '
        'partition TEXT COLLATE "C" NOT NULL, frequency INTEGER NOT NULL, impact REAL NOT NULL, '
        "PRIMARY KEY (chunk_id, term))"
    )
    op.execute(
        "CREATE INDEX ix_memory_postings_best ON memory_postings "
        "(partition, term, impact DESC, chunk_id)"
    )
    op.execute(
        'CREATE TABLE memory_terms (partition TEXT COLLATE "C" NOT NULL, '
        'term TEXT COLLATE "C" NOT NULL, chunks BIGINT NOT NULL, PRIMARY KEY (partition, term))'
    )
    op.execute(
        'CREATE TABLE memory_partitions (partition TEXT COLLATE "C" PRIMARY KEY, '
        "chunks BIGINT NOT NULL, words BIGINT NOT NULL)"
    )
    _post_existing_rows()


def _post_existing_rows() -> None:
    bind = op.get_bind()
    bind.execute(
        text(
            "UPDATE memory_fts f SET partition = m.tenant_id || ':' || m.owner_kind || ':' || m.owner_id "
            "FROM memory_chunks c JOIN memories m ON m.id = c.memory_id WHERE c.id = f.id"
        )
    )
    rows = bind.execute(
        text("SELECT id, partition, tokens FROM memory_fts WHERE partition IS NOT NULL ORDER BY id")
    ).all()
    for start in range(0, len(rows), _BATCH):
        batch = [(int(i), str(p), list(t), None) for i, p, t in rows[start : start + _BATCH]]
        post_chunks(bind, batch)


def downgrade() -> None:
    if op.get_bind().dialect.name != POSTGRES:
        return
    op.execute("DROP TABLE memory_partitions")
    op.execute("DROP TABLE memory_terms")
    op.execute("DROP TABLE memory_postings")
    op.execute("ALTER TABLE memory_fts DROP COLUMN partition")
