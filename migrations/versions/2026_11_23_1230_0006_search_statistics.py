"""retrieval: stored per-session search statistics, message vectors filterable by time, the
memory word index's vocabulary

Revision ID: 0006_search_statistics
Revises: 0005_redacted_bodies
Create Date: 2026-11-23 12:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.helpers import create_vocabulary, drop_text_index, rebuild_message_vector_index

revision: str = "0006_search_statistics"
down_revision: str | None = "0005_redacted_bodies"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_search_stats",
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.Column("total_chars", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_session_search_stats_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_pk", name=op.f("pk_session_search_stats")),
    )
    op.create_table(
        "session_terms",
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("term", sa.String(length=256), nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_session_terms_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_pk", "term", name=op.f("pk_session_terms")),
    )
    rebuild_message_vector_index("message_vec", 384, with_time=True)
    create_vocabulary("memory_fts_vocab", "memory_fts")


def downgrade() -> None:
    drop_text_index("memory_fts_vocab")
    rebuild_message_vector_index("message_vec", 384, with_time=False)
    op.drop_table("session_terms")
    op.drop_table("session_search_stats")
