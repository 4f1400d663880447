"""retrieval: passage vectors of archived messages

Revision ID: 0016_message_passages
Revises: 0015_memory_content_key
Create Date: 2026-11-27 22:00:00

Ranked archive search scores a message by its whole vector and by its best passage (a sentence or
line, app/search/text/passages.py). The passages' vectors get a table of their own, and each message's
search facts say how many it has (0: the message is one passage, its whole vector is that one's).
Messages archived before this revision have none until they are embedded again; their passage
similarity is their whole one's, so they rank as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from migrations.helpers import create_passage_vector_index, drop_text_index

revision: str = "0016_message_passages"
down_revision: str | None = "0015_memory_content_key"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("message_search", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("vector_passages", sa.Integer(), nullable=False, server_default="0")
        )
    create_passage_vector_index("message_passage_vec", 384)


def downgrade() -> None:
    drop_text_index("message_passage_vec")
    with op.batch_alter_table("message_search", schema=None) as batch_op:
        batch_op.drop_column("vector_passages")
