"""retrieval: passage vectors of memory chunks

Revision ID: 0017_memory_passages
Revises: 0016_message_passages
Create Date: 2026-11-28 00:00:00

Memory search scores a chunk by its whole vector and by its best passage (a sentence or line,
app/search/text/passages.py), as ranked archive search scores a message. The passages' vectors are read
only for a search's nearest chunks, so they are float32 bytes in a plain table keyed by chunk,
removed with it. Memories embedded before this revision are marked for re-embedding
(``embedding_model`` cleared), so ``context-engine reembed`` gives them their passages (their whole
texts' vectors come from the embedding cache); until then their chunks rank by the whole vector
as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_memory_passages"
down_revision: str | None = "0016_message_passages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "memory_passage_vectors",
        sa.Column("chunk_id", sa.Integer(), nullable=False),
        sa.Column("passage_index", sa.Integer(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chunk_id"],
            ["memory_chunks.id"],
            name=op.f("fk_memory_passage_vectors_chunk_id_memory_chunks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "chunk_id", "passage_index", name=op.f("pk_memory_passage_vectors")
        ),
    )
    op.execute("UPDATE memories SET embedding_model = NULL WHERE embedding_model IS NOT NULL")


def downgrade() -> None:
    # Memories stay marked for re-embedding: ``reembed`` rewrites their vectors as they were.
    op.drop_table("memory_passage_vectors")
