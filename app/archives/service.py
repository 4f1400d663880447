"""Archives: expand one archive, search a session's archives (api.md, Archives).

Search answers with redacted text only (search text is redacted at capture, overviews when they
are written, and snippets and the echoed query once more here). Expanding an archive is the one
answer that returns the stored messages as they were sent, secrets included, unless the operator
has stored messages redacted too (``CE_REDACTION__STORED_MESSAGES``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from app.archives import matching
from app.archives import repository as repo
from app.archives.render import render_archive_text, render_search_text
from app.core.clock import isoformat
from app.core.redaction import redact_text
from app.db.models import AgentSession, Archive, ArchiveStatus, StoredMessage
from app.db.models.archive import parse_archive_id
from app.db.uow import UnitOfWork
from app.errors import InvalidArgument, NotFound
from app.sessions import repository as sessions_repo


@dataclass(frozen=True, slots=True)
class SearchRequest:
    session_id: str
    query: str
    mode: str = "keyword"
    archive_id: str | None = None
    case_sensitive: bool = False
    limit: int = 20


def session_or_404(db: Session, tenant_id: str, session_id: str) -> AgentSession:
    session = sessions_repo.find_session(db, tenant_id, session_id)
    if session is None:
        raise NotFound("session", session_id)
    return session


def archive_or_404(db: Session, session: AgentSession, archive_id: str) -> Archive:
    index = parse_archive_id(archive_id)
    archive = repo.get_archive(db, session, index) if index is not None else None
    if archive is None or archive.archive_id != archive_id:
        raise NotFound("archive", archive_id)
    return archive


def archive_summary(archive: Archive) -> dict[str, Any]:
    return {
        "archiveId": archive.archive_id,
        "status": archive.status,
        "messageCount": archive.message_count,
        "createdAt": isoformat(archive.created_at),
        "completedAt": isoformat(archive.completed_at),
        "error": archive.error,
    }


def expand_archive(
    uow: UnitOfWork, tenant_id: str, session_id: str, archive_id: str, offset: int, limit: int | None
) -> dict[str, Any]:
    """The archive with its stored messages in order."""
    with uow.read() as db:
        session = session_or_404(db, tenant_id, session_id)
        archive = archive_or_404(db, session, archive_id)
        rows = repo.archive_messages(db, archive, offset, limit)
    completed = archive.status == ArchiveStatus.COMPLETED
    return {
        "archiveId": archive.archive_id,
        "sessionId": session.session_id,
        "status": archive.status,
        "abstract": redact_text(archive.abstract) if completed else "",
        "overview": redact_text(archive.overview) if completed else "",
        "messageCount": archive.message_count,
        "firstSeq": archive.first_seq,
        "lastSeq": archive.last_seq,
        "startedAt": isoformat(archive.started_at),
        "endedAt": isoformat(archive.ended_at),
        "createdAt": isoformat(archive.created_at),
        "completedAt": isoformat(archive.completed_at),
        # The original messages: the one place an original secret can be read back (see above).
        "messages": [{"seq": row.seq, "message": json.loads(row.body)} for row in rows],
        "error": redact_text(archive.error) if archive.error else archive.error,
        "errorStage": archive.error_stage,
        "workingMemoryPath": archive.wm_path,
        "usage": json.loads(archive.usage_json) if archive.usage_json else {},
    }


def expand_archive_text(view: dict[str, Any]) -> str:
    return render_archive_text(view["archiveId"], view["abstract"], [m["message"] for m in view["messages"]])


def search_archives(uow: UnitOfWork, tenant_id: str, req: SearchRequest, regex_timeout_s: float) -> dict[str, Any]:
    """Search a session's archived messages and overviews in one of three modes."""
    if req.mode != "regex":
        # Capture drops NULs from the text it stores, and one would end SQLite's full-text query.
        req = replace(req, query=req.query.replace("\x00", ""))
    if not req.query.strip():
        raise InvalidArgument("query must not be empty", {"field": "query"})
    with uow.read() as db:
        session = session_or_404(db, tenant_id, req.session_id)
        archives = {a.id: a for a in repo.list_archives(db, session)}
        only = archive_or_404(db, session, req.archive_id).id if req.archive_id else None
        if req.mode == "regex":
            hits = _search_regex(db, session, archives, only, req, regex_timeout_s)
        elif req.mode == "ranked":
            hits = _search_ranked(db, uow, session, archives, only, req)
        else:
            hits = _search_keyword(db, uow, session, archives, only, req)
    truncated = len(hits) > req.limit
    results = hits[: req.limit]
    for hit in results:
        hit["snippet"] = redact_text(hit["snippet"])
    return {"query": redact_text(req.query), "mode": req.mode, "count": len(results), "truncated": truncated,
            "results": results}


def search_text(result: dict[str, Any]) -> str:
    return render_search_text(result["query"], result["results"], result["truncated"])


def _hit(archive: Archive, row: StoredMessage | None, text: str, span: tuple[int, int] | None, score: float | None) -> dict[str, Any]:
    return {
        "archiveId": archive.archive_id,
        "seq": row.seq if row is not None else None,
        "role": row.role if row is not None else None,
        "kind": "message" if row is not None else "overview",
        "snippet": matching.snippet(text, span or (0, 0)),
        "score": score,
        "timestamp": isoformat(row.created_at if row is not None else archive.completed_at),
    }


def _overviews(archives: dict[int, Archive], only: int | None) -> list[Archive]:
    return [a for a in archives.values() if a.overview and (only is None or a.id == only)]


def _search_keyword(db: Session, uow: UnitOfWork, session: AgentSession, archives: dict[int, Archive], only: int | None, req: SearchRequest) -> list[dict[str, Any]]:
    terms = matching.keyword_terms(req.query)
    hits: list[dict[str, Any]] = []
    for row in _keyword_candidates(db, uow, session, terms, only, req.case_sensitive):
        span = matching.find_keywords(row.search_text, terms, req.case_sensitive)
        if span is not None and row.archive_pk is not None:
            hits.append(_hit(archives[row.archive_pk], row, row.search_text, span, None))
            if len(hits) > req.limit:
                return hits
    for archive in _overviews(archives, only):
        span = matching.find_keywords(archive.overview, terms, req.case_sensitive)
        if span is not None:
            hits.append(_hit(archive, None, archive.overview, span, None))
    return hits


def _keyword_candidates(db: Session, uow: UnitOfWork, session: AgentSession, terms: list[str], only: int | None, case_sensitive: bool):  # type: ignore[no-untyped-def]
    """Rows that may hold every term: from the index when a term is long enough, else a scan."""
    indexed = [t for t in terms if len(t) >= uow.dialect.min_indexed_term_chars()]
    if indexed:
        ids = (hit.row_id for hit in uow.dialect.match_messages(db, session.id, indexed, only, ranked=False))
    elif all(t.isascii() for t in terms):
        ids = iter(uow.dialect.scan_message_ids(db, session.id, terms, only, case_sensitive))
    else:
        yield from repo.iter_archived_texts(db, session, only)
        return
    batch: list[int] = []
    for row_id in ids:
        batch.append(row_id)
        if len(batch) >= 200:
            yield from _rows_in_order(db, batch)
            batch = []
    yield from _rows_in_order(db, batch)


def _rows_in_order(db: Session, ids: list[int]) -> list[StoredMessage]:
    rows = repo.messages_by_ids(db, ids)
    return [rows[i] for i in ids if i in rows]


def _search_regex(db: Session, session: AgentSession, archives: dict[int, Archive], only: int | None, req: SearchRequest, timeout_s: float) -> list[dict[str, Any]]:
    compiled = matching.compile_regex(req.query, req.case_sensitive)
    deadline = time.monotonic() + timeout_s
    hits: list[dict[str, Any]] = []
    try:
        for row in repo.iter_archived_texts(db, session, only):
            span = matching.find_regex(compiled, row.search_text, deadline - time.monotonic())
            if span is not None and row.archive_pk is not None:
                hits.append(_hit(archives[row.archive_pk], row, row.search_text, span, None))
                if len(hits) > req.limit:
                    return hits
        for archive in _overviews(archives, only):
            span = matching.find_regex(compiled, archive.overview, deadline - time.monotonic())
            if span is not None:
                hits.append(_hit(archive, None, archive.overview, span, None))
    except TimeoutError as exc:
        raise InvalidArgument(
            f"the regular expression took longer than {int(timeout_s * 1000)} ms; simplify it or use keyword mode",
            {"field": "query", "reason": "regex_timeout"},
        ) from exc
    return hits


def _search_ranked(db: Session, uow: UnitOfWork, session: AgentSession, archives: dict[int, Archive], only: int | None, req: SearchRequest) -> list[dict[str, Any]]:
    terms = matching.keyword_terms(req.query)
    indexed = [t for t in terms if len(t) >= uow.dialect.min_indexed_term_chars()]
    scored: list[tuple[float, dict[str, Any]]] = []
    if indexed:
        limit = req.limit + 1
        message_hits = list(_take(uow.dialect.match_messages(db, session.id, indexed, only, ranked=True), limit))
        rows = repo.messages_by_ids(db, [h.row_id for h in message_hits])
        for hit in message_hits:
            row = rows.get(hit.row_id)
            if row is not None and row.archive_pk is not None:
                span = _first_term_span(row.search_text, terms)
                scored.append((hit.score or 0.0, _hit(archives[row.archive_pk], row, row.search_text, span, hit.score)))
        for hit in _take(uow.dialect.match_overviews(db, session.id, indexed, only, ranked=True), limit):
            archive = archives.get(hit.row_id)
            if archive is not None:
                span = _first_term_span(archive.overview, terms)
                scored.append((hit.score or 0.0, _hit(archive, None, archive.overview, span, hit.score)))
    else:
        scored = _scan_score(db, session, archives, only, terms, req.limit)
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [hit for _, hit in scored]


def _scan_score(db: Session, session: AgentSession, archives: dict[int, Archive], only: int | None, terms: list[str], limit: int) -> list[tuple[float, dict[str, Any]]]:
    """Terms too short for the index: score by how many distinct terms a message holds."""
    scored: list[tuple[float, dict[str, Any]]] = []
    for row in repo.iter_archived_texts(db, session, only):
        lowered = row.search_text.casefold()
        found = sum(1 for t in terms if t.casefold() in lowered)
        if found and row.archive_pk is not None:
            span = _first_term_span(row.search_text, terms)
            scored.append((float(found), _hit(archives[row.archive_pk], row, row.search_text, span, float(found))))
    return scored


def _first_term_span(text: str, terms: list[str]) -> tuple[int, int] | None:
    lowered = text.casefold()
    spans = [(at, at + len(t)) for t in terms if (at := lowered.find(t.casefold())) >= 0]
    return min(spans) if spans else None


def _take(iterator, count: int):  # type: ignore[no-untyped-def]
    for index, item in enumerate(iterator):
        if index >= count:
            return
        yield item
