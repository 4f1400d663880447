"""Archive search in its three modes (docs/api.md, Archives).

- ``keyword``: the query's terms (``app.search.text.query``: punctuation and stop words dropped, so a
  natural question is a valid query), matched literally. Messages holding every term come first
  in conversation order; when they are fewer than the limit, messages holding some of the terms
  follow, best BM25 first. Quoted parts must occur exactly. ``caseSensitive`` keeps the literal
  whitespace-separated terms.
- ``regex``: a bounded regular expression over each message.
- ``ranked``: ``app.archives.search.ranked``.

Overviews are matched separately and returned in their own list.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from sqlalchemy.orm import Session

from app.archives.read import repository as repo
from app.archives.read.results import SearchHit
from app.archives.search import matching
from app.archives.search import repository as search_repo
from app.archives.search.hits import first_span, message_hit, overview_hit, said_in_window
from app.archives.search.ranked import FUSIONS, search_ranked
from app.archives.search.ranked_scope import QueryVectors, Scope
from app.db.uow import UnitOfWork
from app.errors import InvalidArgument
from app.search import ranking
from app.search.text.query import parse_query

__all__ = [
    "FUSIONS",
    "QueryVectors",
    "Scope",
    "match_keyword_overviews",
    "match_overviews",
    "search_keyword",
    "search_ranked",
    "search_regex",
]


MAX_BATCH = 1000
# Overviews kept normalised, least recently used first out, keyed by their text: 128 Working
# Memories (each capped in tokens, ~50 KB of Latin text) with their normalised forms take ~13 MB;
# CPython stores a string in 1, 2 or 4 bytes a character by its widest one, so Chinese takes about
# twice that. A session with more than 128 overviews cycles through the cache and is normalised on
# every ranked search (no worse than without it); a deleted archive's text leaves as others come.
FOLDED_OVERVIEWS_KEPT = 128


def search_keyword(
    db: Session, uow: UnitOfWork, scope: Scope, raw: str, limit: int, case_sensitive: bool
) -> list[SearchHit]:
    query = parse_query(raw)
    literals = query.whole_literals
    if case_sensitive or not literals:
        literals = matching.keyword_terms(raw)  # the literal whitespace-separated terms
    hits: list[SearchHit] = []
    matched = (
        (row, span)
        for row in _all_terms_rows(db, uow, scope, literals, case_sensitive, limit + 1)
        if row.archive_pk is not None
        and (span := matching.find_keywords(row.search_text, literals, case_sensitive))
    )
    for row, span, moment in said_in_window(db, matched, scope.window, limit + 1):
        hits.append(message_hit(scope.archives[row.archive_pk], row, span, None, moment, "all"))
        if len(hits) > limit:
            return hits
    if case_sensitive or len(query.literals) < 2 or not query.terms or query.phrases:
        return hits  # quoted parts are exact: nothing partial
    # Fewer messages hold every term than asked for: the best messages holding some of them follow.
    found = {h.seq for h in hits}
    for hit in search_ranked(db, uow, scope, raw, limit + len(hits), None, "calibrated"):
        if hit.seq not in found:
            hits.append(replace(hit, score=None, match="partial"))
            if len(hits) > limit:
                break
    return hits


def _all_terms_rows(
    db: Session, uow: UnitOfWork, scope: Scope, terms: list[str], case_sensitive: bool, want: int
) -> Iterator[Any]:
    """Rows that may hold every term, in order: from the index when a term is long enough (or has
    two characters, where the backend's index can say), else a scan. Read by id in batches that
    start at ``want`` (most searches stop there) and grow four times each."""
    session, only = scope.session, scope.only
    indexed = [t for t in terms if len(t) >= uow.storage.text.min_indexed_term_chars()]
    ids: Iterator[int]
    if indexed:
        ids = (
            hit.row_id
            for hit in uow.storage.text.match_messages(db, session.id, indexed, only, ranked=False)
        )
    elif (
        short := uow.storage.text.short_term_message_ids(db, session.id, terms, only)
    ) is not None:
        ids = iter(short)
    elif all(t.isascii() for t in terms):
        ids = iter(uow.storage.text.scan_message_ids(db, session.id, terms, only, case_sensitive))
    else:
        yield from search_repo.iter_archived_texts(db, session, only)
        return
    batch: list[int] = []
    size = max(want, 8)
    for row_id in ids:
        batch.append(row_id)
        if len(batch) >= size:
            yield from _rows_in_order(db, batch)
            batch, size = [], min(size * 4, MAX_BATCH)
    yield from _rows_in_order(db, batch)


def _rows_in_order(db: Session, ids: list[int]) -> list[Any]:
    rows = search_repo.messages_by_ids(db, ids)
    return [rows[i] for i in ids if i in rows]


def search_regex(
    db: Session, scope: Scope, pattern: str, limit: int, case_sensitive: bool, timeout_s: float
) -> tuple[list[SearchHit], list[SearchHit]]:
    compiled = matching.compile_regex(pattern, case_sensitive)
    deadline = time.monotonic() + timeout_s
    hits: list[SearchHit] = []
    overviews: list[SearchHit] = []
    try:
        matched = (
            (row, span)
            for row in search_repo.iter_archived_texts(db, scope.session, scope.only)
            if (span := matching.find_regex(compiled, row.search_text, deadline - time.monotonic()))
            and row.archive_pk is not None
        )
        for row, span, moment in said_in_window(db, matched, scope.window, limit + 1):
            hits.append(message_hit(scope.archives[row.archive_pk], row, span, None, moment))
            if len(hits) > limit:
                break
        for pk, text in _overview_texts(db, scope).items():
            span = matching.find_regex(compiled, text, deadline - time.monotonic())
            if span is not None:
                overviews.append(overview_hit(scope.archives[pk], span, None, text))
    except TimeoutError as exc:
        raise InvalidArgument(
            f"the regular expression took longer than {int(timeout_s * 1000)} ms; simplify it or use keyword mode",
            {"field": "query", "reason": "regex_timeout"},
        ) from exc
    return hits, overviews


def _overview_texts(db: Session, scope: Scope) -> dict[int, str]:
    """The non-empty overviews in the scope, by archive, oldest first."""
    return repo.overview_texts(db, scope.session, None, scope.only)


def match_keyword_overviews(
    db: Session, uow: UnitOfWork, scope: Scope, raw: str, case_sensitive: bool, limit: int
) -> list[SearchHit]:
    """The first ``limit`` overviews holding every term of a keyword search, oldest first. The
    texts read are those of the archives the overview index finds (every term long enough for
    it), in growing batches until enough hold the terms; else every overview."""
    query = parse_query(raw)
    literals = query.whole_literals
    if case_sensitive or not literals:
        literals = matching.keyword_terms(raw)
    if not (
        literals and all(len(t) >= uow.storage.text.min_indexed_term_chars() for t in literals)
    ):
        return _holding(scope, _overview_texts(db, scope), literals, case_sensitive)[:limit]
    found_by_index = uow.storage.text.match_overviews(
        db, scope.session.id, literals, scope.only, ranked=False
    )
    candidates = sorted(
        (hit.row_id for hit in found_by_index), key=lambda pk: scope.archives[pk].archive_index
    )
    found: list[SearchHit] = []
    # A term common in the session is in nearly every overview, each a Working Memory of up to
    # ~50 KB: reading and matching all of them was most of the search in a long session. The index
    # finds candidates only (its tokens are not the literals), so batches grow fourfold each round.
    start, size = 0, max(limit, 1)
    while start < len(candidates) and len(found) < limit:
        batch = candidates[start : start + size]
        texts = repo.overview_texts(db, scope.session, batch, scope.only)
        found += _holding(scope, texts, literals, case_sensitive)
        start, size = start + size, size * 4
    return found[:limit]


def _holding(
    scope: Scope, texts: dict[int, str], literals: list[str], case_sensitive: bool
) -> list[SearchHit]:
    found = [
        (pk, text, matching.find_keywords(text, literals, case_sensitive))
        for pk, text in texts.items()
    ]
    return [
        overview_hit(scope.archives[pk], span, None, text)
        for pk, text, span in found
        if span is not None
    ]


@functools.lru_cache(maxsize=FOLDED_OVERVIEWS_KEPT)
def _folded_overview(text: str) -> str:
    """An overview as ranked search counts terms in it. Kept for the latest overviews read: each
    is a Working Memory of up to ~50 KB that every ranked search of its session scores, and
    normalising it again each time was a visible part of the search. A pure function of the text."""
    return ranking.folded(text)


def match_overviews(db: Session, scope: Scope, raw: str, limit: int) -> list[SearchHit]:
    """Overviews for ranked search: the best ``limit`` by BM25 among the session's overviews."""
    query = parse_query(raw)
    literals = list(dict.fromkeys([*query.literals, *query.phrases])) or matching.keyword_terms(raw)
    texts = _overview_texts(db, scope)
    docs = [ranking.Doc(pk, text, folded=_folded_overview(text)) for pk, text in texts.items()]
    average = sum(len(text) for text in texts.values()) / max(len(texts), 1)
    scores = ranking.bm25(query, docs, ranking.SessionStats(len(texts), average))
    return [
        overview_hit(
            scope.archives[i], first_span(texts[i], literals), round(scores[i], 6), texts[i]
        )
        for i in ranking.ranked(scores)[:limit]
    ]
