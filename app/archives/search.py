"""Archive search in its three modes (api.md, Archives; issue 10).

- ``keyword``: the query's terms (``app.core.query``: punctuation and stop words dropped, so a
  natural question is a valid query), matched literally. Messages holding every term come first
  in conversation order; when they are fewer than the limit, messages holding some of the terms
  follow, best BM25 first. Quoted parts must occur exactly. ``caseSensitive`` keeps the literal
  whitespace-separated terms.
- ``regex``: a bounded regular expression over each message.
- ``ranked``: BM25 over the session's own statistics fused with the nearest vectors of the
  session's archived messages (computed in Phase 2) when a query vector is given.

Overviews are matched separately and returned in their own list.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.archives import matching, ranking
from app.archives import repository as repo
from app.archives.hits import (
    TimeWindow,
    first_span,
    host_time,
    message_hit,
    overview_hit,
    time_of_body,
)
from app.core.query import Query, parse_query
from app.db.models import AgentSession, Archive
from app.db.uow import UnitOfWork
from app.errors import InvalidArgument

VECTOR_POOL = 100
STATS_CACHE_SIZE = 256
FUSIONS = ("calibrated", "rrf")


@dataclass(frozen=True, slots=True)
class Scope:
    session: AgentSession
    archives: dict[int, Archive]
    only: int | None
    window: TimeWindow = field(default_factory=TimeWindow)


# (session pk, archive filter, the archives' (id, message count)) -> statistics. Archived messages
# never change once archived, so the key changes exactly when the statistics do.
_stats_cache: OrderedDict[tuple[Any, ...], ranking.SessionStats] = OrderedDict()


def session_stats(db: Session, scope: Scope) -> ranking.SessionStats:
    key = (scope.session.id, scope.only, tuple(sorted((a.id, a.message_count) for a in scope.archives.values())))
    cached = _stats_cache.get(key)
    if cached is None:
        count, average = repo.session_text_stats(db, scope.session, scope.only)
        cached = _stats_cache[key] = ranking.SessionStats(count, average)
        while len(_stats_cache) > STATS_CACHE_SIZE:
            _stats_cache.popitem(last=False)
    return cached


def lexical_scores(db: Session, uow: UnitOfWork, scope: Scope, query: Query) -> tuple[dict[int, float], dict[int, Any], float]:
    """BM25 of every archived message of the session that holds a term, and the candidate rows."""
    literals = list(dict.fromkeys([*query.literals, *query.phrases]))
    dates = [t.literal for t in query.terms if t.kind == "date"]
    rows = uow.dialect.message_candidates(db, scope.session.id, literals, dates, scope.only)
    docs = [ranking.Doc(r.row_id, r.text, r.dates) for r in rows]
    stats = session_stats(db, scope)
    scores = ranking.bm25(query, docs, stats)
    return scores, {r.row_id: r for r in rows}, ranking.ideal_score(query, stats)


def search_ranked(db: Session, uow: UnitOfWork, scope: Scope, query: Query, limit: int,
                  vector: list[float] | None, fusion: str) -> list[dict[str, Any]]:
    lexical, candidates, ideal = lexical_scores(db, uow, scope, query)
    similarity: dict[int, float] = {}
    if vector is not None:
        hits = uow.dialect.nearest_messages(db, scope.session.id, vector, max(VECTOR_POOL, limit * 3))
        similarity = {h.row_id: 1.0 - float(h.score or 0.0) for h in hits}
    if similarity and fusion == "rrf":
        fused = ranking.reciprocal_rank_fusion([ranking.ranked(lexical), ranking.ranked(similarity)])
    elif similarity:
        fused = ranking.calibrated_fusion(lexical, similarity, ideal)
    else:
        fused = lexical
    literals = [*query.literals, *query.phrases]
    hits: list[dict[str, Any]] = []
    order = ranking.ranked(fused)
    for start in range(0, len(order), 4 * (limit + 1)):
        batch = order[start : start + 4 * (limit + 1)]
        rows = repo.messages_by_ids(db, [i for i in batch if i not in candidates])
        for row_id in batch:
            row = rows.get(row_id) or candidates.get(row_id)
            if row is None or row.archive_pk is None or (scope.only is not None and row.archive_pk != scope.only):
                continue
            moment = _moment(row)
            if not scope.window.admits(moment):
                continue
            text = row.search_text if hasattr(row, "search_text") else row.text
            hits.append(_ranked_hit(scope.archives[row.archive_pk], row, text, literals, fused[row_id], moment))
            if len(hits) > limit:
                return hits
    return hits


def _moment(row: Any) -> Any:
    if hasattr(row, "body"):
        return time_of_body(row.body, row.created_at)
    return host_time(row.host_time)


def _ranked_hit(archive: Archive, row: Any, text: str, literals: list[str], score: float, moment: Any) -> dict[str, Any]:
    view = _RowView(row.seq, row.role, text)
    return message_hit(archive, view, first_span(text, literals), round(score, 6), moment)


@dataclass(frozen=True, slots=True)
class _RowView:
    seq: int
    role: str
    search_text: str


def search_keyword(db: Session, uow: UnitOfWork, scope: Scope, raw: str, limit: int, case_sensitive: bool) -> list[dict[str, Any]]:
    query = parse_query(raw)
    literals = query.whole_literals
    if case_sensitive or not literals:
        literals = matching.keyword_terms(raw)  # the literal whitespace-separated terms
    hits: list[dict[str, Any]] = []
    for row in _all_terms_rows(db, uow, scope, literals, case_sensitive):
        span = matching.find_keywords(row.search_text, literals, case_sensitive)
        moment = time_of_body(row.body, row.created_at)
        if span is not None and row.archive_pk is not None and scope.window.admits(moment):
            hits.append({**message_hit(scope.archives[row.archive_pk], row, span, None, moment), "match": "all"})
            if len(hits) > limit:
                return hits
    if case_sensitive or len(query.literals) < 2 or not query.terms or query.phrases:
        return hits  # quoted parts are exact: nothing partial
    # Fewer messages hold every term than asked for: the best messages holding some of them follow.
    found = {h["seq"] for h in hits}
    for hit in search_ranked(db, uow, scope, query, limit + len(hits), None, "calibrated"):
        if hit["seq"] not in found:
            hits.append({**hit, "score": None, "match": "partial"})
            if len(hits) > limit:
                break
    return hits


def _all_terms_rows(db: Session, uow: UnitOfWork, scope: Scope, terms: list[str], case_sensitive: bool):  # type: ignore[no-untyped-def]
    """Rows that may hold every term, in order: from the index when a term is long enough, else a scan."""
    session, only = scope.session, scope.only
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


def _rows_in_order(db: Session, ids: list[int]) -> list[Any]:
    rows = repo.messages_by_ids(db, ids)
    return [rows[i] for i in ids if i in rows]


def search_regex(db: Session, scope: Scope, pattern: str, limit: int, case_sensitive: bool, timeout_s: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    compiled = matching.compile_regex(pattern, case_sensitive)
    deadline = time.monotonic() + timeout_s
    hits: list[dict[str, Any]] = []
    overviews: list[dict[str, Any]] = []
    try:
        for row in repo.iter_archived_texts(db, scope.session, scope.only):
            span = matching.find_regex(compiled, row.search_text, deadline - time.monotonic())
            moment = time_of_body(row.body, row.created_at) if span is not None else None
            if span is not None and row.archive_pk is not None and scope.window.admits(moment):
                hits.append(message_hit(scope.archives[row.archive_pk], row, span, None, moment))
                if len(hits) > limit:
                    break
        for archive in _overviews(scope):
            span = matching.find_regex(compiled, archive.overview, deadline - time.monotonic())
            if span is not None:
                overviews.append(overview_hit(archive, span, None))
    except TimeoutError as exc:
        raise InvalidArgument(
            f"the regular expression took longer than {int(timeout_s * 1000)} ms; simplify it or use keyword mode",
            {"field": "query", "reason": "regex_timeout"},
        ) from exc
    return hits, overviews


def _overviews(scope: Scope) -> list[Archive]:
    return [a for a in scope.archives.values() if a.overview and (scope.only is None or a.id == scope.only)]


def match_overviews(scope: Scope, raw: str, mode: str, case_sensitive: bool) -> list[dict[str, Any]]:
    """Overviews for keyword and ranked search: every term (keyword) or BM25 among the overviews."""
    query = parse_query(raw)
    literals = list(dict.fromkeys([*query.literals, *query.phrases])) or matching.keyword_terms(raw)
    if mode == "keyword":
        literals = query.whole_literals
        if case_sensitive or not literals:
            literals = matching.keyword_terms(raw)
        found = [(a, matching.find_keywords(a.overview, literals, case_sensitive)) for a in _overviews(scope)]
        return [overview_hit(a, span, None) for a, span in found if span is not None]
    archives = _overviews(scope)
    docs = [ranking.Doc(a.id, a.overview) for a in archives]
    average = sum(len(a.overview) for a in archives) / max(len(archives), 1)
    scores = ranking.bm25(query, docs, ranking.SessionStats(len(archives), average))
    by_id = {a.id: a for a in archives}
    return [overview_hit(by_id[i], first_span(by_id[i].overview, literals), round(scores[i], 6)) for i in ranking.ranked(scores)]
