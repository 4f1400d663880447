"""SQLite: the tool-use lookups of tool memories (JSON fields of the stored bodies)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.shared.tool_use import FollowingMessages


class SqliteToolUse(FollowingMessages):
    def tool_results(
        self, db: Session, tenant_id: str, agent_id: str, tool_names: list[str], limit: int
    ) -> list[tuple[str, bool, str]]:
        if not tool_names:
            return []
        names = {f"n{i}": name for i, name in enumerate(tool_names)}
        sql = (
            "SELECT json_extract(m.body, '$.toolName'), json_extract(m.body, '$.isError'), m.search_text "
            "FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'toolResult' "
            f"AND json_extract(m.body, '$.toolName') IN ({', '.join(':' + k for k in names)}) "
            "ORDER BY m.id DESC LIMIT :limit"
        )
        rows = db.execute(text(sql), {"t": tenant_id, "a": agent_id, "limit": limit, **names})
        return [(str(name), bool(error), body or "") for name, error, body in rows]

    def tool_calls_mentioning(
        self, db: Session, tenant_id: str, agent_id: str, needle: str, limit: int
    ) -> list[tuple[int, int, str]]:
        sql = (
            "SELECT m.session_pk, m.seq, m.body FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.tenant_id = :t AND s.agent_id = :a AND m.role = 'assistant' AND instr(m.search_text, :n) > 0 "
            "ORDER BY m.id DESC LIMIT :limit"
        )
        rows = db.execute(text(sql), {"t": tenant_id, "a": agent_id, "n": needle, "limit": limit})
        return [(int(pk), int(seq), body) for pk, seq, body in rows]
