"""Ranked archive search (docs/api.md, Archives): BM25 over the session's own statistics fused
with the nearest vectors of the session's archived messages, clause by clause.

The work is bounded whatever the session's size: the candidates are the messages of the query's
most selective terms first, at most ``CANDIDATE_BUDGET`` of them, scored with the document
frequencies Phase 2 stored for the session; the vector side is a KNN of ``VECTOR_POOL`` inside the
time window. A session whose statistics are not stored yet (nothing through Phase 2) is scored
with frequencies counted over all of its candidates, as before they existed.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.archives import search_repository as repo
from app.archives.hits import (
    TimeWindow,
    first_span,
    host_time,
    message_hit,
    message_times,
)
from app.archives.repository import ArchiveHead
from app.archives.results import SearchHit
from app.db.dialects.base import CandidateRow, TextHit, TimeRange
from app.db.models import AgentSession
from app.db.uow import UnitOfWork
from app.search import ranking
from app.search.diversity import mmr_order, mmr_tokens
from app.search.text.query import Query, clauses, parse_query

VECTOR_POOL = 100
CANDIDATE_BUDGET = 1000
STATS_CACHE_SIZE = 256
FUSIONS = ("calibrated", "rrf")


@dataclass(frozen=True, slots=True)
class Scope:
    session: AgentSession
    archives: Mapping[int, ArchiveHead]
    only: int | None
    window: TimeWindow = field(default_factory=TimeWindow)

    def window_ms(self) -> TimeRange:
        return (_ms(self.window.since), _ms(self.window.until))


@dataclass(frozen=True, slots=True)
class QueryVectors:
    """The query's vector, and one per clause when ``app.search.text.query.clauses`` finds several;
    ``model``: the embedding model that made them. Only messages embedded by that model are
    compared with them (None compares every stored vector)."""

    whole: list[float]
    clauses: tuple[list[float], ...] = ()
    model: str | None = None


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


# (session pk, archive filter, the archives' (id, message count)) -> statistics, for sessions
# without stored statistics. Archived messages never change, so the key changes exactly when the
# statistics do.
_scan_cache: OrderedDict[tuple[Any, ...], ranking.SessionStats] = OrderedDict()


def session_stats(db: Session, scope: Scope, terms: Sequence[str]) -> ranking.SessionStats:
    """The session's stored statistics with the frequencies of ``terms``; else counted once."""
    if scope.only is None and (stored := repo.search_totals(db, scope.session.id)) and stored[0]:
        documents, chars = stored
        labels = [ranking.SPEAKER_KEY + t for t in terms]
        frequencies = repo.term_frequencies(db, scope.session.id, [*terms, *labels])
        speakers = ranking.speaker_words(terms, frequencies)
        return ranking.SessionStats(documents, chars / documents, frequencies, speakers)
    key = (
        scope.session.id,
        scope.only,
        tuple(sorted((a.id, a.message_count) for a in scope.archives.values())),
    )
    cached = _scan_cache.get(key)
    if cached is None:
        count, average = repo.session_text_stats(db, scope.session, scope.only)
        cached = _scan_cache[key] = ranking.SessionStats(count, average)
        while len(_scan_cache) > STATS_CACHE_SIZE:
            _scan_cache.popitem(last=False)
    return cached


@dataclass(frozen=True, slots=True)
class _Lexical:
    stats: ranking.SessionStats
    docs: list[ranking.Doc]
    rows: dict[int, CandidateRow]


def _candidates(db: Session, uow: UnitOfWork, scope: Scope, queries: Sequence[Query]) -> _Lexical:
    """The candidate messages of every clause's terms, most selective terms first."""
    literals = list(dict.fromkeys(x for q in queries for x in [*q.literals, *q.phrases]))
    dates = list(dict.fromkeys(t.literal for q in queries for t in q.terms if t.kind == "date"))
    stats = session_stats(db, scope, [*literals, *dates])
    frequencies = stats.frequencies
    budget = (
        None if frequencies is None else CANDIDATE_BUDGET
    )  # counted frequencies need every candidate
    if frequencies is not None:
        # A Chinese word of three characters or more comes first: the index answers it, and it is
        # rarer than any of its character pairs (which, below the index, cost a scan each).
        words = [
            w
            for q in queries
            for w in q.cjk_words
            if len(w) >= uow.dialect.min_indexed_term_chars()
        ]
        literals = [*dict.fromkeys(words), *sorted(literals, key=lambda t: frequencies.get(t, 0))]
    # Counted frequencies are the whole session's: then the window is applied to the hits instead.
    window = scope.window_ms() if budget else (None, None)
    rows = uow.dialect.message_candidates(
        db, scope.session.id, literals, dates, scope.only, window, budget
    )
    docs = [ranking.Doc(r.row_id, r.text, r.dates) for r in rows]
    if frequencies is None:
        counted = ranking.counted_frequencies(docs, literals)
        stats = replace(stats, speakers=ranking.speaker_words(literals, counted))
    return _Lexical(stats, docs, {r.row_id: r for r in rows})


def _clause_scores(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    query: Query,
    lexical: _Lexical,
    vector: list[float] | None,
    fusion: str,
    pool: int,
    model: str | None = None,
) -> dict[int, float]:
    scores = ranking.bm25(query, lexical.docs, lexical.stats)
    if vector is None:
        return scores
    similarity = message_similarity(db, uow, scope, vector, pool, model)
    if not similarity:
        return scores
    if fusion == "rrf":
        return ranking.reciprocal_rank_fusion([ranking.ranked(scores), ranking.ranked(similarity)])
    ideal = ranking.ideal_score(query, lexical.stats)
    days = {t.literal for t in query.terms if t.kind == "date"}
    date_led = any(day in doc.dates for doc in lexical.docs if doc.row_id in scores for day in days)
    weight = ranking.dense_weight(ranking.coverage(scores, ideal), date_led)
    return ranking.calibrated_fusion(scores, similarity, ideal, weight)


def message_similarity(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    vector: list[float],
    pool: int,
    model: str | None = None,
) -> dict[int, float]:
    """The similarity of the messages nearest the query, by whole vector or by passage
    (``ranking.blended_similarity``). A message's passages may fill several places of the passage
    KNN, so it reads twice the pool. A session with too many passages to search them all has the
    passages of its nearest half pool of messages rescored instead (each read by id from
    SQLite's vector table); the farther half's best passage
    is then bounded by the rescored ones, as a message missing from a KNN is.

    With ``model`` given, messages embedded by another model (before a change of model, until
    ``context-engine reembed`` has run) are left to the lexical side: distances between two
    models' vectors mean nothing."""
    session_pk, window = scope.session.id, scope.window_ms()
    hits = uow.dialect.nearest_messages(db, session_pk, vector, pool, window)
    nearest = uow.dialect.nearest_passages(db, session_pk, vector, 2 * pool, window)
    if model is not None:
        found = [h.row_id for h in itertools.chain(hits, nearest or ())]
        foreign = repo.embedded_by_other_models(db, found, model)
        hits = [h for h in hits if h.row_id not in foreign]
        nearest = None if nearest is None else [h for h in nearest if h.row_id not in foreign]
    whole = _similarities(hits)
    if nearest is None:
        counts = repo.with_search_facts(db, list(whole))
        rescored = {h.row_id: counts.get(h.row_id, 0) for h in hits[: pool // 2]}
        passages = uow.dialect.passage_similarities(db, rescored, vector)
        return ranking.blended_similarity(whole, passages, counts)
    passages = _similarities(nearest)
    unknown = [row_id for row_id in whole if row_id not in passages]
    counts = repo.with_search_facts(db, unknown) if passages and unknown else {}
    return ranking.blended_similarity(whole, passages, counts)


def _similarities(hits: Sequence[TextHit]) -> dict[int, float]:
    return {h.row_id: 1.0 - float(h.score or 0.0) for h in hits}


def search_ranked(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    raw: str,
    limit: int,
    vectors: QueryVectors | None,
    fusion: str,
) -> list[SearchHit]:
    parts = clauses(raw)
    queries = [parse_query(p) for p in parts]
    lexical = _candidates(db, uow, scope, queries)
    pool = max(VECTOR_POOL, limit * 3)
    clause_vectors: list[list[float] | None] = [None] * len(parts)
    if vectors is not None:
        own = len(vectors.clauses) == len(parts) and len(parts) > 1
        clause_vectors = list(vectors.clauses) if own else [vectors.whole] * len(parts)
    model = vectors.model if vectors is not None else None
    scored = [
        _clause_scores(db, uow, scope, q, lexical, v, fusion, pool, model)
        for q, v in zip(queries, clause_vectors, strict=True)
    ]
    fused = scored[0] if len(scored) == 1 else ranking.merge_clauses(scored)
    literals = list(dict.fromkeys(x for q in queries for x in [*q.literals, *q.phrases]))
    return _hits(db, scope, fused, lexical.rows, literals, limit)


def _hits(
    db: Session,
    scope: Scope,
    fused: Mapping[int, float],
    candidates: Mapping[int, CandidateRow],
    literals: list[str],
    limit: int,
) -> list[SearchHit]:
    """Up to ``limit + 1`` hits (one more tells the caller the list was cut): the best few in MMR
    order, so that a near-duplicate of a better hit steps back, then the rest in fused order; a
    message whose text repeats a better hit's word for word comes after every distinct one."""
    admitted = _admitted(db, scope, fused, candidates, literals, limit)
    head = list(itertools.islice(admitted, min(3 * (limit + 1), ranking.MMR_POOL)))
    hits: list[SearchHit] = []
    repeats: list[SearchHit] = []
    seen: set[str] = set()
    for hit, text in itertools.chain(_diversified(head, limit + 1), admitted):
        (repeats if text in seen else hits).append(hit)
        seen.add(text)
        if len(hits) > limit:
            return hits
    return (hits + repeats)[: limit + 1]


def _diversified(head: list[tuple[SearchHit, str]], count: int) -> list[tuple[SearchHit, str]]:
    """The first ``count`` hits chosen in MMR order (relevance: the fused score over the best
    one's), then the rest in fused order."""
    best = max((hit.score or 0.0 for hit, _ in head), default=0.0)
    relevance = [(hit.score or 0.0) / best if best > 0 else 0.0 for hit, _ in head]
    tokens = [mmr_tokens(text) for _, text in head]
    picked = [i for i, _ in mmr_order(relevance, tokens, ranking.MMR_LAMBDA, count)]
    rest = sorted(set(range(len(head))) - set(picked))
    return [head[i] for i in [*picked, *rest]]


def _admitted(
    db: Session,
    scope: Scope,
    fused: Mapping[int, float],
    candidates: Mapping[int, CandidateRow],
    literals: list[str],
    limit: int,
) -> Iterator[tuple[SearchHit, str]]:
    """Each hit inside the scope and its time window, with its text, in fused order; the rows
    not among the candidates are read in batches, with the times of candidates whose search facts
    Phase 2 has not written yet."""
    order = ranking.ranked(fused)
    step = 4 * (limit + 1)
    for start in range(0, len(order), step):
        batch = order[start : start + step]
        outside = [i for i in batch if i not in candidates]  # found by their vectors only
        untimed = [i for i in batch if i in candidates and candidates[i].said_at_ms is None]
        rows = repo.messages_by_ids(db, outside)
        times = message_times(db, outside + untimed)
        for row_id in batch:
            row: Any = rows.get(row_id) or candidates.get(row_id)
            if (
                row is None
                or row.archive_pk is None
                or (scope.only is not None and row.archive_pk != scope.only)
            ):
                continue
            moment = times[row_id] if row_id in times else host_time(row.said_at_ms)
            if not scope.window.admits(moment):
                continue
            text = row.search_text if hasattr(row, "search_text") else row.text
            view = _RowView(row.seq, row.role, text)
            span = first_span(text, literals)
            archive = scope.archives[row.archive_pk]
            yield message_hit(archive, view, span, round(fused[row_id], 6), moment), text


@dataclass(frozen=True, slots=True)
class _RowView:
    seq: int
    role: str
    search_text: str
