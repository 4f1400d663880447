"""The session's active context: what /assemble would put in front of the model."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.models import AgentSession

# One statement, written out: it runs inside every /after-turn, where building the equivalent
# expression tree on each call cost more than executing it. Plain SQL, the same on every dialect.
_ACTIVE_TOKENS = text(
    """
    SELECT
      COALESCE((SELECT overview_tokens FROM archives
                WHERE session_pk = :s AND status = 'completed'
                ORDER BY archive_index DESC LIMIT 1), 0)
    + COALESCE((SELECT SUM(message_tokens) FROM archives
                WHERE session_pk = :s AND status <> 'completed'
                  AND archive_index > COALESCE((SELECT MAX(archive_index) FROM archives
                                                WHERE session_pk = :s AND status = 'completed'), 0)), 0)
    + COALESCE((SELECT SUM(tokens) FROM messages WHERE session_pk = :s AND archive_pk IS NULL), 0)
    """
)


def active_tokens(db: Session, session: AgentSession) -> int:
    """Overview of the newest completed archive + later unsummarised archives + live messages."""
    return int(db.execute(_ACTIVE_TOKENS, {"s": session.id}).scalar_one())
