"""What the other domains read and write of archives, inside the caller's transaction.

Sessions create archives in Phase 1 and list them, assembly reads their bodies, Phase 2 reads its
inputs. The SQL stays in ``app.archives.read.repository``; these functions are the domain's public face.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.archives.read import repository as repo
from app.archives.read.repository import ArchiveHead as ArchiveHead  # the public face names it too
from app.db.models import AgentSession, Archive, ArchiveStatus, StoredMessage


def add_archive(db: Session, archive: Archive) -> Archive:
    """Store a new archive row (flushed, so it has its id)."""
    return repo.add_archive(db, archive)


def list_archives(db: Session, session: AgentSession) -> list[Archive]:
    """The session's archives, oldest first (``archive_heads`` when their place and state do)."""
    return repo.list_archives(db, session)


def archive_heads(db: Session, session: AgentSession) -> list[ArchiveHead]:
    """The place and state of each of the session's archives, oldest first."""
    return repo.archive_heads(db, session.id)


def overview_of(db: Session, archive_pk: int) -> str:
    """An archive's overview (read apart from its place and state)."""
    return repo.overview_of(db, archive_pk)


def get_archive_by_pk(db: Session, archive_pk: int) -> Archive | None:
    return repo.get_archive_by_pk(db, archive_pk)


def latest_completed_before(db: Session, session_pk: int, archive_index: int) -> Archive | None:
    """The newest completed archive older than ``archive_index`` (docs/lifecycle.md, Phase 2 step 1)."""
    return repo.latest_completed_before(db, session_pk, archive_index)


def archive_messages(db: Session, archive: Archive) -> list[StoredMessage]:
    """Every message of the archive, in order."""
    return repo.archive_messages(db, archive)


def bodies_of_archives(db: Session, archive_pks: Sequence[int]) -> list[Any]:
    """(body, tokens) rows of the archives' messages in sequence order, bodies redacted."""
    return repo.bodies_of_archives(db, archive_pks)


def record_working_memory(
    archive: Archive,
    *,
    overview: str,
    abstract: str,
    overview_tokens: int,
    path: str | None,
    usage: dict[str, Any],
    memories: dict[str, Any],
) -> None:
    """Phase 2's results on the archive, clearing an earlier failure (``mark_completed`` last)."""
    archive.overview = overview
    archive.abstract = abstract
    archive.overview_tokens = overview_tokens
    archive.wm_path = path
    archive.usage_json = json.dumps(usage) if usage else None
    archive.memories_json = json.dumps(memories) if memories else None
    archive.error = None
    archive.error_stage = None


def mark_completed(archive: Archive, now: datetime) -> None:
    """The archive is completed: set last, in the transaction that wrote its results."""
    archive.completed_at = now
    archive.status = ArchiveStatus.COMPLETED
