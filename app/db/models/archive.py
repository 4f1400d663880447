"""An archive: messages moved out of the live window by a commit, and their Working Memory."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class ArchiveStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


TERMINAL_ARCHIVE_STATUSES = (ArchiveStatus.COMPLETED, ArchiveStatus.FAILED)


class Archive(Base):
    __tablename__ = "archives"
    __table_args__ = (
        UniqueConstraint("session_pk", "archive_index", name="uq_archives_session_index"),
        # What a pre-prompt assemble reads of every archive, answered from the index alone (the
        # columns follow the overview in the row: migration 0018).
        Index(
            "ix_archives_session_heads",
            "session_pk",
            "archive_index",
            "status",
            "message_count",
            "completed_at",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_pk: Mapped[int] = mapped_column(ForeignKey("agent_sessions.id", ondelete="CASCADE"))
    archive_index: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default=ArchiveStatus.PENDING)
    overview: Mapped[str] = mapped_column(Text, default="")
    abstract: Mapped[str] = mapped_column(Text, default="")
    overview_tokens: Mapped[int] = mapped_column(Integer, default=0)
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    message_tokens: Mapped[int] = mapped_column(Integer, default=0)
    first_seq: Mapped[int] = mapped_column(Integer, default=0)
    last_seq: Mapped[int] = mapped_column(Integer, default=0)
    keep_recent_count: Mapped[int] = mapped_column(Integer, default=0)
    # Whether the archive's messages are in the message text index: a commit archives them
    # unindexed, Phase 2's first step or a search of the session indexes them (app.archives.index.text_index).
    messages_indexed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=true())
    custom_instructions: Mapped[str | None] = mapped_column(Text)
    wm_path: Mapped[str | None] = mapped_column(String(32))
    usage_json: Mapped[str | None] = mapped_column(Text)
    memories_json: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    error_stage: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())

    @property
    def archive_id(self) -> str:
        return format_archive_id(self.archive_index)


def format_archive_id(index: int) -> str:
    """``archive_001``, ``archive_002``, … (docs/lifecycle.md, Phase 1 step 4)."""
    return f"archive_{index:03d}"


def parse_archive_id(archive_id: str) -> int | None:
    """The index of an ``archive_NNN`` id, or None when it is not one."""
    prefix, _, number = archive_id.partition("_")
    # At most nine digits: a longer number would overflow the database's integer.
    if prefix != "archive" or not number.isascii() or not number.isdigit() or len(number) > 9:
        return None
    return int(number)
