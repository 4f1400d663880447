"""The message text index holds archived messages only, and an archive's messages enter it after
the turn that archived them (docs/architecture.md, "The message text index").

Only archive search reads the index, and it reads archived messages only; the index's entries
(trigrams on SQLite) were a third of what a turn cost to store. So a turn stores its messages
unindexed, and an archive's messages are indexed once, in one transaction that also marks the
archive indexed, by whichever comes first: Phase 2's first step (moments after the commit, before
any model call), or a search of the session that finds the archive unindexed (so a search never
misses an archived message, whether a worker runs or not, and whatever became of Phase 2).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.archives.index import text_index_repository as repo
from app.db.seams import Storage


def unindexed_archives(db: Session, session_pk: int) -> list[int]:
    """The session's archives whose messages are not in the text index yet."""
    return repo.unindexed_archives_of_session(db, session_pk)


def index_archive_messages(db: Session, storage: Storage, archive_pks: Sequence[int]) -> int:
    """Index the messages of those of the archives not indexed yet and mark them indexed, in the
    caller's write transaction. On SQLite write transactions run one at a time, so an archive is
    indexed once; on PostgreSQL two at once would write the same entries (an upsert there).
    Returns how many messages were indexed."""
    pending = repo.unindexed_among(db, archive_pks) if archive_pks else []
    if not pending:
        return 0
    rows = repo.search_texts(db, pending)
    storage.text.index_messages(db, rows)
    repo.mark_indexed(db, pending)
    return len(rows)
