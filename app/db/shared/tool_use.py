"""What the tool-use reads of both databases share: the messages that follow a call, in portable
SQL."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session


class FollowingMessages:
    """``ToolUseRows.messages_after``, the same on both databases."""

    def messages_after(self, db: Session, session_pk: int, seq: int, count: int) -> list[str]:
        """Bodies of the ``count`` messages following ``seq`` in a session."""
        sql = "SELECT body FROM messages WHERE session_pk = :s AND seq > :q ORDER BY seq LIMIT :c"
        return [body for (body,) in db.execute(text(sql), {"s": session_pk, "q": seq, "c": count})]
