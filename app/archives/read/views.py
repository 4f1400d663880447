"""Typed views of archives that the archives domain hands to its callers (snake_case; the HTTP
layer maps them to the wire once)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.canonical_json import decode_many
from app.core.rules.redaction import redact_text
from app.db.models import Archive, ArchiveStatus, StoredMessage


@dataclass(frozen=True, slots=True)
class ArchiveSummary:
    archive_id: str
    status: str
    message_count: int
    created_at: datetime | None
    completed_at: datetime | None
    error: str | None


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    seq: int
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ArchiveView:
    """An archive with a page of its stored messages, as sent (the one answer that returns them)."""

    archive_id: str
    session_id: str
    status: str
    abstract: str
    overview: str
    message_count: int
    first_seq: int
    last_seq: int
    started_at: datetime | None
    ended_at: datetime | None
    created_at: datetime | None
    completed_at: datetime | None
    messages: list[ArchivedMessage]
    error: str | None
    error_stage: str | None
    working_memory_path: str | None
    usage: dict[str, int]


def archive_summary(archive: Archive) -> ArchiveSummary:
    return ArchiveSummary(
        archive_id=archive.archive_id,
        status=archive.status,
        message_count=archive.message_count,
        created_at=archive.created_at,
        completed_at=archive.completed_at,
        error=archive.error,
    )


def archive_view(session_id: str, archive: Archive, rows: list[StoredMessage]) -> ArchiveView:
    """The archive with its stored messages in order; abstract, overview and error redacted."""
    completed = archive.status == ArchiveStatus.COMPLETED
    return ArchiveView(
        archive_id=archive.archive_id,
        session_id=session_id,
        status=archive.status,
        abstract=redact_text(archive.abstract) if completed else "",
        overview=redact_text(archive.overview) if completed else "",
        message_count=archive.message_count,
        first_seq=archive.first_seq,
        last_seq=archive.last_seq,
        started_at=archive.started_at,
        ended_at=archive.ended_at,
        created_at=archive.created_at,
        completed_at=archive.completed_at,
        # The original messages: the one place an original secret can be read back.
        messages=[
            ArchivedMessage(row.seq, message)
            for row, message in zip(rows, decode_many([row.body for row in rows]), strict=True)
        ],
        error=redact_text(archive.error) if archive.error else archive.error,
        error_stage=archive.error_stage,
        working_memory_path=archive.wm_path,
        usage=json.loads(archive.usage_json) if archive.usage_json else {},
    )
