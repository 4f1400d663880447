"""A host turn committed through ``/commit-turn``: the idempotency record of its advancement key."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class TurnCommit(Base):
    __tablename__ = "turn_commits"
    __table_args__ = (
        UniqueConstraint("session_pk", "advancement_key", name="uq_turn_commits_session_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_pk: Mapped[int] = mapped_column(ForeignKey("agent_sessions.id", ondelete="CASCADE"))
    advancement_key: Mapped[str] = mapped_column(String(512))
    # Sequence numbers of the messages this turn stored (null when it stored none).
    first_seq: Mapped[int | None] = mapped_column(BigInteger)
    last_seq: Mapped[int | None] = mapped_column(BigInteger)
    # The host's transcript entry ids of the turn's first and last message, when it sent them.
    admission_entry_id: Mapped[str | None] = mapped_column(String(256))
    terminal_entry_id: Mapped[str | None] = mapped_column(String(256))
    ingested: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
