"""When each OpenClaw hook last reached a session, from which host and plugin version."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class SessionHook(Base):
    __tablename__ = "session_hooks"
    __table_args__ = (UniqueConstraint("session_pk", "hook", name="uq_session_hooks_session_hook"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_pk: Mapped[int] = mapped_column(ForeignKey("agent_sessions.id", ondelete="CASCADE"))
    # assemble.pre_prompt, assemble.tool_loop, commitTurn, afterTurn or compact
    hook: Mapped[str] = mapped_column(String(32))
    calls: Mapped[int] = mapped_column(BigInteger, default=0)
    # Calls in a row without the counterpart hook: pre-prompt assembles since the last turn or
    # compaction, turns since the last assemble (the rows of other hooks keep 0).
    streak: Mapped[int] = mapped_column(Integer, default=0)
    first_at: Mapped[datetime] = mapped_column(UtcDateTime())
    last_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # What the plugin sent in X-Host-Version / X-Plugin-Version with the newest call.
    host_version: Mapped[str | None] = mapped_column(String(64))
    plugin_version: Mapped[str | None] = mapped_column(String(64))
