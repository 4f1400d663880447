"""archives: an index that answers a session's archive heads without reading the archive rows

Revision ID: 0018_archive_heads
Revises: 0017_memory_passages
Create Date: 2026-11-28 05:00:00

Every pre-prompt assemble reads the place and state of each archive of its session (index,
status, message count, completion time). Those columns sit after the overview in the row, so
SQLite read past every overview (a Working Memory of up to ~50 KB each) to reach them: a session
of a hundred archives read megabytes per assemble. This index holds them all, so the read is
answered from the index alone (a covering index on SQLite, an index-only scan on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0018_archive_heads"
down_revision: str | None = "0017_memory_passages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = ["session_pk", "archive_index", "status", "message_count", "completed_at"]


def upgrade() -> None:
    op.create_index("ix_archives_session_heads", "archives", _COLUMNS)


def downgrade() -> None:
    op.drop_index("ix_archives_session_heads", table_name="archives")
