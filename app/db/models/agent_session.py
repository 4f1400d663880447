"""An agent's session: identity, counters and the pending-token window."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class AgentSession(Base):
    __tablename__ = "agent_sessions"
    __table_args__ = (
        UniqueConstraint("tenant_id", "session_id", name="uq_agent_sessions_tenant_session"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(512))
    session_key: Mapped[str | None] = mapped_column(String(1024))
    agent_id: Mapped[str] = mapped_column(String(256), default="main")
    user_id: Mapped[str] = mapped_column(String(256), default="default")
    live_count: Mapped[int] = mapped_column(Integer, default=0)
    # The tokens of the live messages (kept by capture and the commit, as live_count is).
    live_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    total_message_count: Mapped[int] = mapped_column(Integer, default=0)
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    pending_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    keep_recent_count: Mapped[int] = mapped_column(Integer, default=10)
    commit_count: Mapped[int] = mapped_column(Integer, default=0)
    archive_count: Mapped[int] = mapped_column(Integer, default=0)
    llm_prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    llm_completion_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    last_commit_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())
