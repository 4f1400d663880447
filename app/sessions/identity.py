"""Who a hook request is about: tenant, session, agent and user (docs/api.md, Identity)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.db.models import AgentSession


@dataclass(frozen=True, slots=True)
class SessionIdentity:
    tenant_id: str
    session_id: str
    session_key: str | None = None
    agent_id: str = "main"
    user_id: str = "default"

    def new_session_row(self, keep_recent_count: int, now: datetime) -> AgentSession:
        """A fresh session row; its window starts with the configured keep count."""
        return AgentSession(
            tenant_id=self.tenant_id,
            session_id=self.session_id,
            session_key=self.session_key,
            agent_id=self.agent_id,
            user_id=self.user_id,
            live_count=0,
            live_tokens=0,
            total_message_count=0,
            last_seq=0,
            pending_tokens=0,
            keep_recent_count=keep_recent_count,
            commit_count=0,
            archive_count=0,
            llm_prompt_tokens=0,
            llm_completion_tokens=0,
            created_at=now,
            updated_at=now,
        )
