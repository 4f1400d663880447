"""session live tokens: the tokens of a session's live messages, kept on the session row

Revision ID: 0013_session_live_tokens
Revises: 0012_memory_generations
Create Date: 2026-11-26 10:00:00

Every turn answers whether compaction is recommended, from the session's active tokens (overview,
unsummarised archives, live messages). The live part was a SUM over the live messages on every
turn; capture and the commit now keep it on the session row, as they keep ``live_count``, so a
turn costs what its new messages cost. Existing sessions are filled in from their messages.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_session_live_tokens"
down_revision: str | None = "0012_memory_generations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("agent_sessions") as batch:
        batch.add_column(
            sa.Column("live_tokens", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.execute(
        "UPDATE agent_sessions SET live_tokens = COALESCE((SELECT SUM(tokens) FROM messages "
        "WHERE messages.session_pk = agent_sessions.id AND messages.archive_pk IS NULL), 0)"
    )


def downgrade() -> None:
    with op.batch_alter_table("agent_sessions") as batch:
        batch.drop_column("live_tokens")
