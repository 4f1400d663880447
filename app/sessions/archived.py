"""A session's archives as the API reads them: expand one, search them.

The session is looked up here, in the same read transaction as the archives (the archives domain
sits below sessions and never looks a session up itself).
"""

from __future__ import annotations

import asyncio

from sqlalchemy.orm import Session

from app.archives import service as archives
from app.archives.index import text_index
from app.archives.read.results import SearchResult
from app.archives.read.views import ArchiveView, archive_view
from app.archives.search.hits import archive_places
from app.archives.search.modes import QueryVectors
from app.archives.search.ranked import LexicalEvidence
from app.archives.search.ranked_scope import Scope
from app.archives.search.recall import (
    RecallAsk,
    RecallFound,
    recall_similarities,
    recall_words,
    recalled_turns,
)
from app.archives.service import SearchRequest
from app.core.threads import to_thread
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
    transaction of its own (app/archives/index/text_index.py)."""
    with uow.read() as db:
        session = session_or_404(db, tenant_id, req.session_id)
        pending = text_index.unindexed_archives(db, session.id)
        if not pending:
            return archives.search_session(db, uow, session, req, regex_timeout_s, query_vectors)
    with uow.write() as db:
        text_index.index_archive_messages(db, uow.storage, pending)
    with uow.read() as db:
        session = session_or_404(db, tenant_id, req.session_id)
        return archives.search_session(db, uow, session, req, regex_timeout_s, query_vectors)


async def recall_archived_turns(
    uow: UnitOfWork, tenant_id: str, session_id: str, ask: RecallAsk
) -> RecallFound | None:
    """The session's archived turns most relevant to ``ask`` (app/archives/search/recall.py); None when
    the session is unknown or has no archive. Archives whose messages are not indexed yet are not
    searched: their messages are still in the rebuilt history.

    The word side and the vector side run at the same time, each in a read transaction of its
    own: the vector side's matrix product releases the interpreter's lock and runs on a core of
    its own while the word side's Python runs (as memory search's sides do); the turns are then
    read in a third. Archived messages never change, and a hit of an archive made since the word
    side read the session is left out."""
    words = to_thread(_recall_words, uow, tenant_id, session_id, ask)
    if ask.vectors is None:
        found, similarities = await words, None
    else:
        found, similarities = await asyncio.gather(
            words, to_thread(_recall_similarities, uow, tenant_id, session_id, ask)
        )
    if found is None:
        return None
    return await to_thread(_recalled, uow, tenant_id, session_id, ask, found, similarities)


def has_archives(uow: UnitOfWork, tenant_id: str, session_id: str) -> bool:
    """Whether the session exists and has an archive: recall for one that has none embeds
    nothing."""
    with uow.read() as db:
        return _recall_scope(db, tenant_id, session_id) is not None


def _recall_words(
    uow: UnitOfWork, tenant_id: str, session_id: str, ask: RecallAsk
) -> LexicalEvidence | None:
    with uow.read() as db:
        scope = _recall_scope(db, tenant_id, session_id)
        return None if scope is None else recall_words(db, uow, scope, ask)


def _recall_similarities(
    uow: UnitOfWork, tenant_id: str, session_id: str, ask: RecallAsk
) -> list[dict[int, float]] | None:
    with uow.read() as db:
        scope = _recall_scope(db, tenant_id, session_id)
        return None if scope is None else recall_similarities(db, uow, scope, ask)


def _recalled(
    uow: UnitOfWork,
    tenant_id: str,
    session_id: str,
    ask: RecallAsk,
    words: LexicalEvidence,
    similarities: list[dict[int, float]] | None,
) -> RecallFound | None:
    with uow.read() as db:
        scope = _recall_scope(db, tenant_id, session_id)
        if scope is None:
            return None  # deleted since the word side read it
        lists = similarities if similarities is not None else [{} for _ in words.queries]
        return recalled_turns(db, scope, ask, words, lists)


def _recall_scope(db: Session, tenant_id: str, session_id: str) -> Scope | None:
    try:
        session = session_or_404(db, tenant_id, session_id)
    except NotFound:
        return None
    places = archive_places(db, session)
    return Scope(session, places, None) if places else None
