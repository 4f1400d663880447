"""archives.messages_indexed: an archive's messages enter the text index after the turn

Revision ID: 0014_archive_messages_indexed
Revises: 0013_session_live_tokens
Create Date: 2026-11-26 14:00:00

A turn used to add its messages to the message text index as it stored them, though only
archived messages are ever searched; the trigram entries were about a third of a turn's cost on
SQLite. Now an archive's messages are indexed once it exists (Phase 2's first step, or the first
search that finds the archive unindexed: app/archives/index/text_index.py), and the archive row says
whether that happened. Existing archives were indexed message by message, so they start indexed;
the entries of live messages are removed, so that the index holds exactly the messages of indexed
archives (what a copy rebuilds and verifies).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.sqlite.message_fts import indexed_form
from migrations.helpers import POSTGRES

revision: str = "0014_archive_messages_indexed"
down_revision: str | None = "0013_session_live_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE = "SELECT id FROM messages WHERE archive_pk IS NULL"


def upgrade() -> None:
    with op.batch_alter_table("archives") as batch:
        batch.add_column(
            sa.Column("messages_indexed", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    key = "id" if op.get_bind().dialect.name == POSTGRES else "rowid"
    op.execute(f"DELETE FROM message_fts WHERE {key} IN ({_LIVE})")


def downgrade() -> None:
    # Older code searches every message it indexed at capture: index what is not indexed yet.
    bind = op.get_bind()
    if bind.dialect.name == POSTGRES:
        op.execute(
            "INSERT INTO message_fts(id, text) SELECT m.id, m.search_text FROM messages m "
            "LEFT JOIN archives a ON a.id = m.archive_pk "
            "WHERE (a.id IS NULL OR NOT a.messages_indexed) AND m.search_text <> '' "
            "ON CONFLICT (id) DO NOTHING"
        )
    else:
        rows = bind.execute(
            sa.text(
                "SELECT m.id, m.search_text FROM messages m "
                "LEFT JOIN archives a ON a.id = m.archive_pk "
                "WHERE (a.id IS NULL OR NOT a.messages_indexed) AND m.search_text <> ''"
            )
        ).all()
        if rows:
            bind.execute(
                sa.text("INSERT INTO message_fts(rowid, text) VALUES (:id, :text)"),
                [{"id": int(i), "text": indexed_form(body)} for i, body in rows],
            )
    with op.batch_alter_table("archives") as batch:
        batch.drop_column("messages_indexed")
