"""vector search from memory: the log of vector writes that keeps in-process matrices in step

Revision ID: 0007_vector_changes
Revises: 0006_search_statistics
Create Date: 2026-11-25 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from migrations.helpers import create_vector_change_log, drop_text_index

revision: str = "0007_vector_changes"
down_revision: str | None = "0006_search_statistics"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    create_vector_change_log("vector_changes")


def downgrade() -> None:
    drop_text_index("vector_changes")
