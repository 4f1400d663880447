"""redacted message bodies

A message that holds a secret gets a redacted copy of its body; assembly and Phase 2 read it
instead of the body (the body stays lossless for archive expand). Existing messages are filled in
here, through the same redaction as capture.

Revision ID: 0005_redacted_bodies
Revises: 0004_message_vectors
Create Date: 2026-11-23 12:00:00.000000
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.core.canonical_json import compact_json
from app.core.rules.redaction import redact_value
from app.core.rules.secret_triggers import might_hold_secret

revision: str = "0005_redacted_bodies"
down_revision: str | None = "0004_message_vectors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("redacted_body", sa.Text(), nullable=True))
    _fill_redacted_bodies()


def _fill_redacted_bodies() -> None:
    bind = op.get_bind()
    last_id = 0
    while True:
        rows = bind.execute(
            sa.text("SELECT id, body FROM messages WHERE id > :last ORDER BY id LIMIT :batch"),
            {"last": last_id, "batch": BATCH},
        ).all()
        if not rows:
            return
        updates = []
        for row_id, body in rows:
            if might_hold_secret(body):
                redacted, secrets = redact_value(json.loads(body))
                if secrets:
                    updates.append({"id": row_id, "redacted": compact_json(redacted)})
        if updates:
            bind.execute(
                sa.text("UPDATE messages SET redacted_body = :redacted WHERE id = :id"), updates
            )
        last_id = rows[-1][0]


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("redacted_body")
