"""memories.content_key: exact duplicates found by an index lookup

Revision ID: 0015_memory_content_key
Revises: 0014_archive_messages_indexed
Create Date: 2026-11-27 04:00:00

A new memory is not stored when the owner already has one of the same category whose normalised
text is the same. That check read every current memory of the owner's category and normalised
each, inside the write lock: a cost that grew with the owner's memories (about 100 ms for twenty
memories of 100 KB) while every other write waited. Now each row keeps a digest of its normalised
content, and the check is a lookup in an index that ends with it. Existing rows get their key here.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.memory.store.content_key import content_key

revision: str = "0015_memory_content_key"
down_revision: str | None = "0014_archive_messages_indexed"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 500


def upgrade() -> None:
    # Not a batch (a copy of the table), which the triggers on memories would not survive.
    op.add_column("memories", sa.Column("content_key", sa.String(length=32), nullable=True))
    op.create_index(
        "ix_memories_owner_category_key",
        "memories",
        ["tenant_id", "owner_kind", "owner_id", "category", "content_key"],
    )
    bind = op.get_bind()
    last = ""
    while True:
        rows = bind.execute(
            sa.text(
                "SELECT id, content FROM memories WHERE id > :last AND content_key IS NULL "
                "ORDER BY id LIMIT :n"
            ),
            {"last": last, "n": _BATCH},
        ).all()
        if not rows:
            return
        bind.execute(
            sa.text("UPDATE memories SET content_key = :key WHERE id = :id"),
            [{"id": row.id, "key": content_key(row.content)} for row in rows],
        )
        last = rows[-1].id


def downgrade() -> None:
    op.drop_index("ix_memories_owner_category_key", table_name="memories")
    op.execute("ALTER TABLE memories DROP COLUMN content_key")  # SQLite 3.35+ and PostgreSQL
