"""SQLite message index: every indexed text ends with a line break, and its vocabulary is readable

Revision ID: 0011_message_short_terms
Revises: 0010_sqlite_memory_postings
Create Date: 2026-11-26 06:00:00

On PostgreSQL nothing changes. On SQLite a keyword search for a term of two characters finds its
messages through the trigram index instead of scanning the session
(app/db/sqlite/short_terms.py): the trigrams that start with the term are read from
``message_fts_vocab`` (an ``fts5vocab`` table over ``message_fts``), and so that a term ending a
message still starts one, every indexed text gets a trailing line break. Messages indexed before
are indexed again in that form.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from alembic import op
from sqlalchemy import text

from app.db.sqlite.message_fts import indexed_form
from migrations.helpers import POSTGRES, create_vocabulary, drop_text_index

revision: str = "0011_message_short_terms"
down_revision: str | None = "0010_sqlite_memory_postings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BATCH = 2000


def upgrade() -> None:
    if op.get_bind().dialect.name == POSTGRES:
        return
    create_vocabulary("message_fts_vocab", "message_fts")
    _reindex(indexed_form)


def downgrade() -> None:
    if op.get_bind().dialect.name == POSTGRES:
        return
    drop_text_index("message_fts_vocab")
    _reindex(lambda body: indexed_form(body)[:-1])


def _reindex(form: Callable[[str], str]) -> None:
    """Index every indexed message again, its search text in ``form``."""
    bind = op.get_bind()
    rows = bind.execute(
        text(
            "SELECT id, search_text FROM messages WHERE id IN (SELECT rowid FROM message_fts) "
            "ORDER BY id"
        )
    ).all()
    for start in range(0, len(rows), _BATCH):
        batch = [{"id": int(i), "text": form(body)} for i, body in rows[start : start + _BATCH]]
        bind.execute(text("DELETE FROM message_fts WHERE rowid = :id"), batch)
        bind.execute(text("INSERT INTO message_fts(rowid, text) VALUES (:id, :text)"), batch)
