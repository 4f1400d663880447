"""Archives: expand one archive, search a session's archives (docs/api.md, Archives).

Search answers with redacted text only (search text is redacted at capture, overviews when they
are written, and snippets and the echoed query once more here). Expanding an archive is the one
answer that returns the stored messages as they were sent, secrets included, unless the operator
has stored messages redacted too (``CE_REDACTION__STORED_MESSAGES``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.archives.read import repository as repo
from app.archives.read.render import render_archive_text, render_search_text
from app.archives.read.results import SearchHit, SearchResult
from app.archives.read.views import ArchiveView
from app.archives.search import modes
from app.archives.search.hits import TimeWindow, add_context, archive_places
from app.core.rules.redaction import redact_text
from app.db.models import AgentSession, Archive, StoredMessage
from app.db.models.archive import parse_archive_id
from app.db.uow import UnitOfWork
from app.errors import InvalidArgument, NotFound
from app.providers.protocols import ProviderError
from app.search.text.query import clauses


@dataclass(frozen=True, slots=True)
class SearchRequest:
    session_id: str
    query: str
    mode: str = "keyword"
    archive_id: str | None = None
    case_sensitive: bool = False
    limit: int = 20
    since: datetime | None = None
    until: datetime | None = None
    context: int = 0
    fusion: str = "calibrated"


def archive_or_404(db: Session, session: AgentSession, archive_id: str) -> Archive:
    index = parse_archive_id(archive_id)
    archive = repo.get_archive(db, session, index) if index is not None else None
    if archive is None or archive.archive_id != archive_id:
        raise NotFound("archive", archive_id)
    return archive


def _head_or_404(heads: Iterable[repo.ArchiveHead], archive_id: str) -> repo.ArchiveHead:
    """The archive named by ``archive_id`` among the session's heads (no overview is read)."""
    for head in heads:
        if head.archive_id == archive_id:
            return head
    raise NotFound("archive", archive_id)


@dataclass(frozen=True, slots=True)
class ExpandedArchive:
    """An archive with the page of its stored messages that was asked for."""

    session_id: str
    archive: Archive
    messages: list[StoredMessage]


def read_archive(
    db: Session, session: AgentSession, archive_id: str, offset: int, limit: int | None
) -> ExpandedArchive:
    """The session's archive and a page of its stored messages, in the caller's transaction."""
    archive = archive_or_404(db, session, archive_id)
    rows = repo.archive_messages(db, archive, offset, limit)
    return ExpandedArchive(session.session_id, archive, rows)


def expand_archive_text(view: ArchiveView) -> str:
    return render_archive_text(view.archive_id, view.abstract, [m.message for m in view.messages])


@dataclass(frozen=True, slots=True)
class SessionHits:
    """What one search of a session's archives found, before redaction."""

    results: list[SearchHit]
    overviews: list[SearchHit]
    truncated: bool


def checked_search(req: SearchRequest) -> SearchRequest:
    """The request as it is searched; InvalidArgument for an empty query or an unknown fusion."""
    if req.mode != "regex":
        # Capture drops NULs from the text it stores, and one would end SQLite's full-text query.
        req = replace(req, query=req.query.replace("\x00", ""))
    if not req.query.strip():
        raise InvalidArgument("query must not be empty", {"field": "query"})
    if req.fusion not in modes.FUSIONS:
        raise InvalidArgument(
            f"fusion must be one of {', '.join(modes.FUSIONS)}", {"field": "fusion"}
        )
    return req


def search_session(
    db: Session,
    uow: UnitOfWork,
    session: AgentSession,
    req: SearchRequest,
    regex_timeout_s: float,
    query_vectors: modes.QueryVectors | None = None,
) -> SessionHits:
    """Search the session's archived messages and, in their own list, its archive overviews, in
    the caller's transaction (``req`` as ``checked_search`` returned it)."""
    places = archive_places(db, session)
    only = _head_or_404(places.values(), req.archive_id).id if req.archive_id else None
    scope = modes.Scope(session, places, only, TimeWindow(req.since, req.until))
    if req.mode == "regex":
        hits, overviews = modes.search_regex(
            db, scope, req.query, req.limit, req.case_sensitive, regex_timeout_s
        )
    elif req.mode == "ranked":
        hits = modes.search_ranked(db, uow, scope, req.query, req.limit, query_vectors, req.fusion)
        overviews = modes.match_overviews(db, scope, req.query, req.limit)
    else:
        hits = modes.search_keyword(db, uow, scope, req.query, req.limit, req.case_sensitive)
        overviews = modes.match_keyword_overviews(
            db, uow, scope, req.query, req.case_sensitive, req.limit
        )
    results = add_context(db, session, hits[: req.limit], req.context)
    return SessionHits(results, overviews, len(hits) > req.limit)


def search_answer(req: SearchRequest, found: SessionHits, hybrid: bool) -> SearchResult:
    """The search's answer, with snippets and the echoed query redacted."""
    # docs/quality.md, Security: snippets and the echoed query pass through the redaction boundary.
    return SearchResult(
        query=redact_text(req.query),
        mode=req.mode,
        results=[_redacted(h) for h in found.results],
        overviews=[_redacted(h) for h in found.overviews[: req.limit]],
        truncated=found.truncated,
        retrieval=("hybrid" if hybrid else "lexical") if req.mode == "ranked" else None,
    )


def _redacted(hit: SearchHit) -> SearchHit:
    snippet = redact_text(hit.snippet)
    return hit if snippet == hit.snippet else replace(hit, snippet=snippet)


async def embed_search_query(
    embedder: Any, query: str, timeout_s: float
) -> modes.QueryVectors | None:
    """The query vectors for ranked search (the query's, and each clause's when it asks several
    things), or None (no embedder, or it failed: lexical only)."""
    if embedder is None:
        return None
    parts = clauses(query)
    texts = [query, *parts] if len(parts) > 1 else [query]
    try:
        vectors = await asyncio.wait_for(
            asyncio.gather(*(embedder.embed_query(t) for t in texts)), timeout_s
        )
    except (ProviderError, TimeoutError):
        return None
    return modes.QueryVectors(
        list(vectors[0]), tuple(list(v) for v in vectors[1:]), embedder.model_id
    )


def search_text(result: SearchResult) -> str:
    return render_search_text(result.query, result.results, result.truncated, result.overviews)
