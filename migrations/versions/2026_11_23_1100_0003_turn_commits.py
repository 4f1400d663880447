"""turn commits; replay-stable message fingerprints

Revision ID: 0003_turn_commits
Revises: 0002_memories
Create Date: 2026-11-23 11:00:00
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.core.rules.fingerprint import message_fingerprint
from app.db.base import UtcDateTime

revision: str = "0003_turn_commits"
down_revision: str | None = "0002_memories"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 1000


def upgrade() -> None:
    op.create_table(
        "turn_commits",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("advancement_key", sa.String(length=512), nullable=False),
        sa.Column("first_seq", sa.BigInteger(), nullable=True),
        sa.Column("last_seq", sa.BigInteger(), nullable=True),
        sa.Column("admission_entry_id", sa.String(length=256), nullable=True),
        sa.Column("terminal_entry_id", sa.String(length=256), nullable=True),
        sa.Column("ingested", sa.Integer(), nullable=False),
        sa.Column("created_at", UtcDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["agent_sessions.id"],
            name=op.f("fk_turn_commits_session_pk_agent_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turn_commits")),
        sa.UniqueConstraint("session_pk", "advancement_key", name="uq_turn_commits_session_key"),
    )
    _refingerprint_messages()


def _refingerprint_messages() -> None:
    """Stored fingerprints now ignore what a host replay changes (tool call ids of timestamped
    messages, block metadata); recompute them so replayed copies of old messages are recognised."""
    conn = op.get_bind()
    last_id = 0
    while True:
        rows = conn.execute(
            sa.text("SELECT id, body FROM messages WHERE id > :last ORDER BY id LIMIT :n"),
            {"last": last_id, "n": _BATCH},
        ).all()
        if not rows:
            return
        updates = [
            {"id": row_id, "fp": message_fingerprint(json.loads(body))} for row_id, body in rows
        ]
        conn.execute(sa.text("UPDATE messages SET fingerprint = :fp WHERE id = :id"), updates)
        last_id = rows[-1][0]


def downgrade() -> None:
    op.drop_table("turn_commits")
