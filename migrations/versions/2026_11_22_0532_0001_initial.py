"""create sessions messages archives jobs

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22 05:32:23.044565
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UtcDateTime
from migrations.helpers import create_text_index, drop_text_index

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agent_sessions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_id", sa.String(length=512), nullable=False),
        sa.Column("session_key", sa.String(length=1024), nullable=True),
        sa.Column("agent_id", sa.String(length=256), nullable=False),
        sa.Column("user_id", sa.String(length=256), nullable=False),
        sa.Column("live_count", sa.Integer(), nullable=False),
        sa.Column("total_message_count", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("pending_tokens", sa.BigInteger(), nullable=False),
        sa.Column("keep_recent_count", sa.Integer(), nullable=False),
        sa.Column("commit_count", sa.Integer(), nullable=False),
        sa.Column("archive_count", sa.Integer(), nullable=False),
        sa.Column("llm_prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("llm_completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("last_commit_at", UtcDateTime(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_sessions")),
        sa.UniqueConstraint("tenant_id", "session_id", name="uq_agent_sessions_tenant_session"),
    )
    op.create_table(
        "archives",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("archive_index", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("overview", sa.Text(), nullable=False),
        sa.Column("abstract", sa.Text(), nullable=False),
        sa.Column("overview_tokens", sa.Integer(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("message_tokens", sa.Integer(), nullable=False),
        sa.Column("first_seq", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("keep_recent_count", sa.Integer(), nullable=False),
        sa.Column("custom_instructions", sa.Text(), nullable=True),
        sa.Column("wm_path", sa.String(length=32), nullable=True),
        sa.Column("usage_json", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_stage", sa.String(length=64), nullable=True),
        sa.Column("started_at", UtcDateTime(), nullable=True),
        sa.Column("ended_at", UtcDateTime(), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("completed_at", UtcDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_archives_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_archives")),
        sa.UniqueConstraint("session_pk", "archive_index", name="uq_archives_session_index"),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("archive_pk", sa.Integer(), nullable=False),
        sa.Column("archive_index", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=128), nullable=True),
        sa.Column("lease_expires_at", UtcDateTime(), nullable=True),
        sa.Column("run_after", UtcDateTime(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("stage", sa.String(length=64), nullable=True),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.Column("updated_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["archive_pk"],
            ["archives.id"],
            name=op.f("fk_jobs_archive_pk_archives"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_jobs_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_status_run_after", ["status", "run_after"], unique=False)
        batch_op.create_index(
            "uq_jobs_running_session",
            ["session_pk"],
            unique=True,
            sqlite_where=sa.text("status = 'running'"),
            postgresql_where=sa.text("status = 'running'"),
        )

    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("archive_pk", sa.Integer(), nullable=True),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["archive_pk"],
            ["archives.id"],
            name=op.f("fk_messages_archive_pk_archives"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_messages_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
        sa.UniqueConstraint("session_pk", "seq", name="uq_messages_session_seq"),
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index("ix_messages_archive_seq", ["archive_pk", "seq"], unique=False)
        batch_op.create_index(
            "ix_messages_session_archive_seq", ["session_pk", "archive_pk", "seq"], unique=False
        )
        batch_op.create_index(
            "ix_messages_tenant_session_fingerprint",
            ["tenant_id", "session_pk", "fingerprint"],
            unique=False,
        )

    create_text_index("message_fts")
    create_text_index("archive_fts")


def downgrade() -> None:
    drop_text_index("archive_fts")
    drop_text_index("message_fts")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_tenant_session_fingerprint")
        batch_op.drop_index("ix_messages_session_archive_seq")
        batch_op.drop_index("ix_messages_archive_seq")

    op.drop_table("messages")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_jobs_running_session",
            sqlite_where=sa.text("status = 'running'"),
            postgresql_where=sa.text("status = 'running'"),
        )
        batch_op.drop_index("ix_jobs_status_run_after")

    op.drop_table("jobs")
    op.drop_table("archives")
    op.drop_table("agent_sessions")
