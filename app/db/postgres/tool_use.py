"""PostgreSQL: the tool-use lookups of tool memories (JSON fields of the stored bodies)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.literals import without_nul
from app.db.shared.tool_use import FollowingMessages


class PostgresToolUse(FollowingMessages):
    def tool_results(
        self, db: Session, tenant_id: str, agent_id: str, tool_names: list[str], limit: int
    ) -> list[tuple[str, bool, str]]:
        if not tool_names:
            return []
        # json, not jsonb: a body may hold \u0000, which jsonb refuses.
        sql = (
            "SELECT m.body::json ->> 'toolName', m.body::json -> 'isError', m.search_text "
            "FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'toolResult' "
            "AND m.body::json ->> 'toolName' = ANY(:names) ORDER BY m.id DESC LIMIT :limit"
        )
        params = {"t": tenant_id, "a": agent_id, "names": list(tool_names), "limit": limit}
        return [
            (str(name), bool(error), body or "")
            for name, error, body in db.execute(text(sql), params)
        ]

    def tool_calls_mentioning(
        self, db: Session, tenant_id: str, agent_id: str, needle: str, limit: int
    ) -> list[tuple[int, int, str]]:
        sql = (
            "SELECT m.session_pk, m.seq, m.body FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'assistant' "
            "AND strpos(m.search_text, :n) > 0 ORDER BY m.id DESC LIMIT :limit"
        )
        params = {"t": tenant_id, "a": agent_id, "n": without_nul(needle), "limit": limit}
        return [(int(pk), int(seq), body) for pk, seq, body in db.execute(text(sql), params)]
