"""session hooks: when each OpenClaw hook last reached a session, from which host and plugin

Revision ID: 0020_session_hooks
Revises: 0019_lowercased_text_index
Create Date: 2026-12-01 22:00:00

A host upgrade can leave the plugin loaded while the host stops calling one of its hooks (no
more turns committed, or its own engine assembling); nothing failed, so nothing said so. The
service now keeps, per session and hook, the calls, the first and last time and the host and
plugin versions the plugin sent, and flags a session whose hooks stopped pairing up. A new table;
existing sessions get their rows with their next hook call.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UtcDateTime

revision: str = "0020_session_hooks"
down_revision: str | None = "0019_lowercased_text_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session_hooks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("hook", sa.String(length=32), nullable=False),
        sa.Column("calls", sa.BigInteger(), nullable=False),
        sa.Column("streak", sa.Integer(), nullable=False),
        sa.Column("first_at", UtcDateTime(), nullable=False),
        sa.Column("last_at", UtcDateTime(), nullable=False),
        sa.Column("host_version", sa.String(length=64), nullable=True),
        sa.Column("plugin_version", sa.String(length=64), nullable=True),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_session_hooks_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_session_hooks")),
        sa.UniqueConstraint("session_pk", "hook", name="uq_session_hooks_session_hook"),
    )


def downgrade() -> None:
    op.drop_table("session_hooks")
