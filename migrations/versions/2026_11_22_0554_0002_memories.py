"""memories

Revision ID: 0002_memories
Revises: 0001_initial
Create Date: 2026-11-22 05:54:26.280288
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UtcDateTime
from migrations.helpers import create_vector_index, create_word_index, drop_text_index

revision: str = "0002_memories"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "embedding_cache",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("dimensions", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_embedding_cache")),
    )
    op.create_table(
        "memories",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("owner_kind", sa.String(length=8), nullable=False),
        sa.Column("owner_id", sa.String(length=256), nullable=False),
        sa.Column("uri", sa.String(length=1024), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("abstract", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("sensitivity", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("source_json", sa.Text(), nullable=False),
        sa.Column("embedding_model", sa.String(length=128), nullable=True),
        sa.Column("superseded_by", sa.String(length=36), nullable=True),
        sa.Column("expires_at", UtcDateTime(), nullable=True),
        sa.Column("observed_at", UtcDateTime(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memories")),
    )
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.create_index(
            "ix_memories_owner_category",
            ["tenant_id", "owner_kind", "owner_id", "category"],
            unique=False,
        )
        batch_op.create_index("ix_memories_tenant_uri", ["tenant_id", "uri"], unique=False)

    op.create_table(
        "memory_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("memory_id", sa.String(length=36), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("before_json", sa.Text(), nullable=True),
        sa.Column("after_json", sa.Text(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_audit")),
    )
    with op.batch_alter_table("memory_audit", schema=None) as batch_op:
        batch_op.create_index("ix_memory_audit_memory", ["tenant_id", "memory_id"], unique=False)

    op.create_table(
        "memory_chunks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("memory_id", sa.String(length=36), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding_model", sa.String(length=128), nullable=True),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_memory_chunks_memory_id_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_memory_chunks")),
    )
    with op.batch_alter_table("memory_chunks", schema=None) as batch_op:
        batch_op.create_index("ix_memory_chunks_memory", ["memory_id"], unique=False)

    with op.batch_alter_table("archives", schema=None) as batch_op:
        batch_op.add_column(sa.Column("memories_json", sa.Text(), nullable=True))
    create_word_index("memory_fts")
    create_vector_index("memory_vec", 384)


def downgrade() -> None:
    with op.batch_alter_table("archives", schema=None) as batch_op:
        batch_op.drop_column("memories_json")
    drop_text_index("memory_vec")
    drop_text_index("memory_fts")
    with op.batch_alter_table("memory_chunks", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_chunks_memory")

    op.drop_table("memory_chunks")
    with op.batch_alter_table("memory_audit", schema=None) as batch_op:
        batch_op.drop_index("ix_memory_audit_memory")

    op.drop_table("memory_audit")
    with op.batch_alter_table("memories", schema=None) as batch_op:
        batch_op.drop_index("ix_memories_tenant_uri")
        batch_op.drop_index("ix_memories_owner_category")

    op.drop_table("memories")
    op.drop_table("embedding_cache")
