"""retrieval: message vectors and search facts for ranked archive search

Revision ID: 0004_message_vectors
Revises: 0003_turn_commits
Create Date: 2026-11-23 11:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.helpers import create_message_vector_index, drop_text_index

revision: str = "0004_message_vectors"
down_revision: str | None = "0003_turn_commits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "message_search",
        sa.Column("message_id", sa.Integer(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("said_at_ms", sa.BigInteger(), nullable=True),
        sa.Column("dates", sa.Text(), nullable=False),
        sa.Column("embedding_model", sa.String(length=128), nullable=True),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["message_id"],
            ["messages.id"],
            name=op.f("fk_message_search_message_id_messages"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_message_search_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("message_id", name=op.f("pk_message_search")),
    )
    with op.batch_alter_table("message_search", schema=None) as batch_op:
        batch_op.create_index("ix_message_search_session", ["session_pk"], unique=False)
    create_message_vector_index("message_vec", 384)


def downgrade() -> None:
    drop_text_index("message_vec")
    with op.batch_alter_table("message_search", schema=None) as batch_op:
        batch_op.drop_index("ix_message_search_session")
    op.drop_table("message_search")
