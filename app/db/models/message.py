"""A stored message: the verbatim AgentMessage JSON plus what search and the window need.

``redacted_body`` holds the message as it may leave the store (secrets replaced) when that differs
from ``body``, and is NULL otherwise: assembly and Phase 2 read ``coalesce(redacted_body, body)``
without redacting thousands of bodies per request; only archive expand reads ``body``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class StoredMessage(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("session_pk", "seq", name="uq_messages_session_seq"),
        Index("ix_messages_tenant_session_fingerprint", "tenant_id", "session_pk", "fingerprint"),
        Index("ix_messages_session_archive_seq", "session_pk", "archive_pk", "seq"),
        Index("ix_messages_archive_seq", "archive_pk", "seq"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_pk: Mapped[int] = mapped_column(ForeignKey("agent_sessions.id", ondelete="CASCADE"))
    archive_pk: Mapped[int | None] = mapped_column(ForeignKey("archives.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(BigInteger)
    role: Mapped[str] = mapped_column(String(64))
    body: Mapped[str] = mapped_column(Text)
    redacted_body: Mapped[str | None] = mapped_column(Text)
    search_text: Mapped[str] = mapped_column(Text, default="")
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    fingerprint: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
