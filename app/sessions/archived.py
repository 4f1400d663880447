"""A session's archives as the API reads them: expand one, search them.

The session is looked up here, in the same read transaction as the archives (the archives domain
sits below sessions and never looks a session up itself).
"""

from __future__ import annotations

from app.archives import service as archives
from app.archives import text_index
from app.archives.hits import archive_places
from app.archives.ranked_scope import Scope
from app.archives.recall import RecallAsk, RecallFound, recall_turns
from app.archives.results import SearchResult
from app.archives.search import QueryVectors
from app.archives.service import SearchRequest
from app.archives.views import ArchiveView, archive_view
from app.db.uow import UnitOfWork
from app.errors import NotFound
from app.sessions.service import session_or_404


def expand_archive(
    uow: UnitOfWork,
    tenant_id: str,
    session_id: str,
    archive_id: str,
    offset: int,
    limit: int | None,
) -> ArchiveView:
    """The archive with its stored messages in order."""
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        found = archives.read_archive(db, session, archive_id, offset, limit)
    return archive_view(found.session_id, found.archive, found.messages)


def search_archives(
    uow: UnitOfWork,
    tenant_id: str,
    req: SearchRequest,
    regex_timeout_s: float,
    query_vectors: QueryVectors | None = None,
) -> SearchResult:
    """Search a session's archived messages and, in their own list, its archive overviews."""
    req = archives.checked_search(req)
    found = _search_indexed(uow, tenant_id, req, regex_timeout_s, query_vectors)
    return archives.search_answer(req, found, query_vectors is not None)


def _search_indexed(
    uow: UnitOfWork,
    tenant_id: str,
    req: SearchRequest,
    regex_timeout_s: float,
    query_vectors: QueryVectors | None,
) -> archives.SessionHits:
    """The search, once every archive of the session has its messages in the text index: one not
    indexed yet (its Phase 2 has not started, or no worker runs) is indexed first, in a write
    transaction of its own (app/archives/text_index.py)."""
    with uow.read() as db:
        session = session_or_404(db, tenant_id, req.session_id)
        pending = text_index.unindexed_archives(db, session.id)
        if not pending:
            return archives.search_session(db, uow, session, req, regex_timeout_s, query_vectors)
    with uow.write() as db:
        text_index.index_archive_messages(db, uow.dialect, pending)
    with uow.read() as db:
        session = session_or_404(db, tenant_id, req.session_id)
        return archives.search_session(db, uow, session, req, regex_timeout_s, query_vectors)


def recall_archived_turns(
    uow: UnitOfWork, tenant_id: str, session_id: str, ask: RecallAsk
) -> RecallFound | None:
    """The session's archived turns most relevant to ``ask`` (app/archives/recall.py); None when
    the session is unknown or has no archive. Archives whose messages are not indexed yet are not
    searched: their messages are still in the rebuilt history."""
    with uow.read() as db:
        try:
            session = session_or_404(db, tenant_id, session_id)
        except NotFound:
            return None
        places = archive_places(db, session)
        if not places:
            return None
        return recall_turns(db, uow, Scope(session, places, None), ask)
